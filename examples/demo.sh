#!/usr/bin/env bash
# examples/demo.sh: the README's first command. Installs what is missing
# (Debian 12 packages, via tests/deps.sh), builds hwprof with Meson, and
# runs the main demo: real Debian programs (gzip, python3) under
# qemu-x86_64 with the hwprof TCG plugin, every model on, checked against
# exact profiles of the same run (examples/qemu/demo.sh).
set -eu
cd "$(dirname "$0")/.."
. tests/deps.sh
hwp_install_deps
[ -f build/build.ninja ] || meson setup build >/dev/null
meson compile -C build >/dev/null
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
echo "Open $demo/gzip.html in a browser (one self-contained page: RAP's range tree,"
echo "the costliest instructions, hot paths, phases, invariance, overhead)."
echo "Per function: callgrind_annotate $demo/gzip.callgrind (or KCachegrind);"
echo "flame graph: flamegraph.pl $demo/gzip.folded, or load it in speedscope."
