#!/usr/bin/env bash
# System mode: runs examples/qemu/system.sh (Debian kernel + initramfs
# under qemu-system-x86_64 10, 2 vCPUs) and checks that there is one
# report per vCPU plus the merged one, and that the merged instruction,
# load and branch counts are the sums of the per-vCPU ones, and that the
# processes running one binary at the same addresses (norandmaps; in a
# run of the models' default table sizes these are busybox's shell and
# applets, whose hot code outranks the two short gzips) are separate
# address spaces: some user pc appears in the models' tables under two
# address-space tags, kernel pcs untagged; and that the breaks in the
# flow are counted by kind, the merged counts the vCPUs' sums. A TCG
# boot takes minutes (2.5 of CPU here), and system.sh installs QEMU 10
# and downloads the kernel, so the test runs only when asked
# (HWPROF_SYSTEM=1: tests/run.sh sets it, but not with --quick);
# otherwise it skips and says why.
# usage: check_system.sh PLUGIN_V4 WORKDIR
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
plugin=$1 work=$2
if [ "${HWPROF_SYSTEM:-0}" != 1 ]; then
    echo "SKIP: system mode boots a kernel under TCG (minutes): HWPROF_SYSTEM=1 meson test qemu/system"
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
# Every "pc" the models' tables name (ProfileMe's pcs, the stratified
# sampler's and the co-processor's loads): user pcs carry their address
# space in bits 48..62 (docs/qemu.md, System mode).
pcs = set()
def walk(x):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == "pc" and isinstance(v, str):
                pcs.add(int(v, 16))
            else:
                walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(merged)
kernel = {p for p in pcs if p >= 0xffff800000000000}
spaces = {}
for p in pcs - kernel:
    spaces.setdefault(p & ((1 << 47) - 1), set()).add(p >> 48)
shared = [a for a, t in spaces.items() if len(t) >= 2 and 0 not in t]
ok = len(shared) > 0
fails += not ok
print(f"{'ok  ' if ok else 'FAIL'} {len(shared)} user pcs are entries in two or more address "
      f"spaces ({len(pcs)} pcs in the tables, {len(kernel)} kernel)"
      + (f", e.g. 0x{shared[0]:x} in {sorted(spaces[shared[0]])}" if shared else ""))
ok = len(kernel) > 0
fails += not ok
print(f"{'ok  ' if ok else 'FAIL'} kernel pcs are in the tables untagged")
text = open(os.path.join(d, "report.txt")).read()
ok = "address space 2: cr3" in text
fails += not ok
print(f"{'ok  ' if ok else 'FAIL'} the report names the address spaces by CR3")
import re
def breaks(t):
    m = re.search(r"plugin: (\d+) breaks in the flow.*?: (\d+) from user code into the kernel"
                  r".*?, (\d+) from the kernel back to user code, (\d+) between address "
                  r"spaces, (\d+) with no change", t)
    return [int(x) for x in m.groups()] if m else None
per = []
for i in range(2):
    t = open(os.path.join(d, f"report.txt.vcpu{i}")).read()
    ok = "user-mode" in t and "kernel-mode" in t
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} vCPU {i} report splits user and kernel code")
    per.append(breaks(t))
# Both gzips make system calls and return from them: breaks of both
# kinds on the vCPUs, the merged count their sum, each total its kinds'.
b = breaks(text)
ok = b is not None and None not in per and b == [sum(x) for x in zip(*per)] and \
    b[0] == sum(b[1:]) and b[1] > 0 and b[2] > 0
fails += not ok
print(f"{'ok  ' if ok else 'FAIL'} breaks in the flow (total, into the kernel, back, between "
      f"spaces, same privilege): merged {b} = sum over vCPUs {per}")
sys.exit(1 if fails else 0)
PY
