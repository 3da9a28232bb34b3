#!/usr/bin/env python3
"""TBs left early: guest_smc.c stores into its own code page on every
iteration of a 7-instruction loop, and QEMU ends the loop's TB at the
store each time. The instructions after it did not run, so the plugin
must not count them: between 1000 and 3000 iterations the count grows by
exactly 7 * 2000 (counting whole TBs it would grow by 13 * 2000), and the
report names one TB left early per iteration. Checked on the block path
(models=pathprof) and the per-instruction one (exact=on).

usage: check_smc.py QEMU PLUGIN GUEST WORKDIR"""
import json
import os
import re
import subprocess
import sys
import hwtrace

qemu, plugin, guest, work = sys.argv[1:5]
hwtrace.print_qemu(qemu, plugin)
os.makedirs(work, exist_ok=True)


def run(opts, n):
    js = os.path.join(work, f"smc-{n}.json")
    txt = os.path.join(work, f"smc-{n}.txt")
    subprocess.run([qemu, "-plugin", f"{plugin},{opts},json={js},report={txt}", guest, str(n)],
                   check=True, capture_output=True, text=True, timeout=120)
    m = re.search(r"^plugin: (\d+) TBs left early", open(txt).read(), re.M)
    return json.load(open(js))["instructions"], int(m.group(1)) if m else None


fails = 0
for opts in ("models=pathprof", "models=pathprof,exact=on"):
    (i1, e1), (i3, e3) = run(opts, 1000), run(opts, 3000)
    ok = i3 - i1 == 7 * 2000
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {opts}: 2000 more iterations, {i3 - i1} more "
          f"instructions (7 * 2000 = {7 * 2000}; {i1} and {i3})")
    ok = e1 is not None and e3 is not None and e3 - e1 == 2000
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {opts}: TBs left early {e1} and {e3}, one an iteration")
sys.exit(1 if fails else 0)
