#!/usr/bin/env bash
# bench/core/cg_compare.sh BUILD_DIR [NAME...]
#
# core.h against Valgrind's cachegrind on real programs (gzip -n -6 of
# 128 KiB of text, bzip2 -1 of 150 KB, python3.11 -c json.dumps: the
# programs of bench/real_trace.sh), each run the same way (pid 2 of a
# fresh PID namespace, fixed environment and paths: vg_fixture.py):
#   1. the hwprof Valgrind tool records the instruction stream (record=);
#   2. cachegrind --cache-sim=yes --branch-sim=yes with explicit caches;
#   3. callgrind with the same simulation and --dump-instr=yes, for the
#      per-instruction figures cachegrind does not give (it reports per
#      source line, and these binaries have no line tables);
#   4. cg_core (bench/core/cg_core.c: core.h configured like cachegrind)
#      over the trace;
# then cg_compare.py prints totals and the top-20 PCs by each kind of miss.
# Work files stay in BUILD_DIR/cg (traces ~4 bytes per instruction).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/programs.sh"
programs_args "bench/core/cg_compare.sh BUILD_DIR [NAME...]" bench/core/cg_core cg "$@"
cgcore=$build/bench/core/cg_core
caches=(--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64)
programs_setup "$root" "$work"
for n in "${names[@]}"; do
  eval "prog=(${cmd[$n]})"
  programs_record "$libdir" "$work" "$n"
  [ -s "$work/$n.cg.out" ] ||
    nice python3 "$here/cg_run.py" "$valgrind" "$libdir" cachegrind \
      --cache-sim=yes --branch-sim=yes "${caches[@]}" \
      --vex-guest-chase=no "--cachegrind-out-file=$work/$n.cg.out" -- "${prog[@]}"
  [ -s "$work/$n.clg.out" ] ||
    nice python3 "$here/cg_run.py" "$valgrind" "$libdir" callgrind \
      --cache-sim=yes --branch-sim=yes "${caches[@]}" --dump-instr=yes \
      --dump-line=no --compress-pos=no --compress-strings=no \
      "--callgrind-out-file=$work/$n.clg.out" -- "${prog[@]}"
  [ -s "$work/$n.core.txt" ] || nice "$cgcore" "$work/$n.hwpt" "${caches[@]}" > "$work/$n.core.txt"
  python3 "$here/cg_compare.py" "$n" "$work/$n.cg.out" "$work/$n.clg.out" "$work/$n.core.txt"
done
