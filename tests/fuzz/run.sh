#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS]: builds every fuzz target (tests/fuzz/build.sh,
# clang -fsanitize=fuzzer,address,undefined) and runs each for SECONDS
# (default 5) on one core, starting from its checked-in seeds
# (tests/fuzz/corpus/<target>) and the inputs earlier runs kept
# (build/fuzz/corpus/<target>: new entries accumulate there; copy the
# interesting ones into tests/fuzz/corpus after minimising them). Prints,
# per target, executions, executions per second and findings; a finding's
# input is saved as build/fuzz/findings/<target>-crash-... Exits non-zero
# on any finding. `tests/fuzz/run.sh 600` is the long run (10 minutes per
# target), with libFuzzer's random seeds; HWP_FUZZ_SEED=N fixes the seed
# (CI's 2-second smoke run does, so its inputs are the same on every
# machine and a red run reproduces). HWP_FUZZ_TARGETS="vm rap ..." runs
# only those targets, in that order (the long run split across sittings).
# Installs clang's fuzzer runtime if it is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-5}
seed=()
[ -n "${HWP_FUZZ_SEED:-}" ] && seed=(-seed="$HWP_FUZZ_SEED")
out=build/fuzz

# libFuzzer's runtime: Debian ships it with clang (libclang-rt-14-dev on
# newer releases).
fuzz_ok() {
  echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
    clang -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1
}
if ! command -v clang >/dev/null || ! fuzz_ok; then
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "fuzz: installing clang and its fuzzer runtime"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang >/dev/null
  fuzz_ok || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libclang-rt-14-dev >/dev/null
  fuzz_ok || { echo "fuzz: clang cannot link -fsanitize=fuzzer"; exit 1; }
fi

nice tests/fuzz/build.sh "$out" >/dev/null || { echo "fuzz: build failed"; exit 1; }
mkdir -p "$out/findings"
bad=0
printf '%-16s %10s %10s  %s\n' target execs exec/s findings
for t in ${HWP_FUZZ_TARGETS:-$(FUZZ_LIST=1 tests/fuzz/build.sh)}; do
  [ -f "$out/fuzz_$t" ] || { echo "fuzz: no target $t"; bad=$((bad + 1)); continue; }
  work="$out/corpus/$t"; log="$out/log-$t.txt"
  mkdir -p "$work"
  seeds=()
  [ -d "tests/fuzz/corpus/$t" ] && seeds=("tests/fuzz/corpus/$t")
  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 nice "$out/fuzz_$t" \
    -max_total_time="$secs" "${seed[@]}" -max_len=4096 -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$out/findings/$t-" \
    "$work" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  runs=$(awk '/^stat::number_of_executed_units:/{print $2}' "$log")
  tsec=$(awk '/^Done [0-9]+ runs in/{print $5}' "$log")
  rate=$(awk '/^stat::average_exec_per_sec:/{print $2}' "$log")
  if [ $rc -eq 0 ]; then
    printf '%-16s %10s %10s  %s\n' "$t" "${runs:-?}" "${rate:-?}" none
  else
    bad=$((bad + 1))
    art=$(grep -o "Test unit written to .*" "$log" | sed 's/Test unit written to //' | tail -1)
    printf '%-16s %10s %10s  %s\n' "$t" "${runs:-?}" "${rate:-?}" "FOUND (exit $rc): ${art:-see $log}"
    grep -m1 -E "ERROR: |SUMMARY: |deadly signal" "$log" | sed 's/^/    /'
  fi
  : "${tsec:=}"
done
if [ $bad -ne 0 ]; then
  echo "fuzz: $bad target(s) with findings; replay one with"
  echo "  tests/fuzz/build.sh build/fuzz-replay --replay && build/fuzz-replay/fuzz_<target> <input>"
  exit 1
fi
echo "fuzz: no findings"
