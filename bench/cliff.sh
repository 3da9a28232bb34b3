#!/usr/bin/env bash
# bench/cliff.sh BUILD_DIR [MAX_LOG2] [OUT_DIR]: the cache cliff. For
# 2^8, 2^10, ... 2^MAX_LOG2 distinct keys (default 26; each step 4x),
# hwprof-bench times RAP, Space-Saving, count-min and the exact hash count
# on a uniform key stream, and stratified H[P] and the exact pair count on
# the matching pair stream (up to 2^22 distinct pairs: the exact pair map
# takes 40 bytes a slot), then counts instructions per event under
# callgrind. Writes OUT_DIR/cliff.csv, one JSON per point and
# OUT_DIR/cliff.svg (bench/plot_cliff.py, python3 only); prints the table.
#
# Streams: max(2^22, 2 x distinct) events, seeded. Instructions/event come
# from 2^20-event streams over the same number of distinct keys (callgrind
# runs ~50x slower), so past 2^20 distinct keys they count a stream of
# mostly first sightings. Env: REPS (default 5), STEP (log2 step, 2),
# GEN (uniform or zipf:S, default uniform), MIN_EVENTS (2^22: fewer makes
# a quick check, not figures), NO_CALLGRIND=1 to skip.
# The largest point needs ~4 GB of memory and some minutes; run nice'd.
set -euo pipefail
build=$(cd "${1:?usage: bench/cliff.sh BUILD_DIR [MAX_LOG2] [OUT_DIR]}" && pwd)
max=${2:-26}
out=${3:-$build/cliff}
reps=${REPS:-5}
step=${STEP:-2}
gen=${GEN:-uniform}
min_events=${MIN_EVENTS:-$((1 << 22))}
src=$(cd "$(dirname "$0")/.." && pwd)
bench=$build/bench/harness/hwprof-bench
[ -x "$bench" ] || ninja -C "$build" bench/harness/hwprof-bench
case $max in ''|*[!0-9]*) echo "cliff.sh: MAX_LOG2 must be a number, got \"$max\"" >&2; exit 2;; esac
[ "$max" -ge 8 ] && [ "$max" -le 30 ] || { echo "cliff.sh: MAX_LOG2 must be in 8..30, got $max" >&2; exit 2; }
mkdir -p "$out"
csv=$out/cliff.csv
echo "log2_distinct,target,stream,events,median_ns,q1_ns,q3_ns,min_ns,max_ns,instr_per_event" > "$csv"
cg=$(command -v valgrind || true)
[ -n "${NO_CALLGRIND:-}" ] && cg=
for ((k = 8; k <= max; k += step)); do
  events=$(( (1 << k) * 2 > min_events ? (1 << k) * 2 : min_events ))
  targets=(rap spacesaving countmin exact)
  [ "$k" -le 22 ] && targets+=(strat)
  echo "== 2^$k distinct, $events events: ${targets[*]}" >&2
  nice "$bench" --quiet --gen "$gen" --distinct "2^$k" --events "$events" --reps "$reps" \
      --min-time 0.02 "${targets[@]}" --json > "$out/cliff-$k.json"
  dumps=()
  if [ -n "$cg" ]; then
    cgev=$(( events < (1 << 20) ? events : (1 << 20) ))
    rm -f "$out"/cg-$k.out*
    nice valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out/cg-$k.out" \
        "$bench" --quiet --callgrind --gen "$gen" --distinct "2^$k" --events "$cgev" \
        "${targets[@]}" > "$out/cg-$k.txt" 2>/dev/null
    dumps=("$out/cg-$k.txt" "$out"/cg-$k.out*)
  fi
  python3 "$src/bench/plot_cliff.py" row "$out/cliff-$k.json" "$k" "${dumps[@]}" >> "$csv"
  rm -f "$out"/cg-$k.out*
done
python3 "$src/bench/plot_cliff.py" plot "$csv" "$out/cliff.svg"
column -s, -t < "$csv"
echo "wrote $csv and $out/cliff.svg" >&2
