#!/usr/bin/env bash
# bench/profileme/pm_core_real.sh BUILD_DIR [NAME...]
#
# ProfileMe's results (Dean et al., MICRO-30 1997: Fig. 3's envelope, the
# wasted issue slots of 5.2.3, the top PCs by total latency) with the
# core's real latencies, on real programs: the Valgrind tool records each
# program once (bench/core/programs.sh),
# then hwprof-replay runs ProfileMe with core=on (full timing, every
# instruction timed) and exact=on, single and paired, at ProfileMe's
# default interval S = 10000 and at 1000 (INTERVALS="..." and PAIRS="0 1"
# to change), three seeds each, and prints the host's accuracy lines and the exact
# tables' line (INCOMPLETE if a table dropped keys). The ProfileMe table
# holds 2^18 entries (pm_table=): python3.11 samples some 20,000 distinct
# PCs at S = 1000, the default table 3584, and a full table's scores are
# left out. Traces stay in BUILD_DIR/pmreal.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/bench/core/programs.sh"
programs_args "bench/profileme/pm_core_real.sh BUILD_DIR [NAME...]" \
  examples/replay/hwprof-replay pmreal "$@"
replay=$build/examples/replay/hwprof-replay
programs_setup "$root" "$work"
for n in "${names[@]}"; do
  programs_record "$libdir" "$work" "$n"
  for s in ${INTERVALS:-10000 1000}; do
    for paired in ${PAIRS:-0 1}; do
      for seed in 1 2 3; do
        printf '%s interval=%s paired=%s seed=%s\n' "$n" "$s" "$paired" "$seed"
        nice "$replay" "$work/$n.hwpt" pm=on core=on exact=on "pm_interval=$s" \
          "pm_paired=$paired" pm_table=262144 "seed=$seed" 2>/dev/null |
          grep -E '^exact:|  ProfileMe|timed instructions|table full'
      done
    done
  done
done
