#!/usr/bin/env python3
"""Accuracy thresholds on a real program: runs it under qemu-x86_64 with
every model and exact=on, and asserts each model's paper metric against
the exact profile (the thresholds are in
examples/common/hwx_thresholds.py).

usage: check_accuracy.py QEMU PLUGIN WORKDIR NAME [--wide-paths] [--coproc-compare] -- PROGRAM ARGS...
(stdin of the program is /dev/null; put inputs in ARGS; --wide-paths: the
HPT rule for a program whose path working set no 512-entry table holds,
see hwx_thresholds.py; --coproc-compare: require the co-processor's
error below the buffered sampler's mean minus one sd, the paper's claim,
on a program where it holds)."""
import json
import os
import subprocess
import sys
import hwtrace

import hwx_thresholds

qemu, plugin, work, name = sys.argv[1:5]
prog = sys.argv[sys.argv.index("--") + 1:]
hwtrace.print_qemu(qemu, plugin)
os.makedirs(work, exist_ok=True)
js = os.path.join(work, name + ".json")
txt = os.path.join(work, name + ".txt")
opts = ("models=all,exact=on,rap_kb=8,rap_eps=0.1,hpt=512x4,"
        f"report={txt},json={js}")
r = subprocess.run([qemu, "-plugin", f"{plugin},{opts}"] + prog,
                   env=hwx_thresholds.guest_env(),
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE, timeout=600)
if r.returncode != 0:
    sys.exit(f"{name}: program failed ({r.returncode}): {r.stderr.decode()[-500:]}")
rep = json.load(open(js))
print(f"{name}: {rep['instructions']} instructions")
check = hwx_thresholds.Checks(name + ": ")
flags = sys.argv[5:sys.argv.index("--")]
hwx_thresholds.check_report(rep, check, wide_paths="--wide-paths" in flags,
                            coproc_compare="--coproc-compare" in flags)
check.exit()
