#!/usr/bin/env bash
# Interpreter throughput with hwprof off, ProfileMe only and all models on,
# in one hyperfine run, plus deterministic instruction counts (callgrind).
#   examples/minivm/bench.sh BUILD_DIR [HYPERFINE_ARGS...]
# Prints hyperfine's table, then bytecodes per second per command (from
# the bytecode count --stats reports and hyperfine's mean and user times),
# then instructions per bytecode under callgrind (needs valgrind).
set -euo pipefail
build=$1
shift
extra=("$@")
vm=$build/examples/minivm/minivm
dir=$(cd "$(dirname "$0")" && pwd)/programs
workloads=("fib.mvs -D N=30" "sieve.mvs -D R=10" "shapes.mvs -D ITERS=400")
cmds=()
for w in "${workloads[@]}"; do
  read -r prog args <<< "$w"
  for m in off profileme all; do
    cmds+=("$vm --prof=$m $args $dir/$prog")
  done
done
json=$(mktemp)
hyperfine -N --warmup 1 --min-runs 10 --export-json "$json" ${extra[@]+"${extra[@]}"} "${cmds[@]}"
echo
echo "bytecodes/s (mean wall, user):"
for c in "${cmds[@]}"; do
  n=$($c --stats 2>&1 >/dev/null | sed -n 's/^stats: \([0-9]*\) bytecodes.*/\1/p')
  python3 - "$json" "$c" "$n" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
r, n = res[sys.argv[2]], int(sys.argv[3])
print("  %-70s %8.1f M/s  %8.1f M/s" % (sys.argv[2].split("minivm/minivm ")[1],
      n / r["mean"] / 1e6, n / r["user"] / 1e6))
PY
done
rm -f "$json"
if command -v valgrind >/dev/null; then
  echo
  echo "instructions per bytecode (callgrind, whole process minus an empty run in the same mode):"
  for w in "fib.mvs -D N=25" "sieve.mvs -D R=2" "shapes.mvs -D ITERS=50"; do
    read -r prog args <<< "$w"
    for m in off profileme all; do
      base=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$vm" --prof=$m -D N=0 "$dir/fib.mvs" 2>&1 | sed -n 's/.*Collected : //p')
      n=$("$vm" --prof=$m $args "$dir/$prog" --stats 2>&1 >/dev/null | sed -n 's/^stats: \([0-9]*\) bytecodes.*/\1/p')
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$vm" --prof=$m $args "$dir/$prog" 2>&1 | sed -n 's/.*Collected : //p')
      echo "  $prog $args --prof=$m: $(( (ir - base) / n )).$(( ((ir - base) * 10 / n) % 10 )) instructions/bytecode"
    done
  done
fi
