#!/usr/bin/env python3
"""Registers from VEX IR reach the core: examples/common/regchain_check.py
under the Valgrind tool, registers switched off with --hwprof-regs=no.

usage: check_vg_regs.py VALGRIND LIBDIR REGCHAIN WORKDIR
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import regchain_check  # noqa: E402

valgrind, libdir, guest, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, VALGRIND_LIB=libdir)


def run(mode, regs):
    regs = "yes" if regs else "no"
    out = os.path.join(work, f"{mode}-regs-{regs}.txt")
    r = subprocess.run([valgrind, "--tool=hwprof", "-q", "--vgdb=no", f"--hwprof-regs={regs}",
                        "--core=on", "--models=core", "--report=" + out, guest, mode],
                       capture_output=True, timeout=300, env=env)
    if r.returncode not in (0, 1):
        print(r.stderr.decode(errors="replace")[-400:])
        return None
    return open(out).read()


sys.exit(1 if regchain_check.check(run, "VEX IR") else 0)
