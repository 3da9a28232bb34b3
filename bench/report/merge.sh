#!/usr/bin/env bash
# bench/report/merge.sh BUILD_DIR [K]: hwprof-report merging K reports
# (1000 by default) of one corpus program, its time and peak memory.
#
# The reports: gzip -9 of the corpus's mixed file (bench/corpus) runs once
# under the QEMU plugin with record=, the trace is split into K pieces of
# consecutive chunks (examples/report/tests/split_trace.py: chunks decode
# on their own) and each piece is replayed with models=all: K reports of
# one configuration, as K runs of the program's parts would give. Then
# /usr/bin/time -v measures hwprof-report --json merging all K, and
# merging the first alone (the reader, one report and its state). It
# prints both, the sizes, and whether the merged instructions are the
# trace's. Not run in CI (a few minutes on 2 cores); docs/report-format.md
# holds its figures.
set -euo pipefail
build=$(realpath "${1:?usage: bench/report/merge.sh BUILD_DIR [K]}")
k=${2:-1000}
src=$(cd "$(dirname "$0")/../.." && pwd)
w=$build/bench-report-merge
tool=$build/examples/report/hwprof-report
replay=$build/examples/replay/hwprof-replay
plugin=$build/examples/qemu/libhwprof-tcg.so
for f in "$tool" "$replay" "$plugin"; do
  [ -e "$f" ] || { echo "merge.sh: $f is not built"; exit 1; }
done
rm -rf "$w" && mkdir -p "$w/r"

python3 "$src/bench/corpus/corpus.py" "$build" --commands gzip >/dev/null
qemu-x86_64 -plugin "$plugin,record=$w/gz.trc" /usr/bin/gzip -9 -c "$build/corpus/mixed.bin" \
  >/dev/null 2>"$w/record.txt"
records=$("$replay" --check "$w/gz.trc" | awk '{print $2}')
python3 "$src/examples/report/tests/split_trace.py" "$w/gz.trc" "$k" "$w/piece" >/dev/null
rm "$w/gz.trc"
# two replays at a time: the machine's two cores
ls "$w"/piece.*.trc | sed 's/.*piece\.\([0-9]*\)\.trc/\1/' |
  xargs -P 2 -I{} sh -c "'$replay' '$w/piece.{}.trc' models=all json='$w/r/{}.json' \
    report=/dev/null 2>/dev/null && rm '$w/piece.{}.trc'"

measure() { # label, reports...
  local label=$1; shift
  /usr/bin/time -v "$tool" --quiet --json "$w/$label.json" "$@" 2>"$w/$label.time"
  printf '%-10s %5d reports  %8.2f s  peak RSS %7d KiB\n' "$label" $# \
    "$(awk -F': ' '/Elapsed/{n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$w/$label.time")" \
    "$(awk -F': ' '/Maximum resident/{print $2}' "$w/$label.time")"
}
echo "gzip -9 of the corpus's mixed file: $records instructions, $k pieces"
measure one "$w/r/0000.json"
measure merged "$w"/r/*.json
echo "one report: $(stat -c %s "$w/r/0000.json") bytes; all $k: $(du -cb "$w"/r/*.json | tail -1 | cut -f1) bytes; merged report: $(stat -c %s "$w/merged.json") bytes"
got=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['instructions'])" "$w/merged.json")
[ "$got" = "$records" ] && echo "merged instructions: $got, the trace's" ||
  { echo "merged instructions: $got, the trace has $records"; exit 1; }
