#!/usr/bin/env bash
# System mode: runs examples/qemu/system.sh (Debian kernel + initramfs
# under qemu-system-x86_64 10 or 11.1, 2 vCPUs) and checks that there is one
# report per vCPU plus the merged one, and that the merged instruction,
# load and branch counts are the sums of the per-vCPU ones, and that the
# processes running one binary at the same addresses (norandmaps; in a
# run of the models' default table sizes these are busybox's shell and
# applets, whose hot code outranks the two short gzips) are separate
# address spaces: some user pc appears in the models' tables under two
# address-space tags, kernel pcs untagged; and that the breaks in the
# flow are counted by kind, the merged counts the vCPUs' sums. A TCG
# boot takes minutes (2.5 of CPU here), and system.sh installs QEMU 10
# (install-qemu11.sh QEMU 11.1) and downloads the kernel, so the test runs
# only when asked (HWPROF_SYSTEM=1: tests/run.sh sets it, but not with
# --quick); otherwise it skips and says why.
# usage: check_system.sh PLUGIN WORKDIR [QEMU]
#   QEMU  10.0 (default: bookworm-backports', PLUGIN the API 4 build) or
#         11.1 (trixie-backports', PLUGIN the API 7 build)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
plugin=$1 work=$2 ver=${3:-10.0}
if [ "${HWPROF_SYSTEM:-0}" != 1 ]; then
    echo "SKIP: system mode boots a kernel under TCG (minutes): HWPROF_SYSTEM=1 meson test qemu/system"
    exit 77
fi
qemu=
if [ "$ver" = 11.1 ]; then
    qemu=$(bash "$here/install-qemu11.sh") || exit 1
fi
out=$work/system-$ver
HWPROF_QEMU_SYSTEM=$qemu HWPROF_PLUGIN=$plugin HWPROF_SMP=2 \
    bash "$here/system.sh" "$out" models=all || exit 1
python3 - "$out" "$ver" <<'PY'
import json, os, sys
d, ver = sys.argv[1:3]
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
# TBs left early (a boot's stores into pages of code running: the
# kernel's own patching among them): counted, the merged count the sum.
def counts(t, pattern):
    m = re.search(pattern, t)
    return [int(x) for x in m.groups()] if m else None
vcpu_texts = [open(os.path.join(d, f"report.txt.vcpu{i}")).read() for i in range(2)]
pat = r"plugin: (\d+) TBs left early.*?, (\d+) instructions that did not retire"
e, per_e = counts(text, pat), [counts(t, pat) for t in vcpu_texts]
ok = e is not None and None not in per_e and e == [sum(x) for x in zip(*per_e)] and e[0] > 0
fails += not ok
print(f"{'ok  ' if ok else 'FAIL'} TBs left early, instructions not retired: merged {e} = "
      f"sum over vCPUs {per_e}")
# QEMU 11.1 (API 7): the discontinuity callbacks. On x86 each exception
# is told twice (raised, then delivered as an interrupt), so interrupts
# outnumber exceptions; each delivery ends the TB that ran before it with
# a break: as many breaks told as deliveries, less the few that follow
# another one before any TB ran (nested), and within the breaks' total.
if ver == "11.1":
    pat = (r"discontinuity callbacks: (\d+) interrupts .*?, (\d+) exceptions, (\d+) host "
           r"calls; (\d+) TBs ended by a break they told")
    t, per_t = counts(text, pat), [counts(x, pat) for x in vcpu_texts]
    ok = t is not None and None not in per_t and t == [sum(x) for x in zip(*per_t)] and \
        t[0] > t[1] > 0 and 0.99 * t[0] <= t[3] <= t[0] and b is not None and t[3] <= b[0]
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} QEMU told interrupts, exceptions, host calls, breaks told: "
          f"merged {t} = sum over vCPUs {per_t}; {b[0] if b else None} breaks in all")
sys.exit(1 if fails else 0)
PY
