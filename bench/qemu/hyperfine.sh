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
# Writes a markdown table to $BUILD_DIR/hyperfine-qemu.md
# and JSON beside it.
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
hyperfine --warmup 1 --runs "$runs" --style basic \
  --export-markdown "$build/hyperfine-qemu.md" --export-json "$build/hyperfine-qemu.json" \
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
  "${old[@]}"
cat "$build/hyperfine-qemu.md"
# User CPU is what to compare on a shared machine (wall time includes
# waiting for the other jobs' cores): hyperfine's mean user time, and the
# median wall time, both as ratios against plain.
python3 - "$build/hyperfine-qemu.json" <<'PY'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
wall = lambda r: statistics.median(r["times"])
w0, u0 = wall(res[0]), res[0]["user"]
print("| command | wall median ms | user CPU ms | wall vs plain | user vs plain |")
print("| --- | --- | --- | --- | --- |")
for r in res:
    print(f"| {r['command']} | {wall(r)*1000:.0f} | {r['user']*1000:.0f} | "
          f"{wall(r)/w0:.2f} | {r['user']/u0:.2f} |")
PY
