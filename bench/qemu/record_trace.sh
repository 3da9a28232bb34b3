#!/usr/bin/env bash
# bench/qemu/record_trace.sh [BUILD_DIR] [INPUT_BYTES]
#
# Records a real event stream for the model benchmarks' real-data figures:
# gzip -6 of generated text under qemu-x86_64 with the hwprof plugin,
# record=BUILD_DIR/gzip.hwpt (docs/trace-format.md; ~3.4 bytes per
# instruction, so it stays out of git). Replay it through any model with
#   BUILD_DIR/examples/replay/hwprof-replay BUILD_DIR/gzip.hwpt models=all
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
bench_setup "${1:-$root/build}" "${2:-150000}" gzip-input.txt
qemu-x86_64 -plugin "$plugin,record=$build/gzip.hwpt,report=$build/gzip-record.txt" \
  /bin/gzip -c -6 "$in" > /dev/null
"$build/examples/replay/hwprof-replay" --check "$build/gzip.hwpt"
ls -l "$build/gzip.hwpt"
