#!/usr/bin/env bash
# bench/qemu/hyperfine.sh [BUILD_DIR] [INPUT_BYTES] [RUNS]
#
# Wall time of gzip under qemu-x86_64, in one hyperfine run:
#   plain            QEMU alone
#   peer-exact       bench/qemu/exact_tcg.c: exact hash tables of every TB,
#                    every path and every (load pc, value) -- the same
#                    events hwprof's value models observe
#   hwprof-values    all five models (loads with values, block mode)
#   peer-cf          the peer without values (TB and path tables only)
#   hwprof-cf        the control-flow models only: ProfileMe, RAP on pc,
#                    path profiler + phase detector (no memory callbacks)
#   hwprof-none      the plugin's callbacks and event stream, no model:
#                    what QEMU's callbacks cost by themselves
# Writes a markdown table to $BUILD_DIR/hyperfine-qemu.md
# and JSON beside it. The input is generated (tests/make_input.py), so
# nothing large is committed.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
bytes=${2:-1000000}
runs=${3:-5}
plugin=$build/examples/qemu/libhwprof-tcg.so
peer=$build/examples/qemu/libexact-tcg.so
[ -f "$plugin" ] && [ -f "$peer" ] || { echo "build first: meson compile -C $build" >&2; exit 1; }
in=$build/hyperfine-input.txt
python3 "$root/examples/qemu/tests/make_input.py" "$in" "$bytes"
gz="/bin/gzip -c -6 $in"
q=qemu-x86_64
hyperfine --warmup 1 --runs "$runs" --style basic \
  --export-markdown "$build/hyperfine-qemu.md" --export-json "$build/hyperfine-qemu.json" \
  -n plain "$q $gz > /dev/null" \
  -n peer-exact "$q -plugin $peer,values=on,out=/dev/null $gz > /dev/null" \
  -n hwprof-values "$q -plugin $plugin,models=all,report=/dev/null $gz > /dev/null" \
  -n peer-cf "$q -plugin $peer,out=/dev/null $gz > /dev/null" \
  -n hwprof-cf "$q -plugin $plugin,pm=on,rap=on,path=on,report=/dev/null $gz > /dev/null" \
  -n hwprof-none "$q -plugin $plugin,report=/dev/null $gz > /dev/null"
cat "$build/hyperfine-qemu.md"
