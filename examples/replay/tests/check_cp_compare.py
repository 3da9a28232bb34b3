#!/usr/bin/env python3
"""hwprof-cp-compare's convergence curve (checkpoints=N): its points are
copies of the running instances, so asking for them changes nothing else
the tool prints; the last point is the end of the run, so it gives the
tool's final figures (the co-processor's overhead and error, and the
first baseline seed's at the equal-overhead period); overhead cycles never
go down along a curve. Two vCPU streams, so the copies are merged as the
instances are.

usage: check_cp_compare.py CP_COMPARE MAKE_TRACE WORKDIR
"""
import os
import re
import subprocess
import sys

tool, make_trace, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
trace = os.path.join(work, "cp_small.hwpt")
subprocess.run([make_trace, "--vcpu2", "3", trace, "400000"], check=True)
fails = 0


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    fails += 0 if ok else 1


def run(*opts):
    return subprocess.run([tool, trace, "seeds=2"] + list(opts), capture_output=True, text=True,
                          timeout=300, check=True).stdout


plain, cur = run(), run("checkpoints=4")
rows = [[float(v) for v in ln.split()[1:]] for ln in cur.splitlines()
        if re.match(r"checkpoint \d", ln)]
loads = int(re.search(r"^(\d+) loads", cur, re.M).group(1))
cp = re.search(r"^co-processor: (\d+) cycles", cur, re.M)
cp_err = re.search(r"^coproc +wrms ([\d.]+)", cur, re.M)
base = re.search(r"^baseline: period \d+, (\d+) cycles", cur, re.M)
base_err = re.search(r"^baseline +wrms ([\d.]+)", cur, re.M)
check("checkpoints=4 leaves the other lines as they were",
      [ln for ln in cur.splitlines() if not ln.startswith(("checkpoint", "reach"))]
      == plain.splitlines(), "the co-processor or a sampler changed")
check("4 points", len(rows) == 4, f"{len(rows)} rows")
check("the last point is every load", rows and rows[-1][0] == loads, f"{rows[-1:]}, {loads}")
check("the last point is the co-processor's final overhead and error",
      rows and (rows[-1][1], f"{rows[-1][2]:.4f}") == (float(cp.group(1)), cp_err.group(1)),
      f"{rows[-1][1:3]} against {cp.group(1)} {cp_err.group(1)}")
check("the last point at the period P is the first baseline seed's overhead and error",
      rows and (rows[-1][5], f"{rows[-1][6]:.4f}") == (float(base.group(1)), base_err.group(1)),
      f"{rows[-1][5:7]} against {base.group(1)} {base_err.group(1)}")
for col, who in ((1, "co-processor"), (3, "sampler P/4"), (5, "sampler P"), (7, "sampler 4P")):
    ys = [r[col] for r in rows]
    check(f"{who}: overhead never goes down", ys == sorted(ys), f"{ys}")
check("a reach line", re.search(r"^reach [\d.]+ .*co-processor first: (yes|no)$", cur, re.M))
sys.exit(1 if fails else 0)
