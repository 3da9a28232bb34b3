#!/usr/bin/env python3
"""RAP on code fed from the plugin's per-TB counters (models=rap: the TBs
counted inline and handed on in bulk, docs/qemu.md "RAP fed in bulk")
against the exact counts of the same run: the exact-counting peer plugin
is loaded beside hwprof's (two -plugin options, one execution) and writes
every TB's executions (tbs=), so the exact weight of a range is the
instructions of the TBs that start in it, the keys RAP saw. Every hot
range must keep RAP's guarantees: its sum a lower bound, its upper bound
above the truth, the miss within the bound of docs/rap.md with the
largest update drain= + a TB; and the paper's average hot-range error
must stay within the accuracy tests' 3%. The per-TB path (drain=0) runs
the same way for comparison.

usage: check_rap_tally.py QEMU PLUGIN PEER WORKDIR NAME -- PROGRAM ARGS..."""
import json
import os
import subprocess
import sys

import hwtrace
import hwx_thresholds

qemu, plugin, peer, work, name = sys.argv[1:6]
prog = sys.argv[sys.argv.index("--") + 1:]
hwtrace.print_qemu(qemu, plugin)
os.makedirs(work, exist_ok=True)
DRAIN = 4096    # the plugin's default drain=
MAX_TB = 512    # instructions in a TB at most (TCG_MAX_INSNS)
check = hwx_thresholds.Checks(name + ": ")


def run(drain):
    base = os.path.join(work, f"{name}-drain{drain}")
    opts = (f"models=rap,rap_kb=8,rap_eps=0.1,drain={drain},"
            f"report={base}.txt,json={base}.json")
    r = subprocess.run([qemu, "-plugin", f"{plugin},{opts}",
                        "-plugin", f"{peer},tbs={base}.tbs"] + prog,
                       env=hwx_thresholds.guest_env(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    if r.returncode != 0:
        sys.exit(f"{name}: program failed ({r.returncode}): {r.stderr.decode()[-500:]}")
    weight = {}
    for line in open(base + ".tbs"):
        pc, n, count = line.split()
        weight[int(pc, 16)] = weight.get(int(pc, 16), 0) + int(n) * int(count)
    return json.load(open(base + ".json")), open(base + ".txt").read(), weight


def hot(rep, weight):
    """Each hot range: lo, hi, RAP's sum and upper bound, the exact weight."""
    for h in rep["models"]["rap"]["hot"]:
        lo, hi = int(h["lo"], 16), int(h["hi"], 16)
        yield lo, hi, h["sum"], h["upper"], sum(w for pc, w in weight.items() if lo <= pc <= hi)


def err(lower, true):
    return 100.0 * abs(true - lower) / true if true else 0.0


rep, txt, weight = run(DRAIN)
check("the counters fed RAP", "a counter of its own" in txt)
check("instructions == the peer's", rep["instructions"] == sum(weight.values()),
      f"{rep['instructions']} {sum(weight.values())}")
rap = rep["models"]["rap"]
# docs/rap.md, "The bound": at most 5 eps n + levels w_max, w_max the
# largest update, here a counter handed on below drain= plus the TB that
# took it over.
bound = 5 * rap["desc"]["eps"] * rap["stats"]["n"] + rap["stats"]["levels"] * (DRAIN + MAX_TB)
errs = []
for lo, hi, lower, upper, true in hot(rep, weight):
    check(f"[{lo:#x}, {hi:#x}]: sum {lower} <= exact {true} <= upper {upper}, "
          f"miss <= {bound:.0f}", lower <= true <= upper and true - lower <= bound)
    errs.append(err(lower, true))
check("hot ranges found", bool(errs), len(errs))
mean = sum(errs) / max(len(errs), 1)
check("RAP avg hot-range error <= 3%", errs and mean <= 3.0, f"{mean:.3f}%")
rep0, _, weight0 = run(0)
per_tb = [err(lower, true) for _, _, lower, _, true in hot(rep0, weight0)]
print(f"{name}: avg hot-range error {mean:.3f}% over {len(errs)} ranges fed in bulk, "
      f"{sum(per_tb) / max(len(per_tb), 1):.3f}% over {len(per_tb)} fed per TB")
check.exit()
