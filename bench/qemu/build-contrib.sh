#!/usr/bin/env bash
# Builds QEMU's own contrib TCG plugins, the ones QEMU users know, from the
# source of the QEMU they run under, so bench/qemu/api.sh can run them
# beside hwprof's configurations. Of hotblocks, cache, bbv and uftrace it
# builds those the version has, and prints the directory they are in
# (lib<name>.so).
#
#   bash bench/qemu/build-contrib.sh [7.2|10.0|11.1]
#
#   7.2 (default)  Debian 12's qemu-user (plugin API 1): the source package
#                  of the installed version (deb-src line for bookworm
#                  added when apt knows no such source), into
#                  ${HWPROF_QEMU72_CACHE:-$HOME/.cache/hwprof/qemu-7.2}
#   10.0, 11.1     the source examples/qemu/build-qemu.sh unpacked for the
#                  qemu-x86_64 it built (plugin API 4, 7), in its cache
#                  (HWPROF_QEMU_CACHE, HWPROF_QEMU11_CACHE): build that
#                  first; without it this exits 77 with the reason
#
# Flags as upstream's contrib/plugins build: glib's pkg-config flags,
# -fPIC -Wall, -I include/qemu, -shared, and -O2, as newer QEMUs' meson
# build of them (optimization=2). 7.2's Makefile sets no -O level: built
# that way its cache plugin takes twice the time (gzip -9 of the corpus's
# mixed file: 2.14 s of user CPU against 1.03 s), a weaker peer.
# Installs pkg-config, libglib2.0-dev and dpkg-dev through apt when
# missing (root).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../examples/qemu/qemu-source.sh"
ver=${1:-7.2}
skip() { echo "build-contrib: QEMU $ver: $*" >&2; exit 77; }
case $ver in
7.2) cache=${HWPROF_QEMU72_CACHE:-$HOME/.cache/hwprof/qemu-7.2}
     srcver=$(dpkg-query -W -f='${db:Status-Status} ${source:Version}' qemu-user 2>/dev/null) || true
     [ "${srcver%% *}" = installed ] || skip "Debian's qemu-user is not installed"
     srcver=${srcver#* }
     command -v dpkg-source >/dev/null || hwq_apt install -y -qq dpkg-dev >/dev/null
     hwq_src_line bookworm bookworm-updates -- "$(printf '%s' "$srcver" | sed 's/[].[\*^$]/\\&/g')$"
     # One tree per source version (an upgraded qemu-user gets its own),
     # with Debian's patches: the stable releases its binary was built from.
     src=$(hwq_src_unpack "$cache/src/${srcver#*:}" "qemu=$srcver") ;;
10.0 | 11.1)
     if [ "$ver" = 10.0 ]; then
         cache=${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}
     else
         cache=${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}
     fi
     src=$(ls -d "$cache"/src/qemu-*/contrib/plugins 2>/dev/null | sed -n 1p) || true
     [ -n "$src" ] || skip "no source at $cache/src (bash examples/qemu/build-qemu.sh $ver unpacks it and builds the qemu-x86_64 these plugins load into)"
     src=${src%/contrib/plugins} ;;
*) echo "build-contrib: unknown QEMU version '$ver' (7.2, 10.0 or 11.1)" >&2; exit 2 ;;
esac
pkg-config --exists glib-2.0 2>/dev/null || hwq_apt install -y -qq pkg-config libglib2.0-dev >/dev/null
out=$cache/contrib
mkdir -p "$out"
read -ra glib_cflags <<< "$(pkg-config --cflags glib-2.0)"
read -ra glib_libs <<< "$(pkg-config --libs glib-2.0)"
for p in hotblocks cache bbv uftrace; do
    c=$src/contrib/plugins/$p.c so=$out/lib$p.so
    if [ ! -f "$c" ]; then
        rm -f "$so"
        echo "build-contrib: QEMU $ver has no contrib/plugins/$p.c" >&2
    elif [ ! -f "$so" ] || [ "$so" -ot "$c" ] || [ "$so" -ot "$0" ]; then
        "${CC:-cc}" "${glib_cflags[@]}" -O2 -fPIC -Wall -I"$src/include/qemu" -shared \
            -Wl,-soname,"lib$p.so" -o "$so.tmp" "$c" "${glib_libs[@]}"
        mv "$so.tmp" "$so"
    fi
done
echo "$out"
