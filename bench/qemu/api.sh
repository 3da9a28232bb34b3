#!/usr/bin/env bash
# bench/qemu/api.sh [BUILD_DIR] [INPUT_BYTES] [RUNS] [CONFIGS]
#
# gzip under QEMU with each plugin configuration, for both plugin APIs:
#   API 1: libhwprof-tcg.so    under Debian 12's qemu-x86_64 7.2
#   API 4: libhwprof-tcg-v4.so under the qemu-x86_64 10 of
#          examples/qemu/build-qemu.sh (skipped, and said so, when absent)
# Configurations, each against plain QEMU of the same binary in the same
# rounds: plugin loaded with no model (models=none), ProfileMe alone,
# co-processor alone (load values), RAP alone (code ranges), all models;
# and the floors the API allows: an empty TB callback (floor=tb), an empty
# memory callback per instruction (floor=mem), and, API 4 only, an inline
# per-TB decrement with a conditional callback (floor=cond, ProfileMe's
# countdown); and the exact-counting peer plugin (libexact-tcg.so /
# libexact-tcg-v4.so, values=on: every TB, path and (load pc, value) pair
# counted exactly), which "all" is also compared with. profileme is ProfileMe alone with its countdown in the
# plugin (API 4 inline, API 1 a counting TB callback); profileme-per-tb
# the same model fed every TB (cd=off). RUNS rounds (default 5), each one
# hyperfine --runs 1 per command, interleaved; medians of user CPU over
# rounds. CONFIGS (space-separated names, default all) keeps only those
# configurations (plain is always run).
# Writes $BUILD_DIR/bench-qemu-api.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
bench_setup "${1:-$root/build}" "${2:-300000}" api-input.txt
runs=${3:-5}
only=${4:-}
v4=$build/examples/qemu/libhwprof-tcg-v4.so
q10=${HWPROF_QEMU10_USER:-${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}/bin/qemu-x86_64}
gz="/bin/gzip -c -6 $in"
out=$build/bench-qemu-api.md
: > "$out"
bench_one() { # label qemu plugin peer extra-floors...
  local label=$1 q=$2 p=$3 pp=$4; shift 4
  local cmds=(-n plain "$q $gz > /dev/null"
    -n peer "$q -plugin $pp,values=on,out=/dev/null $gz > /dev/null"
    -n none "$q -plugin $p,models=none,report=/dev/null $gz > /dev/null"
    -n profileme "$q -plugin $p,models=profileme,report=/dev/null $gz > /dev/null"
    -n profileme-per-tb "$q -plugin $p,models=profileme,cd=off,report=/dev/null $gz > /dev/null"
    -n coproc "$q -plugin $p,models=coproc,report=/dev/null $gz > /dev/null"
    -n rap "$q -plugin $p,models=rap,report=/dev/null $gz > /dev/null"
    -n all "$q -plugin $p,models=all,report=/dev/null $gz > /dev/null"
    -n floor-tb "$q -plugin $p,floor=tb,report=/dev/null $gz > /dev/null"
    -n floor-mem "$q -plugin $p,floor=mem,report=/dev/null $gz > /dev/null")
  local f
  for f in "$@"; do cmds+=(-n "floor-$f" "$q -plugin $p,floor=$f,report=/dev/null $gz > /dev/null"); done
  if [ -n "$only" ]; then
    local keep=() j
    for ((j = 0; j < ${#cmds[@]}; j += 3)); do
      case " plain $only " in *" ${cmds[j+1]} "*) keep+=("${cmds[@]:j:3}") ;; esac
    done
    cmds=("${keep[@]}")
  fi
  rm -f "$build"/bench-qemu-api-*.json
  for i in $(seq 1 "$runs"); do
    hyperfine --warmup $([ "$i" = 1 ] && echo 1 || echo 0) --runs 1 --style none \
      --export-json "$build/bench-qemu-api-$i.json" "${cmds[@]}" > /dev/null
  done
  python3 - "$label" "$q" "$out" "$build"/bench-qemu-api-*.json <<'PY'
import json, statistics, subprocess, sys
label, q, out = sys.argv[1:4]
rounds = [json.load(open(f))["results"] for f in sys.argv[4:]]
names = [r["command"] for r in rounds[0]]
user = [statistics.median(rd[i]["user"] for rd in rounds) for i in range(len(names))]
wall = [statistics.median(rd[i]["mean"] for rd in rounds) for i in range(len(names))]
ver = subprocess.run([q, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
lines = [f"### {label}: {ver}", "",
         f"{len(rounds)} rounds, medians of user CPU and wall time", "",
         "| configuration | user CPU ms | user vs plain | wall ms | wall vs plain |",
         "| --- | --- | --- | --- | --- |"]
for i, n in enumerate(names):
    lines.append(f"| {n} | {user[i]*1000:.0f} | {user[i]/user[0]:.2f} | "
                 f"{wall[i]*1000:.0f} | {wall[i]/wall[0]:.2f} |")
if "all" in names and "peer" in names:
    a, p = names.index("all"), names.index("peer")
    lines += ["", f"all models / exact-counting peer: {user[a]/user[p]:.2f}x user CPU, "
              f"{wall[a]/wall[p]:.2f}x wall"]
text = "\n".join(lines) + "\n\n"
open(out, "a").write(text)
print(text)
PY
}
bench_one "plugin API 1" qemu-x86_64 "$build/examples/qemu/libhwprof-tcg.so" "$peer"
if [ -x "$q10" ]; then
  bench_one "plugin API 4" "$q10" "$v4" "$build/examples/qemu/libexact-tcg-v4.so" cond
else
  echo "API 4: skipped, no plugin-enabled qemu-x86_64 10 at $q10 (examples/qemu/build-qemu.sh)" | tee -a "$out"
fi
