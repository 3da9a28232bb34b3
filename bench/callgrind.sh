#!/usr/bin/env bash
# bench/callgrind.sh BENCH_BINARY [ITERS] [FILTER] [-- BENCH_ARGS...]
# Instructions per event for every benchmark in BENCH_BINARY (or those
# whose name contains FILTER; FILTER =NAME[,NAME...]: those named),
# counted by callgrind around the measured call only (the binary toggles
# collection and dumps the counts after each benchmark; see
# bench/bench.h). BENCH_ARGS, e.g. `--keys FILE`, go to the binary. The
# benchmarks run in one process, one after another, each on state of its
# own, so a benchmark's count does not depend on which others ran.
# Counts are deterministic: the same binary and inputs give the same
# figure.
set -euo pipefail
bin=$1; shift
pos=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do pos+=("$1"); shift; done
[ $# -gt 0 ] && shift # the --; what is left goes to the binary
iters=${pos[0]:-200000}; filter=${pos[1]:-}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind not found" >&2; exit 1; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
names=()
while IFS= read -r name; do
  if [[ "$filter" == =* ]]; then [[ ",${filter#=}," == *",$name,"* ]] || continue
  elif [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then continue; fi
  names+=(--name "$name")
done < <("$bin" "$@" --list)
printf '%-40s %14s %12s %10s\n' benchmark instructions events instr/event
[ ${#names[@]} -gt 0 ] || exit 0
valgrind --tool=callgrind --collect-atstart=no --instr-atstart=no \
  --callgrind-out-file="$out/cg" "$bin" "$@" "${names[@]}" \
  --callgrind "$iters" 2>/dev/null > "$out/events"
# One dump per benchmark: "desc: Trigger: Client Request: NAME", then its
# totals; the binary printed "NAME events N" for each, in order.
for f in "$out"/cg.*; do
  awk '/^desc: Trigger: Client Request: /{sub(/^desc: Trigger: Client Request: /, ""); n=$0}
       /^(summary|totals):/{print n "\t" $2; exit}' "$f"
done > "$out/ir"
awk -F'\t' 'NR==FNR{ir[$1]=$2; next}
  match($0, / +events [0-9]+$/){n=substr($0, 1, RSTART-1); ev=$0; sub(/.* events /, "", ev)
    if (!(n in ir)) {print "callgrind.sh: no count for " n > "/dev/stderr"; bad=1; next}
    printf "%-40s %14d %12d %10.2f\n", n, ir[n], ev, ir[n]/ev}
  END{exit bad}' "$out/ir" "$out/events"
