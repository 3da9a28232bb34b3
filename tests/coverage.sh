#!/usr/bin/env bash
# tests/coverage.sh [--check] [BUILDDIR]: line and branch coverage of every
# header in include/hwprof by the unit, heavy and report suites plus the fuzz
# corpora.
#
# Builds with gcc --coverage, HWPROF_COVERAGE (base.h: no hot path forced
# inline) and -fno-inline (the heavy suites keep their -O2 but inline
# nothing), so each source branch is counted once per translation unit,
# not once per inlined copy, in its own build directory (default
# build/coverage: never the plain or sanitizer builds), runs the unit,
# heavy and report suites, then replays every fuzz target's inputs through the plain
# driver (tests/fuzz/replay.c) built with coverage: the checked-in seeds
# (tests/fuzz/corpus/<target>), the findings kept as regression inputs
# (tests/fuzz/known/<target>) and what longer runs kept
# (build/fuzz/corpus/<target>, from tests/fuzz/run.sh). Prints one row
# per header with its line and branch coverage against the goals (lines
# >= 95%, branches >= 85%; gcc's branch count includes every outcome of
# every condition), then one row per source that parses what users type
# and save (hwx_arg.c, hwx_opts.c, hwx_trace.c, rp_load.c) against the
# same goals, and writes gcovr's per-line reports to
# BUILDDIR/coverage-{headers,parsers}.txt. Exits non-zero if a step fails and, with --check,
# if a header or a parser misses a goal (a gate). Needs gcovr (tests/deps.sh installs
# it).
set -uo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
dir=${1:-build/coverage}
root=$PWD

. tests/deps.sh
hwp_install_deps || { echo "coverage: could not install the dependencies"; exit 1; }
command -v gcovr >/dev/null || { echo "coverage: gcovr is missing"; exit 1; }

# The hosts built against foreign runtimes (QEMU plugin, Valgrind tool)
# and the benchmarks add nothing to the headers' coverage. gcc's
# format-truncation warning depends on what it inlines: with -fno-inline it
# flags snprintf calls that truncate on purpose (hwprof-report's labels),
# so it stays a warning here; every other warning is still an error.
opts=(-Db_coverage=true -Dwerror=true --buildtype=debug -Dqemu_plugin=disabled
      -Dvalgrind_tool=disabled -Dbench=false
      "-Dc_args=['-DHWPROF_COVERAGE','-fno-inline','-Wno-error=format-truncation']")
if [ -d "$dir/meson-private" ]; then
  # (setup --reconfigure would keep an older c_args)
  meson configure "$dir" "${opts[@]}" >/dev/null || exit 1
else
  CC=gcc meson setup "$dir" "${opts[@]}" >/dev/null || exit 1
fi
find "$dir" -name '*.gcda' -delete
nice ninja -C "$dir" >/dev/null || { echo "coverage: build failed"; exit 1; }
nice meson test -C "$dir" --no-rebuild --suite unit --suite heavy --suite report --print-errorlogs \
  >"$dir/tests.log" 2>&1
tail -n 12 "$dir/tests.log" | grep -E '^(Ok|Fail|Timeout|Skipped):' | tr '\n' ' '
echo

# The fuzz targets' replay drivers with coverage, every target
# tests/fuzz/build.sh lists (models, readers, hosts, the assembler); the
# objects they share count into one .gcda each.
fz="$dir/fuzz-replay"
rm -rf "$fz"
CC=gcc FUZZ_JOBS=2 nice tests/fuzz/build.sh "$fz" --coverage >"$dir/fuzz-build.log" 2>&1 ||
  { cat "$dir/fuzz-build.log"; echo "coverage: cannot build the fuzz replay drivers"; exit 1; }
replayed=0
for t in $(FUZZ_LIST=1 tests/fuzz/build.sh); do
  inputs=()
  for d in "tests/fuzz/corpus/$t" "tests/fuzz/known/$t" "build/fuzz/corpus/$t"; do
    [ -d "$d" ] && [ -n "$(ls -A "$d")" ] && inputs+=("$d")
  done
  [ ${#inputs[@]} -eq 0 ] && continue
  # a finding in a kept corpus must not stop the report: note it
  nice "$fz/fuzz_$t" "${inputs[@]}" >"$fz/$t.log" 2>&1 ||
    echo "coverage: replaying $t's inputs failed (see $fz/$t.log)"
  replayed=$((replayed + $(awk '/^replay:/{print $2}' "$fz/$t.log")))
done
echo "coverage: replayed $replayed fuzz inputs"

# Lines that are no code: a declaration without an initializer, a cast
# to void of an unused parameter, a static const table (data, initialised
# at compile time). At -O0 gcc gives them no line record, but at -O2
# (the heavy suites) it gives them one in a function the translation unit
# never calls, and gcovr, which merges every translation unit's records,
# would count them as missed lines: leave them out.
decl='(?!\s*(return|goto|else|case|do)\b)\s*(const\s+|unsigned\s+|signed\s+|struct\s+)*[A-Za-z_]\w*(\s+\**\s*[A-Za-z_]\w*(\[[^]=]*\])?\s*,?)+;'
void='\(void\)\s*[A-Za-z_]\w*(\s*,\s*\(void\)\s*[A-Za-z_]\w*)*;'
table='static\s+const\s+[^=;(]*=\s*(\{|").*'
nocode="^($decl|\s*$void|\s*$table)\s*(/\*.*\*/)?\s*$"
# The headers, then what parses users' text and files (the hosts' option
# parser, the trace reader, the report tool's loader), against the goals.
parsers='examples/common/hwx_(arg|opts|trace)\.c|examples/report/rp_load\.c'
for part in headers parsers; do
  filter='include/hwprof/'
  [ $part = parsers ] && filter=$parsers
  gcovr -r "$root" --object-directory "$dir" "$dir" "$fz" --filter "$filter" \
    --exclude-lines-by-pattern "$nocode" \
    --exclude-unreachable-branches --json-summary-pretty -o "$dir/coverage-$part.json" \
    --txt "$dir/coverage-$part.txt" >/dev/null 2>"$dir/gcovr.log" ||
    { cat "$dir/gcovr.log"; exit 1; }
done
python3 - "$dir" "$check" <<'PY'
import json, sys
d, check = sys.argv[1], sys.argv[2]
missed = 0
for part in ("headers", "parsers"):
    s = json.load(open(f"{d}/coverage-{part}.json"))
    print("%-28s %16s %18s  %s" % (part[:-1], "lines", "branches",
                                    "goals (lines >= 95%, branches >= 85%)"))
    for f in sorted(s["files"], key=lambda f: f["filename"]):
        lp = 100.0 * f["line_covered"] / f["line_total"] if f["line_total"] else 100.0
        bp = 100.0 * f["branch_covered"] / f["branch_total"] if f["branch_total"] else 100.0
        miss = [m for m, ok in (("lines", lp >= 95.0), ("branches", bp >= 85.0)) if not ok]
        missed += bool(miss)
        print("%-28s %6.1f%% %4d/%-4d %6.1f%% %5d/%-5d  %s" % (
            f["filename"], lp, f["line_covered"], f["line_total"], bp, f["branch_covered"],
            f["branch_total"], "met" if not miss else "missed: " + ", ".join(miss)))
if check == "1" and missed:
    print("coverage: %d file(s) below the goals" % missed)
    sys.exit(1)
PY
