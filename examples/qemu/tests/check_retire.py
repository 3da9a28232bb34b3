#!/usr/bin/env python3
"""Code that is gone, under the plugin (examples/common/retire_check.py):
the plugin sees the guest's munmap and folds RAP's ranges there.

usage: check_retire.py QEMU PLUGIN GUEST WORKDIR REPLAY"""
import json
import os
import re
import subprocess
import sys
import hwtrace
import retire_check

qemu, plugin, guest, work, replayer = sys.argv[1:6]
hwtrace.print_qemu(qemu, plugin)
os.makedirs(work, exist_ok=True)


def run(mode, opts, record=None):
    js = os.path.join(work, f"retire-{mode}.json")
    txt = os.path.join(work, f"retire-{mode}.txt")
    opts = ",".join(f"{k}={v}" for k, v in opts.items())
    if record:
        opts += f",record={record}"
    out = subprocess.run([qemu, "-plugin", f"{plugin},{opts},json={js},report={txt}", guest, mode],
                         check=True, capture_output=True, text=True, timeout=300).stdout
    a, b = (int(x, 16) for x in out.split()[:2])
    m = re.search(r"^plugin: (\d+) ranges unmapped \(\d+ bytes\): RAP's code ranges there retired",
                  open(txt).read(), re.M)
    return a, b, json.load(open(js))["models"]["rap"], int(m.group(1)) if m else None


sys.exit(0 if retire_check.check(run, "qemu", replayer, work) else 1)
