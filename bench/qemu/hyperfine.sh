#!/usr/bin/env bash
# bench/qemu/hyperfine.sh [BUILD_DIR] [INPUT_BYTES] [RUNS]
#
# User CPU and wall time of gzip under qemu-x86_64, RUNS rounds:
#   plain            QEMU alone
#   peer-exact       bench/qemu/exact_tcg.c: exact hash tables of every TB,
#                    every path and every (load pc, value) -- the same
#                    events hwprof's value models observe
#   hwprof-values    all five models (loads with values, block mode)
#   peer-cf          the peer without values (TB and path tables only)
#   hwprof-cf        the control-flow models only: ProfileMe, RAP on pc,
#                    path profiler + phase detector (no memory callbacks)
#   hwprof-none      the plugin's callbacks and event stream, no model
#   floor-inline     the peer with floor=inline: one inline ADD_U64 per TB
#                    (exact TB counts, no callback)
#   floor-tb         the peer with floor=tb: a TB-exec callback that
#                    returns at once -- what any 7.2 plugin that follows
#                    control flow pays
#   floor-mem        floor=mem: that plus an empty memory callback on
#                    every instruction -- the floor with values
#   hwprof-values-cheap   hwprof-values with the stratified sampler's cheap
#                    two-multiply hash instead of the paper's (sec. 3.5)
# BASELINE=OLD.so adds old-values, old-cf and old-none: an earlier build of
# the plugin in the same run (before/after figures).
# Writes a markdown table of medians to $BUILD_DIR/hyperfine-qemu.md and
# one JSON per round beside it (hyperfine-qemu-N.json).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
bench_setup "${1:-$root/build}" "${2:-1000000}" hyperfine-input.txt
runs=${3:-5}
gz="/bin/gzip -c -6 $in"
q=qemu-x86_64
old=()
if [ -n "${BASELINE:-}" ]; then
  old=(-n old-values "$q -plugin $BASELINE,models=all,report=/dev/null $gz > /dev/null"
       -n old-cf "$q -plugin $BASELINE,pm=on,rap=on,path=on,report=/dev/null $gz > /dev/null"
       -n old-none "$q -plugin $BASELINE,report=/dev/null $gz > /dev/null")
fi
# hyperfine 1.15 exports only the mean user time of a command, so each
# round is one hyperfine invocation with --runs 1: its "user" is that run's
# user CPU, and the summary below takes medians over the rounds. Rounds
# also interleave the commands, so a burst of load hits all of them.
rm -f "$build"/hyperfine-qemu-*.json
for i in $(seq 1 "$runs"); do
  hyperfine --warmup $([ "$i" = 1 ] && echo 1 || echo 0) --runs 1 --style basic \
    --export-json "$build/hyperfine-qemu-$i.json" \
    -n plain "$q $gz > /dev/null" \
    -n peer-exact "$q -plugin $peer,values=on,out=/dev/null $gz > /dev/null" \
    -n hwprof-values "$q -plugin $plugin,models=all,report=/dev/null $gz > /dev/null" \
    -n hwprof-values-cheap "$q -plugin $plugin,models=all,strat_hash=cheap,report=/dev/null $gz > /dev/null" \
    -n peer-cf "$q -plugin $peer,out=/dev/null $gz > /dev/null" \
    -n hwprof-cf "$q -plugin $plugin,pm=on,rap=on,path=on,report=/dev/null $gz > /dev/null" \
    -n hwprof-none "$q -plugin $plugin,report=/dev/null $gz > /dev/null" \
    -n floor-inline "$q -plugin $peer,floor=inline,out=/dev/null $gz > /dev/null" \
    -n floor-tb "$q -plugin $peer,floor=tb,out=/dev/null $gz > /dev/null" \
    -n floor-mem "$q -plugin $peer,floor=mem,out=/dev/null $gz > /dev/null" \
    "${old[@]}" > /dev/null
done
# User CPU is what to compare on a shared machine (wall time includes
# waiting for the other jobs' cores): medians over the rounds of each
# command's user CPU and wall time, as ratios against plain, and
# hwprof-values against peer-exact (the same events observed).
python3 - "$build/hyperfine-qemu.md" "$build"/hyperfine-qemu-*.json <<'PY'
import json, statistics, sys
rounds = [json.load(open(f))["results"] for f in sys.argv[2:]]
names = [r["command"] for r in rounds[0]]
med = lambda key, i: statistics.median(rd[i][key] for rd in rounds)
wall = [med("mean", i) for i in range(len(names))]  # --runs 1: mean = the run
user = [med("user", i) for i in range(len(names))]
lines = [f"{len(rounds)} rounds; medians over rounds",
         "| command | wall median ms | user CPU median ms | wall vs plain | user vs plain |",
         "| --- | --- | --- | --- | --- |"]
for i, n in enumerate(names):
    lines.append(f"| {n} | {wall[i]*1000:.0f} | {user[i]*1000:.0f} | "
                 f"{wall[i]/wall[0]:.2f} | {user[i]/user[0]:.2f} |")
if "hwprof-values" in names and "peer-exact" in names:
    a, b = names.index("hwprof-values"), names.index("peer-exact")
    per = sorted(rd[a]["user"] / rd[b]["user"] for rd in rounds)
    lines.append(f"hwprof-values / peer-exact user CPU: {user[a]/user[b]:.2f} "
                 f"(per-round ratios {', '.join(f'{x:.2f}' for x in per)})")
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
