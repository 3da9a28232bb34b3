#!/usr/bin/env python3
"""Registers from the x86 decoder (examples/common/hwx_x86.c,
hwx_x86_ops) reach the core: examples/common/regchain_check.py under
qemu-x86_64 with the plugin in full timing, registers switched off with
regs=off.

usage: check_qemu_regs.py QEMU PLUGIN REGCHAIN WORKDIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import regchain_check  # noqa: E402

qemu, plugin, guest, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def run(mode, regs):
    regs = "on" if regs else "off"
    out = os.path.join(work, f"regs-{mode}-{regs}.txt")
    r = subprocess.run([qemu, "-plugin", f"{plugin},core=on,models=core,regs={regs},report={out}",
                        guest, mode], capture_output=True, timeout=300)
    if r.returncode not in (0, 1):
        print(r.stderr.decode(errors="replace")[-400:])
        return None
    return open(out).read()


fails = regchain_check.check(run, "the x86 decoder")


def data_wait(regs):
    """ProfileMe's map -> data ready cycles summed over its samples of the
    chain (its latency register 1, from the core's data-ready cycle)."""
    out = os.path.join(work, f"regs-pm-{regs}.json")
    r = subprocess.run([qemu, "-plugin", f"{plugin},core=on,models=pm+core,pm_interval=64,"
                        f"regs={regs},report=/dev/null,json={out}", guest, "chain"],
                       capture_output=True, timeout=300)
    if r.returncode not in (0, 1):
        print(r.stderr.decode(errors="replace")[-400:])
        return -1
    pcs = json.load(open(out))["models"]["profileme"]["table"]["pcs"]
    return sum(e["lat_sum"][1] for e in pcs)


on, off = data_wait("on"), data_wait("off")
# The chain's imuls wait after map for the one before; without
# registers data ready is the map cycle, so the register stays 0.
print(("ok   " if on > 0 and off == 0 else "FAIL ") +
      f"ProfileMe's map -> data ready: {on} cycles with registers, {off} without")
fails += not (on > 0 and off == 0)
sys.exit(1 if fails else 0)
