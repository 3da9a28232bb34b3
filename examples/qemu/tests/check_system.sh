#!/usr/bin/env bash
# System mode: runs examples/qemu/system.sh (Debian kernel + initramfs
# under qemu-system-x86_64 10, 2 vCPUs) and checks that there is one
# report per vCPU plus the merged one, and that the merged instruction,
# load and branch counts are the sums of the per-vCPU ones. A TCG boot
# takes minutes (over 20 on a loaded 2-core machine), so the test runs
# only when asked (HWPROF_SYSTEM=1) and system.sh's kernel and initramfs
# are cached (run system.sh once); otherwise it skips and says why.
# usage: check_system.sh PLUGIN_V4 WORKDIR
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
plugin=$1 work=$2
cache=${HWPROF_SYSTEM_CACHE:-$HOME/.cache/hwprof/system}
if [ "${HWPROF_SYSTEM:-0}" != 1 ]; then
    echo "SKIP: system mode boots a kernel under TCG (minutes): HWPROF_SYSTEM=1 meson test qemu/system"
    exit 77
fi
if [ ! -f "$cache/vmlinuz" ] || [ ! -f "$cache/initramfs.cpio.gz" ] \
        || ! command -v qemu-system-x86_64 >/dev/null; then
    echo "SKIP: no cached kernel/initramfs in $cache or no qemu-system-x86_64 (run examples/qemu/system.sh once)"
    exit 77
fi
HWPROF_PLUGIN=$plugin HWPROF_SMP=2 bash "$here/system.sh" "$work/system" models=all || exit 1
python3 - "$work/system" <<'PY'
import json, os, sys
d = sys.argv[1]
merged = json.load(open(os.path.join(d, "report.json")))
parts = [json.load(open(os.path.join(d, f"report.json.vcpu{i}"))) for i in range(2)]
fails = 0
for key in ("instructions", "loads", "stores", "branches", "taken"):
    s = sum(p[key] for p in parts)
    ok = merged[key] == s and s > 0
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} merged {key} {merged[key]} = sum over vCPUs {s}")
for i in range(2):
    t = open(os.path.join(d, f"report.txt.vcpu{i}")).read()
    ok = "user-mode" in t and "kernel-mode" in t
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} vCPU {i} report splits user and kernel code")
sys.exit(1 if fails else 0)
PY
