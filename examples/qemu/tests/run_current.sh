#!/usr/bin/env bash
# The user-mode checks on the current plugin API: the API 4 plugin under
# qemu-x86_64 10 built by examples/qemu/build-qemu.sh (Debian's own
# qemu-user 10 is static and cannot load plugins). Skips (exit 77, and
# says so) when that binary has not been built.
# usage: run_current.sh PLUGIN_V4 GUEST_COUNTS GUEST_EXIT WORKDIR SRCDIR REGCHAIN
set -uo pipefail
plugin=$1 counts=$2 gexit=$3 work=$4 src=$5 regchain=$6
qemu=${HWPROF_QEMU10_USER:-${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}/bin/qemu-x86_64}
if [ ! -x "$qemu" ]; then
    echo "SKIP: no plugin-enabled qemu-x86_64 10 at $qemu (run examples/qemu/build-qemu.sh)"
    exit 77
fi
echo "QEMU: $qemu: $("$qemu" --version | head -1)"
rc=0
python3 "$src/check_counts.py" "$qemu" "$plugin" "$counts" "$work/counts" || rc=1
python3 "$src/check_faults.py" "$qemu" "$plugin" "$gexit" "$work/faults" || rc=1
python3 "$src/check_qemu_regs.py" "$qemu" "$plugin" "$regchain" "$work/regs" || rc=1
exit $rc
