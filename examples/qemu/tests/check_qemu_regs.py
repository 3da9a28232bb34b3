#!/usr/bin/env python3
"""Registers from the x86 decoder (examples/common/hwx_x86.c,
hwx_x86_ops) reach the core: examples/common/regchain_check.py under
qemu-x86_64 with the plugin in full timing, registers switched off with
regs=off.

usage: check_qemu_regs.py QEMU PLUGIN REGCHAIN WORKDIR
"""
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
# The decoder reads each instruction's own bytes, so a register written
# earlier in the same block is a dependence too (regchain.c "block").
text = run("block", True)
cyc = regchain_check.core_cycles(text or "")
need = regchain_check.N * regchain_check.LAT_MUL
print(("ok   " if cyc >= need else "FAIL ") + f"chain within a block: {cyc} cycles >= {need}")
fails += cyc < need
sys.exit(1 if fails else 0)
