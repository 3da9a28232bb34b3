#!/usr/bin/env bash
# bench/compare.sh A B [-- HWPROF_BENCH_ARGS...]: two commits, the same
# streams, one table. Builds hwprof-bench at A and at B (git worktrees
# and meson builds in a temporary directory, debugoptimized, removed at
# exit), runs both on the same stream ROUNDS times, alternating which
# goes first, and pools each target's timed runs; then counts each
# target's instructions per event under callgrind (deterministic: any
# difference there is real). HWPROF_BENCH_ARGS choose the stream and the
# targets (default: --gen zipf:1 --distinct 2^16 --events 2^21 rap strat
# pm path exact); A and B are anything git rev-parse takes (main, HEAD~3).
#
# Each row: both medians with their quartiles, B/A with the range the
# quartiles allow ([q1_B/q3_A, q3_B/q1_A]), and a verdict only when that
# range excludes 1 (the IQRs do not overlap): "faster" or "slower";
# otherwise "~" (the spread does not support a difference). Env: ROUNDS
# (default 5), REPS (runs per round, default 5), KEEP=1 keeps the
# temporary directory, NO_CALLGRIND=1 skips the instruction counts.
# Both commits must have bench/harness (hwprof-bench).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/compare.sh A B [-- HWPROF_BENCH_ARGS...]" >&2; exit 2; }
a=$1 b=$2; shift 2
[ "${1:-}" = -- ] && shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--gen zipf:1 --distinct 2^16 --events 2^21 rap strat pm path exact)
rounds=${ROUNDS:-5} reps=${REPS:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
ca=$(git -C "$src" rev-parse --verify "$a^{commit}") || { echo "compare.sh: no commit \"$a\"" >&2; exit 2; }
cb=$(git -C "$src" rev-parse --verify "$b^{commit}") || { echo "compare.sh: no commit \"$b\"" >&2; exit 2; }
tmp=$(mktemp -d)
cleanup() {
  for s in a b; do git -C "$src" worktree remove --force "$tmp/$s" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] && { echo "kept $tmp" >&2; return; }
  rm -rf "$tmp"
}
trap cleanup EXIT
for s in a b; do
  c=$ca; [ $s = b ] && c=$cb
  git -C "$src" worktree add --detach "$tmp/$s" "$c" >/dev/null 2>&1
  [ -f "$tmp/$s/bench/harness/hwprof_bench.c" ] ||
    { echo "compare.sh: $([ $s = a ] && echo "$a" || echo "$b") has no bench/harness (hwprof-bench)" >&2; exit 2; }
  echo "== building $s ($(git -C "$src" log -1 --format='%h %s' "$c" | cut -c1-70))" >&2
  meson setup "$tmp/$s/build" "$tmp/$s" --buildtype=debugoptimized >/dev/null
  nice ninja -C "$tmp/$s/build" bench/harness/hwprof-bench >/dev/null
done
for ((r = 1; r <= rounds; r++)); do
  order=(a b); [ $((r % 2)) -eq 0 ] && order=(b a)
  for s in "${order[@]}"; do
    echo "== round $r/$rounds: $s" >&2
    "$tmp/$s/build/bench/harness/hwprof-bench" --quiet --json --reps "$reps" "${args[@]}" \
        > "$tmp/$s-$r.json"
  done
done
for s in a b; do
  : > "$tmp/$s-cg.txt"
  if [ -z "${NO_CALLGRIND:-}" ] && command -v valgrind >/dev/null; then
    echo "== callgrind: $s" >&2
    (cd "$tmp" && valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$tmp/$s-cg.out" \
        "$tmp/$s/build/bench/harness/hwprof-bench" --quiet --callgrind "${args[@]}" \
        > "$tmp/$s-cg.txt" 2>/dev/null)
  fi
done
python3 - "$tmp" "$rounds" "$a" "$b" "$src/bench" <<'PY'
import glob, json, sys
tmp, rounds, an, bn = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sys.path.insert(0, sys.argv[5])
from plot_cliff import instr_per_event  # one reader of callgrind's dumps

def quart(x):
    x = sorted(x)
    def q(p):
        pos = p * (len(x) - 1); i = int(pos)
        return x[i] + (pos - i) * (x[i + 1] - x[i]) if i + 1 < len(x) else x[-1]
    return q(0.25), q(0.5), q(0.75)

def pooled(s):
    runs, machine = {}, None
    for r in range(1, rounds + 1):
        d = json.load(open(f"{tmp}/{s}-{r}.json"))
        machine = d["machine"]
        for t in d["results"]:
            runs.setdefault(f'{t["name"]}/{t["stream"]}', []).extend(t["ns_per_event"]["runs"])
    return runs, machine

def instr(s):
    return instr_per_event(f"{tmp}/{s}-cg.txt", glob.glob(f"{tmp}/{s}-cg.out*"))

ra, machine = pooled("a")
rb, _ = pooled("b")
ia, ib = instr("a"), instr("b")
print(f'A = {an}, B = {bn}; {machine["cpu"]}, {machine["cores"]} cores, load {machine["loadavg"][0]}')
print(f"{rounds} rounds, alternating; ns/event pooled over every run of each side\n")
print(f'{"target":<16} {"A median [q1..q3]":>24} {"B median [q1..q3]":>24} {"B/A [range]":>22}  {"verdict":<8}'
      f' {"instr A":>9} {"instr B":>9} {"B/A":>7}')
for k in sorted(set(ra) | set(rb)):
    if k not in ra or k not in rb:
        print(f"{k:<16} only in {'A' if k in ra else 'B'}")
        continue
    a1, am, a3 = quart(ra[k])
    b1, bm, b3 = quart(rb[k])
    lo, hi = b1 / a3, b3 / a1
    verdict = "faster" if hi < 1 else "slower" if lo > 1 else "~"
    ins = ""
    if k in ia and k in ib:
        ins = f" {ia[k]:9.2f} {ib[k]:9.2f} {ib[k] / ia[k]:7.3f}"
    print(f"{k:<16} {am:9.3f} [{a1:.2f}..{a3:.2f}] {bm:9.3f} [{b1:.2f}..{b3:.2f}] "
          f"{bm / am:7.3f} [{lo:.3f}..{hi:.3f}]  {verdict:<8}{ins}")
PY
