#!/usr/bin/env bash
# examples/demo.sh: the README's first command. Installs only what the
# demo needs when it is missing (tests/deps.sh --demo: Meson, ninja, gcc,
# qemu-user), builds only what it runs (the QEMU plugin, hwprof-report and
# the quickstart host; tests and benchmarks off), and runs the main demo:
# real Debian programs (gzip, python3) under qemu-x86_64 with the hwprof
# TCG plugin, every model on, checked against exact profiles of the same
# run (examples/qemu/demo.sh), then reads the gzip run back.
set -eu
cd "$(dirname "$0")/.."
. tests/deps.sh
hwp_install_deps --demo
# An existing build/ (yours, configured with everything) is used as it is.
fresh=0
if [ ! -f build/build.ninja ]; then
  meson setup build -Dtests=false -Dbench=false >/dev/null
  fresh=1
fi
ninja -C build examples/qemu/libhwprof-tcg.so examples/report/hwprof-report \
  examples/quickstart >/dev/null
bash examples/qemu/demo.sh "$PWD/build"
echo
echo "A smaller host in one file: build/examples/quickstart (examples/quickstart.c)"

# The gzip run's report, read back by hwprof-report (docs/report-format.md):
# functions named from the guest binary the plugin recorded, a page to look
# at and a profile for callgrind_annotate / KCachegrind.
demo=build/demo
echo
echo "== build/examples/report/hwprof-report $demo/gzip.json --top 5 --table pm_table =="
build/examples/report/hwprof-report "$demo/gzip.json" --top 5 --table pm_table \
  --html "$demo/gzip.html" --callgrind "$demo/gzip.callgrind" --folded "$demo/gzip.folded"
echo
echo "Look first at $demo/gzip.html in a browser (one self-contained page: RAP's"
echo "range tree, the costliest instructions, hot paths, phases, invariance, overhead)."
echo "Per function: callgrind_annotate $demo/gzip.callgrind (or KCachegrind);"
echo "flame graph: flamegraph.pl $demo/gzip.folded, or load it in speedscope."
if [ $fresh -eq 1 ]; then
  echo
  echo "build/ was set up with tests and benchmarks off: meson configure build"
  echo "-Dtests=true -Dbench=true turns them on; bash tests/run.sh builds and runs"
  echo "every suite in build directories of its own."
fi
