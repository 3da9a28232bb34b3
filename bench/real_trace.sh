#!/usr/bin/env bash
# bench/real_trace.sh BUILD_DIR [RUNS] [--keys]
#
# Real event streams for the model benchmarks (issue 8 item 5, issue 9),
# recorded with the Valgrind tool because its streams repeat from run to
# run (docs/valgrind.md, "Determinism"): gzip -n -6 of 128 KiB and bzip2 -1
# of 150 KB of generated text (fixed seed), python3.11 -c json.dumps
# with PYTHONHASHSEED=0, each as pid 2 of a fresh PID namespace in an
# empty directory (examples/valgrind/tests/vg_fixture.py). Then:
#
#  1. record mode (issue 9's Measure): hyperfine, RUNS runs, of
#     `valgrind --tool=none PROG` and the tool with models=none record=F;
#     records per second of the record run and of what it adds to
#     --tool=none, in wall time (median) and user+sys CPU time (mean);
#  2. every model over every trace with hwprof-replay, RUNS rounds, the
#     models alternating within a round; the median of the replayer's own
#     CPU ns/record (decode + session, no start-up or mmap) per model, and the
#     ratio to models=none, the peer measured in the same rounds.
#
# Traces stay in BUILD_DIR/real-traces (not in git: ~4 bytes a record,
# 70 MB for gzip, ~250 MB for python3.11). --keys also writes NAME.pc.keys,
# NAME.value.keys and NAME.addr.keys (hwprof-replay --dump): little-endian
# uint64 keys for `hwprof-bench --keys FILE` (or `bench_rap --keys FILE`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=$(cd "${1:?usage: bench/real_trace.sh BUILD_DIR [RUNS] [--keys]}" && pwd)
runs=${2:-3}
keys=0
[ "${3:-}" = "--keys" ] && keys=1
libdir=$build/examples/valgrind/lib
replay=$build/examples/replay/hwprof-replay
[ -x "$libdir/hwprof-amd64-linux" ] && [ -x "$replay" ] ||
  { echo "build first: ninja -C $build" >&2; exit 1; }
command -v hyperfine > /dev/null || { echo "needs hyperfine" >&2; exit 1; }
work=$build/real-traces
mkdir -p "$work/cwd"
fixture="python3 $root/examples/valgrind/tests/vg_fixture.py"
valgrind=$(command -v valgrind)

$fixture input "$work/gzip.in" 131072
$fixture input "$work/bzip2.in" 150000
pyprog='import json; d = {str(i): i * i for i in range(2000)}; print(len(json.dumps(d, sort_keys=True)))'
names=(gzip bzip2 python3.11)
cmds=("/usr/bin/gzip -n -c -6 $work/gzip.in" "/usr/bin/bzip2 -c -1 $work/bzip2.in"
      "/usr/bin/python3.11 -c '$pyprog'")
models=(none pm strat rap path coproc all)

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

echo "== recording (models=none, record=FILE) in $work"
for i in "${!names[@]}"; do
  n=${names[$i]}
  eval "prog=(${cmds[$i]})"
  $fixture run "$valgrind" "$libdir" "$work" --models=none --report=/dev/null \
    "--record=$work/$n.hwpt" -- "${prog[@]}"
  "$replay" --check "$work/$n.hwpt" | sed "s/^/$n: /"
done

echo
echo "== record mode: hyperfine -N --runs $runs; wall: median, user+sys CPU: mean"
printf '%-11s %11s %9s %9s %9s %9s %9s %13s %13s\n' program records bytes/rec \
  "none wall" "rec wall" "none CPU" "rec CPU" "Mrec/s wall" "Mrec/s CPU"
for i in "${!names[@]}"; do
  n=${names[$i]}
  recs=$("$replay" --check "$work/$n.hwpt" | awk '{print $2}')
  ( cd "$work/cwd" && VALGRIND_LIB=$libdir PYTHONHASHSEED=0 hyperfine -N --style none --runs "$runs" \
      --export-json "$work/$n-hf.json" \
      "$valgrind -q --tool=none ${cmds[$i]}" \
      "$valgrind -q --tool=hwprof --models=none --report=/dev/null --record=$work/$n-t.hwpt ${cmds[$i]}" ) > /dev/null
  size=$(stat -c %s "$work/$n-t.hwpt")
  rm -f "$work/$n-t.hwpt"
  # Records per second of the whole record run, and of what recording adds
  # to --tool=none (the tool's cost: stream + encoder + writes).
  python3 - "$work/$n-hf.json" "$n" "$recs" "$size" <<'EOF'
import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"]
n, recs, size = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
wall = [statistics.median(x["times"]) for x in r]
cpu = [x["user"] + x["system"] for x in r]
print(f"{n:<11} {recs:>11} {size / recs:>9.2f} {wall[0]:>7.3f} s {wall[1]:>7.3f} s "
      f"{cpu[0]:>7.3f} s {cpu[1]:>7.3f} s {recs / wall[1] / 1e6:>6.1f} ({recs / max(wall[1] - wall[0], 1e-9) / 1e6:>4.1f})"
      f" {recs / cpu[1] / 1e6:>6.1f} ({recs / max(cpu[1] - cpu[0], 1e-9) / 1e6:>4.1f})")
EOF
done
echo "(Mrec/s: records / record run; in brackets records / (record run - none run))"

echo
echo "== hwprof-replay TRACE models=M: median CPU ns/record over $runs rounds (x: vs models=none)"
printf '%-11s' program; printf ' %15s' "${models[@]}"; echo
for n in "${names[@]}"; do
  t=$work/$n.hwpt
  for r in $(seq "$runs"); do
    for m in "${models[@]}"; do
      "$replay" "$t" "models=$m" 2>&1 >/dev/null | tail -1 |
        sed -n 's/.*(\([0-9.]*\) ns\/record)/\1/p' >> "$work/$n.$m.ns"
    done
  done
  printf '%-11s' "$n"
  base=$(median < "$work/$n.none.ns")
  for m in "${models[@]}"; do
    v=$(median < "$work/$n.$m.ns")
    printf ' %7.1f (%4.2fx)' "$v" "$(awk -v a="$v" -v b="$base" 'BEGIN {print a / b}')"
  done
  echo
  rm -f "$work/$n".*.ns
done

if [ $keys -eq 1 ]; then
  echo
  for n in "${names[@]}"; do
    for k in pc value addr; do
      "$replay" --dump "$k" "$work/$n.hwpt" "$work/$n.$k.keys" | sed "s/^/$n: /"
    done
  done
  echo "use: $build/bench/harness/hwprof-bench --keys $work/gzip.pc.keys rap exact"
fi
