#!/usr/bin/env bash
# bench/callgrind.sh BENCH_BINARY [ITERS] [FILTER] [-- BENCH_ARGS...]
# Instructions per event for every benchmark in BENCH_BINARY (or those
# whose name contains FILTER; BENCH_ARGS, e.g. `--keys FILE`, go to every
# run of the binary), counted by callgrind around the measured
# call only (the binary toggles collection; see bench/bench.h). Counts are
# deterministic: the same binary and inputs give the same figure.
set -euo pipefail
bin=$1; shift
pos=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do pos+=("$1"); shift; done
[ $# -gt 0 ] && shift # the --; what is left goes to the binary
iters=${pos[0]:-200000}; filter=${pos[1]:-}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found" >&2; exit 1; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
printf '%-40s %14s %12s %10s\n' benchmark instructions events instr/event
"$bin" "$@" --list | while IFS= read -r name; do
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  events=$(valgrind --tool=callgrind --collect-atstart=no \
             --callgrind-out-file="$out/cg" "$bin" "$@" --name "$name" \
             --callgrind "$iters" 2>/dev/null | awk '/ events /{print $NF}')
  ir=$(awk '/^(summary|totals):/{print $2; exit}' "$out/cg")
  awk -v n="$name" -v ir="$ir" -v ev="$events" \
      'BEGIN{printf "%-40s %14d %12d %10.2f\n", n, ir, ev, ir/ev}'
done
