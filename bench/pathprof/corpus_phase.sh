#!/bin/sh
# The two online phase detectors (path-based and BBV, equal budget)
# scored against SimPoint-style reference phases on the corpus traces
# that bench/pathprof/corpus_hpt.py recorded (BUILD/corpus/NAME.trace):
#   bench/pathprof/corpus_phase.sh BUILD INTERVAL [THRESHOLD_PCT] NAME...
# Per program: hwprof-report writes the exact per-interval BBVs (exp-bbv
# format), simpoint.py clusters them into reference phase ids, and
# phase_score replays the trace through both detectors and scores them
# with hwp_phase_score. Prints one Markdown row per program and detector.
# Needs /usr/bin/python3 with numpy (Debian: python3-numpy).
set -eu
build=$1 interval=$2
shift 2
pct=60
case ${1:-} in [0-9]*) pct=$1; shift ;; esac
here=$(cd "$(dirname "$0")" && pwd)
w=$build/corpus
echo "| program | intervals | k | detector | bytes | sensitivity | false pos | same-phase | stability | avg phase |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for name in "$@"; do
    t=$w/$name.trace
    [ -f "$t" ] || { echo "| $name | no trace (run corpus_hpt.py first) |"; continue; }
    "$build/examples/report/hwprof-report" --bbv "$w/$name.$interval.bbv" --trace "$t" \
        --interval "$interval"
    k=$(/usr/bin/python3 "$here/simpoint.py" "$w/$name.$interval.bbv" "$w/$name.$interval.ref" |
        sed -n 's/.*, k \([0-9]*\),.*/\1/p')
    "$build/bench/pathprof/phase_score" "$t" "$interval" "$w/$name.$interval.ref" "$pct" |
        awk -v name="$name" -v k="$k" '
            /^reference/ { n = $3 }
            /^(path|bbv) / { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                name, $5, k, $1, $2, $7, $10, $12, $14, $17 }'
done
