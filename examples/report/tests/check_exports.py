#!/usr/bin/env python3
"""examples/report/tests/check_exports.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE MAKE_BLOCKS WORKDIR

hwprof-report's exports against the report they come from, the expected
figures computed here from the report's JSON (written by the models):
  - --callgrind: Debian's callgrind_annotate reads it, and its PROGRAM
    TOTALS equal the report's: ProfileMe samples, estimated fetches and
    latency summed over the table's PCs, RAP's events (the tree's node
    counters sum to the events it counted);
  - --folded: the counts sum to the estimated fetches;
  - --csv: one row per PC of the table;
  - --bbv: exp-bbv lines "T:id:count ..." equal to the vectors of
    make_blocks' program (three blocks, B every third iteration),
    computed here from its description.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from rp_check import Checks

tool, replay, make_trace, make_blocks, work = sys.argv[1:6]
check = Checks(work)
p = check.path


N = 200000
subprocess.run([make_trace, p("t.trc"), str(N)], check=True)
subprocess.run([replay, p("t.trc"), "models=all", "json=" + p("all.json"), "report=" + p("all.txt")],
               check=True, capture_output=True)
rep = json.load(open(p("all.json")))
pm = rep["models"]["profileme"]["table"]
rap = rep["models"]["rap"]
rnd = lambda x: int(x + 0.5)
want = {
    "PM_Samples": sum(e["samples"] for e in pm["pcs"]),
    "PM_Fetches": sum(rnd(e["est"]) for e in pm["pcs"]),
    "PM_Latency": sum(rnd(e["latency"]) for e in pm["pcs"]),
    "RAP_Events": sum(r["count"] for r in rap["ranges"]),
}
check(want["PM_Samples"] > 0 and want["RAP_Events"] == rap["stats"]["n"],
      f"the report has samples and its tree holds every event: {want}")

r = subprocess.run([tool, "--quiet", "--callgrind", p("cg.out"), "--folded", p("folded.txt"),
                    "--table", "pm_table", "--csv", p("pm.csv"), p("all.json")],
                   capture_output=True, text=True)
check(r.returncode == 0, f"exports: {r.stderr}")

if shutil.which("callgrind_annotate"):
    a = subprocess.run(["callgrind_annotate", p("cg.out")], capture_output=True, text=True)
    check(a.returncode == 0, f"callgrind_annotate: {a.stderr}")
    check("WARNING" not in a.stderr, f"callgrind_annotate warns: {a.stderr}")
    events = re.search(r"^Events shown:\s+(.*)$", a.stdout, re.M).group(1).split()
    tot = [l for l in a.stdout.splitlines() if "PROGRAM TOTALS" in l]
    check(len(tot) == 1, "callgrind_annotate prints PROGRAM TOTALS")
    nums = [int(t.replace(",", "")) for t in (tot[0].split() if tot else [])
            if re.fullmatch(r"[\d,]+", t)]
    got = dict(zip(events, nums))
    for k, v in want.items():
        check(got.get(k) == v, f"callgrind_annotate total {k}: {got.get(k)}, report {v}")
else:
    check(False, "callgrind_annotate is not installed (valgrind package, tests/deps.sh)")

folded = open(p("folded.txt")).read().splitlines()
check(all(re.fullmatch(r"[^ ]+ \d+", l) for l in folded), "folded: 'frames count' lines")
check(sum(int(l.rsplit(" ", 1)[1]) for l in folded) == want["PM_Fetches"],
      "folded: counts sum to the estimated fetches")

rows = open(p("pm.csv")).read().splitlines()
check(rows[0].startswith("pc,symbol,samples,fetches"), f"csv header: {rows[0]}")
check(len(rows) - 1 == len(pm["pcs"]), f"csv: a row per PC ({len(rows) - 1}, {len(pm['pcs'])})")
check(sum(int(l.split(",")[2]) for l in rows[1:]) == want["PM_Samples"], "csv: samples sum")

# basic-block vectors of make_blocks' program
ITER, I = 3000, 1000
subprocess.run([make_blocks, p("b.trc"), str(ITER)], check=True)
seq = []
for i in range(ITER):
    seq += [1] * 3 + ([2] * 5 if i % 3 == 0 else []) + [3] * 2
want_lines = []
for at in range(0, len(seq), I):
    part = seq[at:at + I]
    order = []
    for k in part:
        if k not in order:
            order.append(k)
    want_lines.append("T" + "".join(f":{k}:{part.count(k)} " for k in order))
r = subprocess.run([tool, "--bbv", p("b.bbv"), "--trace", p("b.trc"), "--interval", str(I)],
                   capture_output=True, text=True)
check(r.returncode == 0, f"--bbv: {r.stderr}")
lines = open(p("b.bbv")).read().splitlines()
check(len(want_lines) > 10 and lines == want_lines,
      f"--bbv: the program's vectors ({len(lines)} lines; first {lines[:2]}, want {want_lines[:2]})")
r = subprocess.run([tool, "--bbv", p("x.bbv"), "--trace", p("all.json")], capture_output=True,
                   text=True)
check(r.returncode == 1 and "all.json: byte" in r.stderr, f"--bbv of a non-trace: {r.stderr}")

check.done()
