#!/usr/bin/env bash
# bench/profileme/pm_core_real.sh BUILD_DIR [NAME...]
#
# ProfileMe's results (Dean et al., MICRO-30 1997: Fig. 3's envelope, the
# wasted issue slots of 5.2.3, the top PCs by total latency) with the
# core's real latencies, on real programs: the Valgrind tool records each
# program once (the programs and fixture of bench/core/cg_compare.sh),
# then hwprof-replay runs ProfileMe with core=on (full timing, every
# instruction timed) and exact=on, single and paired, at ProfileMe's
# default interval S = 10000 and at 1000 (INTERVALS="..." and PAIRS="0 1"
# to change), three seeds each, and prints the host's accuracy lines and the exact
# tables' line (INCOMPLETE if a table dropped keys). Traces stay in
# BUILD_DIR/pmreal.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: bench/profileme/pm_core_real.sh BUILD_DIR [NAME...]}" && pwd)
shift
names=("$@")
[ ${#names[@]} -eq 0 ] && names=(gzip bzip2 python3.11)
libdir=$build/examples/valgrind/lib
replay=$build/examples/replay/hwprof-replay
[ -x "$libdir/hwprof-amd64-linux" ] && [ -x "$replay" ] ||
  { echo "build first: ninja -C $build" >&2; exit 1; }
work=$build/pmreal
mkdir -p "$work"
fixture="python3 $root/examples/valgrind/tests/vg_fixture.py"
valgrind=$(command -v valgrind)
$fixture input "$work/gzip.in" 131072
$fixture input "$work/bzip2.in" 150000
pyprog='import json; d = {str(i): i * i for i in range(2000)}; print(len(json.dumps(d, sort_keys=True)))'
declare -A cmd=(
  [gzip]="/usr/bin/gzip -n -c -6 $work/gzip.in"
  [bzip2]="/usr/bin/bzip2 -c -1 $work/bzip2.in"
  [python3.11]="/usr/bin/python3.11 -c '$pyprog'")
for n in "${names[@]}"; do
  eval "prog=(${cmd[$n]})"
  [ -s "$work/$n.hwpt" ] ||
    nice $fixture run "$valgrind" "$libdir" "$work" --models=none --report=/dev/null \
      "--record=$work/$n.hwpt" -- "${prog[@]}"
  for s in ${INTERVALS:-10000 1000}; do
    for paired in ${PAIRS:-0 1}; do
      for seed in 1 2 3; do
        printf '%s interval=%s paired=%s seed=%s\n' "$n" "$s" "$paired" "$seed"
        nice "$replay" "$work/$n.hwpt" pm=on core=on exact=on "pm_interval=$s" \
          "pm_paired=$paired" "seed=$seed" 2>/dev/null |
          grep -E '^exact:|  ProfileMe|timed instructions'
      done
    done
  done
done
