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
