# bench/qemu/common.sh: sourced by the scripts beside it (after setting
# `here` to this directory). bench_setup BUILD_DIR BYTES NAME sets root,
# build, plugin (libhwprof-tcg.so), peer (libexact-tcg.so) and in, a
# generated text input of BYTES bytes at BUILD_DIR/NAME
# (tests/make_input.py: nothing large is committed).
root=$(cd "$here/../.." && pwd)
bench_setup() {
  build=$1
  plugin=$build/examples/qemu/libhwprof-tcg.so
  peer=$build/examples/qemu/libexact-tcg.so
  [ -f "$plugin" ] && [ -f "$peer" ] || { echo "build first: meson compile -C $build" >&2; exit 1; }
  in=$build/$3
  python3 "$root/examples/qemu/tests/make_input.py" "$in" "$2"
}
