#!/usr/bin/env bash
# tests/fuzz/rediscover.sh [SECONDS] [SEEDS]: shows that the strat fuzz
# target finds the known stratified heap overflow from its seed corpus,
# and never on the fixed code. Not part of CI (tests/run.sh does not run
# it): it builds the target twice and fuzzes up to 2 x SECONDS (default
# 60; SEEDS, default "1", are libFuzzer -seed values: one old-code run
# each, for repeatable runs).
#
# The defect: a push from inside the interrupt handler wrote a message
# past the end of the output queue (the handler runs when the queue is
# full, so the push's message landed at q[queue]) and the interrupt then
# nested. The fix made the queue refuse messages while the handler drains
# it (a counted drop) and the interrupt non-reentrant. The commit before
# the fix predates the model contract the target drives
# (hwp_strat_get_stats, merge, read_desc, read_json), so the target
# cannot be built there; instead a temporary worktree of HEAD gets the
# fix's two guards taken out of include/hwprof/stratified.h (the enqueue
# and interrupt code is otherwise the pre-fix code), which is the code
# before the fix as far as this defect goes.
#
# Prints, for each build, whether the target found something, after how
# long and how many executions, at what rate, and what it found; exits 0
# when the old code's finding is the overflow (the guard bytes past the
# queue overwritten, or ASan's heap-buffer-overflow) within SECONDS, its
# input passes on the fixed code, and the fixed code gives no finding.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
seeds=${2:-1}
root=$PWD
tmp=$(mktemp -d)
cleanup() {
  git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT

git worktree add --detach -q "$tmp/old" HEAD || { echo "rediscover: cannot add a worktree"; exit 1; }
python3 - "$tmp/old/include/hwprof/stratified.h" <<'PY' || { echo "rediscover: the fix's guards are not where expected"; exit 1; }
import sys
p = sys.argv[1]
s = open(p).read()
guards = [
    # hwp__strat_interrupt: no nesting while the handler runs
    ("static void hwp__strat_interrupt(hwp_strat *s) {\n    if (s->busy) return;\n",
     "static void hwp__strat_interrupt(hwp_strat *s) {\n"),
    # hwp__strat_enqueue: no message while the handler drains the queue
    ("    if (s->busy || s->qn >= s->d.queue) {\n        s->st.dropped++;\n        return;\n    }\n", ""),
]
for old, new in guards:
    if s.count(old) != 1:
        sys.exit(1)
    s = s.replace(old, new)
open(p, "w").write(s)
PY

# The fixed code is this tree, built where tests/fuzz/run.sh builds it
# (build/fuzz, and build/fuzz-replay for the plain driver).
echo "rediscover: building the strat target without the fix's guards and as it is"
(cd "$tmp/old" && FUZZ_ONLY=strat nice tests/fuzz/build.sh "$tmp/old-build" >"$tmp/build-old.log" 2>&1) ||
  { cat "$tmp/build-old.log"; exit 1; }
FUZZ_ONLY=strat nice tests/fuzz/build.sh build/fuzz >"$tmp/build-new.log" 2>&1 ||
  { cat "$tmp/build-new.log"; exit 1; }
FUZZ_ONLY=strat nice tests/fuzz/build.sh build/fuzz-replay --replay >>"$tmp/build-new.log" 2>&1 ||
  { cat "$tmp/build-new.log"; exit 1; }

# run NAME BINARY SEED: fuzzes from a copy of the seeds; prints one line.
run() {
  local name=$1 bin=$2 seed=$3 work="$tmp/corpus-$1-$3" log="$tmp/log-$1.txt" t0 t1 rc n
  mkdir -p "$work"
  cp tests/fuzz/corpus/strat/* "$work/"
  rm -f "$tmp/$name"-crash-*
  t0=$(date +%s.%N)
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 nice "$bin" -seed="$seed" \
    -max_total_time="$secs" -max_len=4096 -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$tmp/$name-" "$work" >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  n=$(awk '/^stat::number_of_executed_units:/{print $2}' "$log")
  printf '%-6s seed %-3s %s after %.1f s, %s executions, %.0f exec/s\n' "$name" "$seed" \
    "$([ $rc -eq 0 ] && echo "no finding" || echo "FINDING")" "$(echo "$t1 - $t0" | bc)" \
    "${n:-?}" "$(echo "${n:-0} / ($t1 - $t0)" | bc -l)"
  return $rc
}

ok=1
for seed in $seeds; do
  if run old "$tmp/old-build/fuzz_strat" "$seed"; then
    echo "rediscover: the old code gave no finding in $secs s"
    ok=0
    continue
  fi
  log="$tmp/log-old.txt"
  crash=$(ls "$tmp"/old-crash-* 2>/dev/null | head -1)
  if grep -q "heap-buffer-overflow" "$log"; then
    echo "  found: ASan heap-buffer-overflow:"
    grep -m3 -E "WRITE of size|#[01] .*stratified.h" "$log" | sed 's/^ */    /'
  elif grep -A8 "deadly signal" "$log" | grep -q "in fz_guards" &&
       grep -A8 "deadly signal" "$log" | grep -q "in st_handler"; then
    echo "  found: the guard bytes after the queue overwritten, seen by the"
    echo "  handler the overflowing message re-entered:"
    grep -A8 "deadly signal" "$log" | grep -E "in (fz_guards|st_handler|hwp__strat_[a-z]+) " |
      head -4 | sed -e 's/^ *#[0-9]* 0x[0-9a-f]* in /    /' -e "s|$tmp/old/||"
  else
    echo "  found something else:"
    grep -m1 -A6 -E "ERROR|deadly signal" "$log" | sed 's/^/    /'
    ok=0
  fi
  if [ -n "$crash" ]; then
    if build/fuzz-replay/fuzz_strat "$crash" >/dev/null 2>&1; then
      echo "  its input on the fixed code: passes"
    else
      echo "  its input on the fixed code: FAILS"
      ok=0
    fi
  fi
done
if ! run fixed build/fuzz/fuzz_strat "${seeds%% *}"; then
  echo "rediscover: the fixed code gave a finding:"
  grep -m1 -A6 -E "ERROR|deadly signal" "$tmp/log-fixed.txt" | sed 's/^/    /'
  ok=0
fi
[ $ok = 1 ] && echo "rediscover: ok" || echo "rediscover: FAILED"
[ $ok = 1 ]
