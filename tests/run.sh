#!/usr/bin/env bash
# tests/run.sh [--quick]: install what is missing, build with warnings as
# errors, and run every test suite three ways:
#   plain     every suite (unit, heavy, compile, host) and the benchmarks
#             as smoke tests, in build/test-plain
#   valgrind  the unit suite under valgrind memcheck (same build)
#   sanitize  the unit suite under ASan + UBSan, in build/test-asan
# --quick runs the plain pass only. The last line is "N passed, N failed",
# summed over the passes, after a list of what failed (CI keeps only the
# end of the log); the exit status is non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1

# --- dependencies ---------------------------------------------------------
. tests/deps.sh
hwp_install_deps || { echo "tests/run.sh: could not install the dependencies"; echo "0 passed, 1 failed"; exit 1; }

passed=0; failed=0
failures=() # one line per failed test, step or fuzz finding

# Adds meson test's own Ok/Fail counts for one pass to the totals.
count() { # logfile, pass name
  local ok fail up to
  ok=$(awk '/^Ok:/{print $2}' "$1" | tail -1)
  fail=$(awk '/^Fail:/{print $2}' "$1" | tail -1)
  up=$(awk '/^Unexpected Pass:/{print $3}' "$1" | tail -1)
  to=$(awk '/^Timeout:/{print $2}' "$1" | tail -1)
  if [ -z "$ok" ]; then failed=$((failed + 1)); failures+=("$2: the test runner broke"); return; fi
  passed=$((passed + ok)); failed=$((failed + fail + ${up:-0} + ${to:-0}))
  while IFS= read -r line; do failures+=("$2: $line"); done < <(
    grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|UNEXPECTEDPASS) ' "$1" | sed 's/^ *//; s/  */ /g')
}

step() { # name, command... : a build step; a failure counts as one failed
  local name=$1
  echo "=== $1"; shift
  if ! "$@"; then echo "=== FAILED: $*"; failed=$((failed + 1)); failures+=("$name: $*"); return 1; fi
}

configure() { # builddir, meson options...
  local dir=$1; shift
  if [ -d "$dir/meson-private" ]; then
    meson setup "$dir" --reconfigure "$@" >/dev/null
  else
    meson setup "$dir" "$@" >/dev/null
  fi
}

run_tests() { # name, meson test args...
  local name=$1 log; shift
  log=$(mktemp)
  echo "=== $name"
  meson test "$@" --print-errorlogs 2>&1 | tee "$log"
  count "$log" "$name"; rm -f "$log"
}

# --- plain pass -----------------------------------------------------------
# qemu/system boots a kernel under TCG with the plugin (a few minutes):
# every full run takes it.
[ $quick -eq 1 ] || export HWPROF_SYSTEM=1
if step "configure (plain)" configure build/test-plain -Dwerror=true; then
  if step "build (plain)" ninja -C build/test-plain; then
    run_tests "tests (plain: all suites)" -C build/test-plain --no-rebuild
    run_tests "benchmarks (smoke)" -C build/test-plain --no-rebuild --benchmark \
      "--test-args=--budget 0.05 --reps 3"
    if [ $quick -eq 0 ]; then
      run_tests "tests (valgrind memcheck: unit)" -C build/test-plain --no-rebuild --setup valgrind --suite unit
    fi
  fi
fi

# --- fuzzing ----------------------------------------------------------------
# Every libFuzzer target (tests/fuzz) for 2 s from its seed corpus, with
# a fixed seed: one test in the summary, failed on any finding.
# tests/fuzz/run.sh 600 is the long run.
if [ $quick -eq 0 ]; then
  flog=$(mktemp)
  if step "fuzz (every target, 2 s each)" bash -c 'set -o pipefail; HWP_FUZZ_SEED=1 tests/fuzz/run.sh 2 | tee "$0"' "$flog"; then
    passed=$((passed + 1))
  else
    while IFS= read -r line; do failures+=("fuzz: $line"); done < <(grep -A1 'FOUND' "$flog")
  fi
  rm -f "$flog"
fi

# --- sanitizer pass ---------------------------------------------------------
if [ $quick -eq 0 ]; then
  # The QEMU plugin and Valgrind tool hosts are built against foreign
  # runtimes that the sanitizers cannot join; the unit suite covers them.
  # -O0: GCC's UBSan and ASan instrumentation at -O2 made the unit tests
  # take 14.5 minutes to compile (test_pathprof.c alone 212 s, 44 s at
  # -O0); at -O0 they build in under 3 minutes and run in well under one.
  # The libFuzzer targets run the models under ASan+UBSan at -O1 (clang).
  if step "configure (asan+ubsan)" configure build/test-asan -Dwerror=true \
       -Db_sanitize=address,undefined -Db_lundef=false -Dqemu_plugin=disabled \
       -Dvalgrind_tool=disabled -Dbench=false -Doptimization=0; then
    # only what the unit suite runs (tests/suite_targets.py): the rest
    # of the tree is built and tested in the plain pass
    if step "build (asan+ubsan: the unit suite's targets)" bash -c \
         'set -o pipefail; t=$(python3 tests/suite_targets.py build/test-asan unit) && ninja -C build/test-asan $t' ; then
      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
        run_tests "tests (asan+ubsan: unit)" -C build/test-asan --no-rebuild --suite unit
    fi
  fi
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "=== what failed"
  printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
