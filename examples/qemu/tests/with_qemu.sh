#!/usr/bin/env bash
# Runs one of the user-mode checks under a QEMU newer than Debian 12's 7.2:
# the plugin-capable qemu-x86_64 that `examples/qemu/build-qemu.sh VERSION`
# built into its cache (Debian's own qemu-user of those versions is static
# and cannot load plugins). Says which QEMU ran; skips (exit 77, and says
# why) when that QEMU has not been built, so a machine without it is
# unaffected.
# usage: with_qemu.sh VERSION CHECK.py PLUGIN ARGS...
#   runs python3 CHECK.py QEMU PLUGIN ARGS..., as the 7.2 tests run it
set -uo pipefail
ver=$1 check=$2
shift 2
case $ver in
10.0) qemu=${HWPROF_QEMU10_USER:-${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}/bin/qemu-x86_64} ;;
11.1) qemu=${HWPROF_QEMU11_USER:-${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}/bin/qemu-x86_64} ;;
*) echo "with_qemu.sh: unknown QEMU version '$ver' (10.0 or 11.1)" >&2; exit 2 ;;
esac
if [ ! -x "$qemu" ]; then
    echo "SKIP: no plugin-enabled qemu-x86_64 $ver at $qemu (bash examples/qemu/build-qemu.sh $ver)"
    exit 77
fi
echo "QEMU $ver: $qemu: $("$qemu" --version | head -1), plugin $1"
exec python3 "$check" "$qemu" "$@"
