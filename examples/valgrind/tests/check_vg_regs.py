#!/usr/bin/env python3
"""Registers from VEX IR reach the core: with core=on the tool hands the
core each instruction's source and destination registers and its op
class, so a chain of N dependent multiplies (regchain.c) takes at least
N x the 21264's multiply latency (7 cycles, core.h's lat_mul default),
while the same multiplies without the chain, or the chain with
--hwprof-regs=no, run at the issue rate (under 2 cycles an iteration of
3 or 4 instructions). The report names where the registers came from.

usage: check_vg_regs.py VALGRIND LIBDIR REGCHAIN WORKDIR
"""
import os
import re
import subprocess
import sys

valgrind, libdir, guest, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, VALGRIND_LIB=libdir)
N = 1000000        # regchain.c's iterations
LAT_MUL = 7        # the Alpha 21264's integer multiply latency
fails = 0


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    fails += 0 if ok else 1


def run(mode, regs):
    out = os.path.join(work, f"{mode}-regs-{regs}.txt")
    r = subprocess.run([valgrind, "--tool=hwprof", "-q", "--vgdb=no", f"--hwprof-regs={regs}",
                        "--core=on", "--models=core", "--report=" + out, guest, mode],
                       capture_output=True, timeout=300, env=env)
    if r.returncode not in (0, 1):
        check(f"{mode} regs={regs}: runs", False, r.stderr.decode(errors="replace")[-400:])
        return 0, ""
    text = open(out).read()
    core = text[text.find("-- modelled core"):]
    m = re.search(r"^  cycles +(\d+)", core, re.M)
    return (int(m.group(1)) if m else 0), core


cyc, core = run("chain", "yes")
check("chain: registers from VEX IR", "(registers from VEX IR: timing with dependences)" in core,
      core[-300:])
check(f"chain: {cyc} cycles >= N x lat_mul = {N * LAT_MUL}", cyc >= N * LAT_MUL)
cyc, core = run("indep", "yes")
check(f"independent: {cyc} cycles < 2 N", 0 < cyc < 2 * N)
cyc, core = run("chain", "no")
check("chain, --hwprof-regs=no: says no registers",
      "(no registers from this host: timing without dependences)" in core, core[-300:])
check(f"chain, --hwprof-regs=no: {cyc} cycles < 2 N", 0 < cyc < 2 * N)
sys.exit(1 if fails else 0)
