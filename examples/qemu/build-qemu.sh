#!/usr/bin/env bash
# Builds qemu-x86_64 (user mode) with TCG plugins from a Debian source
# package, so the plugin's newer-API builds can profile user-mode programs:
# Debian's own qemu-user of those versions is static and cannot load
# plugins. Only the x86_64-linux-user target is built.
#
#   bash examples/qemu/build-qemu.sh [10.0|11.1]    (prints the binary's path)
#
#   10.0 (default)  bookworm-backports' QEMU 10.0 (plugin API 4), cached in
#                   ${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}
#   11.1            trixie-backports' QEMU 11.1 (plugin API 7), cached in
#                   ${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}
#
# Each cache holds src/, build/ and bin/qemu-x86_64. Needs root for apt (a
# deb-src line, the build dependencies). Takes long on two cores: run it
# under nice.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ver=${1:-10.0}
case $ver in
10.0) cache=${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}
      suite=bookworm-backports ;;
11.1) cache=${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}
      suite=trixie-backports ;;
*) echo "build-qemu: unknown QEMU version '$ver' (10.0 or 11.1)" >&2; exit 2 ;;
esac
bin=$cache/bin/qemu-x86_64
if [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1; then
    echo "$bin"; exit 0
fi
. "$here/qemu-source.sh"

# 10.0: the QEMU 10 that install-qemu10.sh installs from bookworm-backports
# picks the source version. 11.1: trixie-backports' source alone (a deb-src
# line installs nothing of Debian 13).
if [ "$ver" = 10.0 ]; then
    bash "$here/install-qemu10.sh" >&2
    want="qemu=$(dpkg-query -W -f='${Version}' qemu-system-x86)" have='~bpo12'
else
    want="qemu/$suite" have='1:11\.1\.'
fi
hwq_src_line "$suite" -- "$have"
# Build dependencies of the x86_64-linux-user target with plugins (not the
# whole package's list: no system emulators, firmware or docs).
hwq_apt install -y -qq dpkg-dev ninja-build meson python3-venv pkg-config \
    libglib2.0-dev flex bison >/dev/null
# Upstream source alone: the user-mode build needs none of Debian's changes.
srcdir=$(hwq_src_unpack "$cache/src" "$want" --skip-debianization)
# QEMU 10's and 11's configure need meson >= 1.5 (Debian 12 has 1.0) and
# pycotap. The backports packages are unpacked into the cache rather than
# installed, so the system's meson (what hwprof itself builds with) stays.
if [ ! -d "$cache/meson/usr/lib/python3/dist-packages/mesonbuild" ]; then
    mkdir -p "$cache/meson"
    (cd "$cache/meson" && apt-get download -qq meson/bookworm-backports \
        python3-pycotap/bookworm-backports >&2 \
        && for d in *.deb; do dpkg -x "$d" .; done)
fi
export PYTHONPATH=$cache/meson/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}
mkdir -p "$cache/build"
cd "$cache/build"
if [ ! -f build.ninja ]; then
    "$srcdir/configure" --python=/usr/bin/python3 --target-list=x86_64-linux-user --enable-plugins \
        --disable-docs --disable-install-blobs --disable-werror --disable-tools --disable-guest-agent \
        --without-default-features --prefix="$cache" >&2
fi
nice ninja -j"$(nproc)" qemu-x86_64 >&2
mkdir -p "$cache/bin"
cp qemu-x86_64 "$bin.tmp" && mv "$bin.tmp" "$bin"
"$bin" --version >&2
echo "$bin"
