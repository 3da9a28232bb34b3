#!/usr/bin/env python3
"""Phase detection on a program with known phases: guest_phases runs
A B A B A, so there are four phase changes and phase A recurs. Runs it
under the plugin with the path profiler (1M-instruction intervals) and
asserts that the path-based detector (Vaswani, Jacob & Srikant, sec. 6) finds every change
(at least 4 flagged changes, at most 2 per true one), that A's intervals
get the same phase id when A returns, and that its change marks agree with
the BBV reference detector on at least 90% of intervals.

usage: check_phases.py QEMU PLUGIN GUEST WORKDIR"""
import json
import os
import subprocess
import sys
import hwtrace

qemu, plugin, guest, work = sys.argv[1:5]
hwtrace.print_qemu(qemu, plugin)
os.makedirs(work, exist_ok=True)
js = os.path.join(work, "phases.json")
opts = (f"path=on,path_interval=1000000,exact=on,json={js},"
        f"report={os.path.join(work, 'phases.txt')}")
subprocess.run([qemu, "-plugin", f"{plugin},{opts}", guest, "400000"],
               check=True, stdout=subprocess.DEVNULL, timeout=300)
rep = json.load(open(js))
pp = rep["models"]["pathprof"]
ids, ref = pp["phase_ids"], pp["bbv_ids"]
changes = sum(1 for i in range(1, len(ids)) if ids[i] != ids[i - 1])
print(f"intervals {len(ids)}, phase ids {''.join(chr(48 + min(i, 40)) for i in ids)}")
print(f"BBV reference   {''.join(chr(48 + min(i, 40)) for i in ref)}")
fails = 0


def check(label, ok, value):
    global fails
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {label}: {value}")


check("at least 4 phase changes found", changes >= 4, changes)
check("at most 8 changes flagged", changes <= 8, changes)
# Runs of one id that last at least 3 intervals: the phases. A, B, A, B, A.
runs = []
for i, p in enumerate(ids):
    if runs and runs[-1][0] == p:
        runs[-1][1] += 1
    else:
        runs.append([p, 1])
long_runs = [p for p, n in runs if n >= 3]
check("five long phase runs", len(long_runs) == 5, long_runs)
check("phase A recurs with one id",
      len(long_runs) == 5 and long_runs[0] == long_runs[2] == long_runs[4], long_runs)
check("phase B recurs with one id",
      len(long_runs) == 5 and long_runs[1] == long_runs[3], long_runs)
agree = rep.get("accuracy", {}).get("phase_agree_pct", {}).get("value")
check("change marks agree with the BBV reference >= 90%",
      agree is not None and agree >= 90.0, agree)
sys.exit(1 if fails else 0)
