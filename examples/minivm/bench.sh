#!/usr/bin/env bash
# Interpreter throughput with hwprof off, ProfileMe only and all models on
# (each model fed every event, prof.h), and all models through the
# burst-sampled layer (--layer, hwprof/vm.h), in one hyperfine run, plus
# deterministic instruction counts (callgrind), where the layer's
# compiled-in-but-off and ProfileMe-alone configurations are added.
#   examples/minivm/bench.sh BUILD_DIR [HYPERFINE_ARGS...]
# Prints hyperfine's table, then bytecodes per second per command (from
# the bytecode count --stats reports and hyperfine's mean and user times),
# then instructions per bytecode under callgrind (needs valgrind).
#   ROUNDS=N [BASE=DIR] examples/minivm/bench.sh BUILD_DIR
# instead runs the commands (and BASE's minivm's, e.g. a build of the
# previous commit) interleaved, in a shuffled order, N rounds, and prints
# the median user time of each: on a shared machine a burst of load then
# hits every command alike, where hyperfine runs one command's runs back
# to back.
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
  for v in ${BASE:+"$BASE/examples/minivm/minivm"} "$vm"; do
    for m in "--prof=off" "--prof=profileme" "--prof=all" "--layer --prof=all"; do
      cmds+=("$v $m $args $dir/$prog")
    done
  done
done
if [ -n "${ROUNDS:-}" ]; then
  python3 - "$ROUNDS" "${cmds[@]}" <<'PY'
import os, random, statistics, subprocess, sys
rounds, cmds = int(sys.argv[1]), sys.argv[2:]
user = {c: [] for c in cmds}
for r in range(rounds):
    order = cmds[:]
    random.Random(r).shuffle(order)
    for c in order:
        p = subprocess.Popen(c.split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        if status: sys.exit("failed: " + c)
        user[c].append(ru.ru_utime)
for c in cmds:
    n = subprocess.run(c.split() + ["--stats"], capture_output=True, text=True).stderr
    n = int(n.split("stats: ")[1].split()[0])
    u = statistics.median(user[c])
    print("  %-80s median user %.4f s  %7.1f M/s" % (c, u, n / u / 1e6))
PY
  exit 0
fi
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
  echo "instructions per bytecode (callgrind, whole process minus an empty run in the same mode;"
  echo "the bytecode count from --prof=off: the same program runs the same bytecodes in every mode):"
  for w in "fib.mvs -D N=25" "sieve.mvs -D R=2" "shapes.mvs -D ITERS=50"; do
    read -r prog args <<< "$w"
    n=$("$vm" --prof=off $args "$dir/$prog" --stats 2>&1 >/dev/null | sed -n 's/^stats: \([0-9]*\) bytecodes.*/\1/p')
    for m in "--prof=off" "--prof=profileme" "--prof=all" "--layer --prof=off" \
             "--layer --prof=profileme" "--layer --prof=rap" "--layer --prof=pathprof" \
             "--layer --prof=stratified" "--layer --prof=coproc" "--layer --prof=all"; do
      base=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$vm" $m -D N=0 "$dir/fib.mvs" 2>&1 | sed -n 's/.*Collected : //p')
      ir=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$vm" $m $args "$dir/$prog" 2>&1 | sed -n 's/.*Collected : //p')
      echo "  $prog $args $m: $(( (ir - base) / n )).$(( ((ir - base) * 10 / n) % 10 )) instructions/bytecode"
    done
  done
fi
