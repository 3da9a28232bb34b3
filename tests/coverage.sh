#!/usr/bin/env bash
# tests/coverage.sh [BUILDDIR]: line and branch coverage of every header in
# include/hwprof by the unit and heavy suites plus the fuzz corpora.
#
# Builds with gcc --coverage in its own build directory (default
# build/coverage: never the plain or sanitizer builds), runs the unit and
# heavy suites, then replays every fuzz target's inputs through the plain
# driver (tests/fuzz/replay.c) built with coverage: the checked-in seeds
# (tests/fuzz/corpus/<target>), the findings kept as regression inputs
# (tests/fuzz/known/<target>) and what longer runs kept
# (build/fuzz/corpus/<target>, from tests/fuzz/run.sh). Prints one row
# per header with its line and branch coverage against the goals (lines
# >= 95%, branches >= 85%; gcc's branch count includes every outcome of
# every condition), and writes gcovr's per-line report to
# BUILDDIR/coverage.txt. Exits non-zero only if a step fails, not on a
# missed goal. Needs gcovr (tests/deps.sh installs it).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/coverage}
root=$PWD

. tests/deps.sh
hwp_install_deps || { echo "coverage: could not install the dependencies"; exit 1; }
command -v gcovr >/dev/null || { echo "coverage: gcovr is missing"; exit 1; }

# The hosts built against foreign runtimes (QEMU plugin, Valgrind tool)
# and the benchmarks add nothing to the headers' coverage.
opts=(-Db_coverage=true -Dwerror=true --buildtype=debug -Dqemu_plugin=disabled
      -Dvalgrind_tool=disabled -Dbench=false)
if [ -d "$dir/meson-private" ]; then
  meson setup "$dir" --reconfigure "${opts[@]}" >/dev/null || exit 1
else
  CC=gcc meson setup "$dir" "${opts[@]}" >/dev/null || exit 1
fi
find "$dir" -name '*.gcda' -delete
nice ninja -C "$dir" >/dev/null || { echo "coverage: build failed"; exit 1; }
nice meson test -C "$dir" --no-rebuild --suite unit --suite heavy --print-errorlogs \
  >"$dir/tests.log" 2>&1
tail -n 12 "$dir/tests.log" | grep -E '^(Ok|Fail|Timeout|Skipped):' | tr '\n' ' '
echo

# The fuzz targets' replay drivers, built with coverage (gcc, any target
# tests/fuzz/build.sh lists: models, readers, hosts, the assembler).
fz="$dir/fuzz-replay"
rm -rf "$fz"
mkdir -p "$fz"
flags=(-std=gnu11 -O0 -g --coverage -Iinclude -Itests -Iexamples/common)
conf=tests/conformance
hwx="examples/common/hwx_arg.c examples/common/hwx_opts.c examples/common/hwx_x86.c
  examples/common/hwx_trace.c examples/common/hwx_exact.c examples/common/hwx_session.c
  examples/common/hwx_impl.c examples/common/hwx_pm.c examples/common/hwx_rap.c
  examples/common/hwx_path.c examples/common/hwx_strat.c examples/common/hwx_cp.c
  examples/common/hwx_ctx.c examples/common/hwx_blocks.c
  examples/common/hwx_core.c"
model_src() { # target -> the conformance file of its model
  case $1 in
    rap) echo rap ;; pm|pm_table) echo profileme ;; cp|cp_simple) echo coproc ;;
    core) echo core ;; strat|strat_acc) echo stratified ;; path|hpt|phase) echo pathprof ;;
  esac
}
replayed=0
for t in $(FUZZ_LIST=1 tests/fuzz/build.sh); do
  case $t in
    json_rap) srcs=(tests/rap/fuzz_rap_json.c tests/fuzz/impl.c); defs=() ;;
    json_*) m=${t#json_}
            srcs=(tests/fuzz/fuzz_json.c "$conf/$(model_src "$m").c" tests/fuzz/impl.c)
            defs=(-DFZ_LIST="hwp_conf_$(model_src "$m")" -DFZ_NAME="$m") ;;
    cp_simple) srcs=(tests/fuzz/fuzz_cp.c "$conf/coproc.c" tests/fuzz/impl.c); defs=(-DFZ_NAME=cp_simple) ;;
    trace) srcs=(examples/replay/fuzz_trace.c $hwx); defs=(-DHWX_TRACE_FUZZING) ;;
    opts) srcs=(tests/fuzz/fuzz_opts.c $hwx); defs=() ;;
    minivm_asm) srcs=(tests/fuzz/fuzz_minivm_asm.c examples/minivm/mv_asm.c tests/fuzz/impl.c); defs=() ;;
    *) srcs=("tests/fuzz/fuzz_$t.c" "$conf/$(model_src "$t").c" tests/fuzz/impl.c); defs=() ;;
  esac
  # the entry per target (its defines), the rest once for all (their
  # counts add up in one .gcda each)
  mkdir -p "$fz/$t" "$fz/shared"
  objs=()
  for s in "${srcs[@]}" tests/fuzz/replay.c; do
    if [ "$s" = "${srcs[0]}" ]; then
      o="$fz/$t/entry.o"
      nice gcc "${flags[@]}" "${defs[@]}" -c -o "$o" "$s" || { echo "coverage: $t: cannot build $s"; exit 1; }
    else
      o="$fz/shared/$(echo "$s" | tr / _).o"
      [ -f "$o" ] || nice gcc "${flags[@]}" -c -o "$o" "$s" ||
        { echo "coverage: $t: cannot build $s"; exit 1; }
    fi
    objs+=("$o")
  done
  gcc --coverage -o "$fz/$t/replay" "${objs[@]}" -lm || exit 1
  inputs=()
  for d in "tests/fuzz/corpus/$t" "tests/fuzz/known/$t" "build/fuzz/corpus/$t"; do
    [ -d "$d" ] && [ -n "$(ls -A "$d")" ] && inputs+=("$d")
  done
  [ ${#inputs[@]} -eq 0 ] && continue
  # a finding in a kept corpus must not stop the report: note it
  nice "$fz/$t/replay" "${inputs[@]}" >"$fz/$t/log" 2>&1 ||
    echo "coverage: replaying $t's inputs failed (see $fz/$t/log)"
  replayed=$((replayed + $(awk '/^replay:/{print $2}' "$fz/$t/log")))
done
echo "coverage: replayed $replayed fuzz inputs"

gcovr -r "$root" --object-directory "$dir" "$dir" "$fz" --filter 'include/hwprof/' \
  --exclude-unreachable-branches --json-summary-pretty -o "$dir/coverage.json" \
  --txt "$dir/coverage.txt" >/dev/null 2>"$dir/gcovr.log" ||
  { cat "$dir/gcovr.log"; exit 1; }
python3 - "$dir/coverage.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("%-28s %16s %18s  %s" % ("header", "lines", "branches", "goals (lines >= 95%, branches >= 85%)"))
for f in sorted(s["files"], key=lambda f: f["filename"]):
    lp = 100.0 * f["line_covered"] / f["line_total"] if f["line_total"] else 100.0
    bp = 100.0 * f["branch_covered"] / f["branch_total"] if f["branch_total"] else 100.0
    miss = [m for m, ok in (("lines", lp >= 95.0), ("branches", bp >= 85.0)) if not ok]
    print("%-28s %6.1f%% %4d/%-4d %6.1f%% %5d/%-5d  %s" % (
        f["filename"], lp, f["line_covered"], f["line_total"], bp, f["branch_covered"],
        f["branch_total"], "met" if not miss else "missed: " + ", ".join(miss)))
PY
