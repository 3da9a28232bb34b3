#!/usr/bin/env bash
# Builds qemu-x86_64 (user mode) with TCG plugins from a Debian source
# package, so the plugin's newer-API builds can profile user-mode programs:
# Debian's own qemu-user of those versions is static and cannot load
# plugins. Only the x86_64-linux-user target is built.
#
#   bash examples/qemu/build-qemu.sh [10.0|11.1]    (prints the binary's path)
#
#   10.0 (default)  bookworm-backports' QEMU 10.0 (plugin API 4), cached in
#                   ${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}
#   11.1            trixie-backports' QEMU 11.1 (plugin API 7), cached in
#                   ${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}
#
# Each cache holds src/, build/ and bin/qemu-x86_64. Needs root for apt (a
# deb-src line, the build dependencies). Takes long on two cores: run it
# under nice.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ver=${1:-10.0}
case $ver in
10.0) cache=${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}
      suite=bookworm-backports ;;
11.1) cache=${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}
      suite=trixie-backports ;;
*) echo "build-qemu: unknown QEMU version '$ver' (10.0 or 11.1)" >&2; exit 2 ;;
esac
bin=$cache/bin/qemu-x86_64
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "$bin"; exit 0
fi
apt_get() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 "$@"; }

# 10.0: the QEMU 10 that install-qemu10.sh installs from bookworm-backports
# picks the source version. 11.1: trixie-backports' source alone (a deb-src
# line installs nothing of Debian 13).
if [ "$ver" = 10.0 ]; then
    bash "$here/install-qemu10.sh" >&2
    want="qemu=$(dpkg-query -W -f='${Version}' qemu-system-x86)" have='~bpo12'
else
    want="qemu/$suite" have='1:11\.1\.'
fi
# The suite's deb-src line, unless apt already knows a source of that
# version (another suite's deb-src line is not enough).
if ! apt-cache showsrc qemu 2>/dev/null | grep -q "^Version: .*$have"; then
    cat > "/etc/apt/sources.list.d/hwprof-src-$suite.sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $suite
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt_get update -qq
fi
# Build dependencies of the x86_64-linux-user target with plugins (not the
# whole package's list: no system emulators, firmware or docs).
apt_get install -y -qq dpkg-dev ninja-build meson python3-venv pkg-config \
    libglib2.0-dev flex bison >/dev/null
mkdir -p "$cache/src"
cd "$cache/src"
if ! ls qemu-*/configure >/dev/null 2>&1; then
    apt-get source -qq --download-only "$want" >&2 || true
    if ls qemu_*.dsc >/dev/null 2>&1; then
        dpkg-source -x --skip-debianization qemu_*.dsc >&2
    else
        # Some mirrors carry the upstream tarball but not the package's
        # .dsc/.debian.tar.xz; the user-mode build needs only upstream
        # source, checked here against the checksum in apt's source index.
        orig=
        for f in qemu_*.orig.tar.xz; do [ -f "$f" ] && orig=$f && break; done
        if [ -z "$orig" ]; then
            echo "build-qemu: the mirror serves neither the source package nor the upstream" \
                 "tarball of $want (apt-get source failed above): QEMU $ver cannot be built here" >&2
            exit 1
        fi
        # All of the index is read (no early exit): an early exit would end
        # apt-cache with SIGPIPE, which pipefail turns into a failure.
        sum=$(apt-cache showsrc qemu | awk -v f="$orig" '$3 == f && length($1) == 64 && !s {s = $1} END {print s}')
        [ -n "$sum" ] || { echo "build-qemu: no checksum for $orig in apt's index" >&2; exit 1; }
        echo "$sum  $orig" | sha256sum -c --quiet >&2
        tar -xf "$orig"
    fi
fi
# QEMU 10's and 11's configure need meson >= 1.5 (Debian 12 has 1.0) and
# pycotap. The backports packages are unpacked into the cache rather than
# installed, so the system's meson (what hwprof itself builds with) stays.
if [ ! -d "$cache/meson/usr/lib/python3/dist-packages/mesonbuild" ]; then
    mkdir -p "$cache/meson"
    (cd "$cache/meson" && apt-get download -qq meson/bookworm-backports \
        python3-pycotap/bookworm-backports >&2 \
        && for d in *.deb; do dpkg -x "$d" .; done)
fi
export PYTHONPATH=$cache/meson/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}
srcdir=$(dirname "$(ls "$cache"/src/qemu-*/configure | sed -n 1p)")
mkdir -p "$cache/build"
cd "$cache/build"
if [ ! -f build.ninja ]; then
    "$srcdir/configure" --python=/usr/bin/python3 --target-list=x86_64-linux-user --enable-plugins \
        --disable-docs --disable-install-blobs --disable-werror --disable-tools --disable-guest-agent \
        --without-default-features --prefix="$cache" >&2
fi
nice ninja -j"$(nproc)" qemu-x86_64 >&2
mkdir -p "$cache/bin"
cp qemu-x86_64 "$bin.tmp" && mv "$bin.tmp" "$bin"
"$bin" --version >&2
echo "$bin"
