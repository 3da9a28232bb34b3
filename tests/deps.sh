# tests/deps.sh: sourced by tests/run.sh and examples/demo.sh. Installs the
# Debian 12 packages hwprof's build, tests, benchmarks and hosts use, when
# they are missing; `hwp_install_deps --demo` only what examples/demo.sh
# needs (the build tools and QEMU's user mode). Returns non-zero if the
# install fails.
hwp_install_deps() {
  local need=() sudo="" lean=()
  command -v meson >/dev/null || need+=(meson)
  command -v ninja >/dev/null || need+=(ninja-build)
  command -v gcc >/dev/null || need+=(gcc)
  [ -f /usr/include/stdio.h ] || need+=(libc6-dev)          # gcc only recommends it
  command -v qemu-x86_64 >/dev/null || need+=(qemu-user)
  command -v gzip >/dev/null || need+=(gzip)
  if [ "${1:-}" = "--demo" ]; then
    lean=(--no-install-recommends)                          # gcc and qemu-user need none
  else
    command -v g++ >/dev/null || need+=(g++)
    command -v clang >/dev/null || need+=(clang)
    command -v valgrind >/dev/null || need+=(valgrind)
    command -v hyperfine >/dev/null || need+=(hyperfine)
    command -v bzip2 >/dev/null || need+=(bzip2)
    [ -x /usr/bin/python3.11 ] || need+=(python3.11)
    command -v patch >/dev/null || need+=(patch)              # examples/lua
    command -v dpkg-source >/dev/null || need+=(dpkg-dev)     # apt-get source
    command -v luajit >/dev/null || need+=(luajit)            # bench/lua
    command -v chromium >/dev/null || need+=(chromium)        # hwprof-report --html test
    command -v go >/dev/null || need+=(golang-go)             # hwprof-report --pprof test
    command -v gcovr >/dev/null || need+=(gcovr)              # tests/coverage.sh
    /usr/bin/python3 -c "import numpy" 2>/dev/null || need+=(python3-numpy) # bench/pathprof/simpoint.py
  fi
  [ ${#need[@]} -eq 0 ] && return 0
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "installing ${need[*]}"
  $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${lean[@]}" "${need[@]}" >/dev/null
}
