#!/usr/bin/env python3
"""examples/report/tests/check_rap2.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR

hwprof-report on the 2-D RAP model (rap2: the replayer with
rap_key=pcaddr profiles (PC, data address) pairs) over make_trace's loop
(N records over eight PCs from 0x401000: a load at k = 0, 3, 6, a store
at k = 1, 4, where k = i % 8, at address 0x600000 + 8 * (i % 64)). The
exact pair counts come from that description, never from the tools:
  - every rectangle of the table holds the exact count of the pairs in
    it between its lower and upper bounds, and the nodes' own counts sum
    to the pairs profiled;
  - --csv has every row; the merged --json reads back to the same CSV;
  - two reports merge with the model's merge (the counts add up).
"""
import csv
import io
import subprocess
import sys

from rp_check import Checks

tool, replay, make_trace, work = sys.argv[1:5]
check = Checks(work)
p = check.path

N = 20000
pairs = {}
for i in range(N):
    k = i % 8
    if k in (0, 1, 3, 4, 6):
        key = (0x401000 + 4 * k, 0x600000 + 8 * (i % 64))
        pairs[key] = pairs.get(key, 0) + 1

subprocess.run([make_trace, p("t.trc"), str(N)], check=True)
subprocess.run([replay, p("t.trc"), "models=rap", "rap_key=pcaddr", "json=" + p("r.json")],
               check=True, capture_output=True)


def table(*files):
    r = subprocess.run([tool, "--quiet", "--table", "rap2", "--csv", "-"] + list(files),
                       capture_output=True, text=True)
    check(r.returncode == 0, f"hwprof-report {files}: {r.stderr}")
    return r.stdout, list(csv.DictReader(io.StringIO(r.stdout)))


text, rows = table(p("r.json"))
check(len(rows) > 10, f"the tree's rectangles: {len(rows)}")
bad = []
for r in rows:
    x0, x1, y0, y1 = int(r["x_lo"], 16), int(r["x_hi"], 16), int(float(r["y_lo"])), \
        int(float(r["y_hi"]))
    exact = sum(c for (x, y), c in pairs.items() if x0 <= x <= x1 and y0 <= y <= y1)
    if not float(r["lower"]) <= exact <= float(r["upper"]):
        bad.append((r["x_lo"], r["x_hi"], y0, y1, r["lower"], exact, r["upper"]))
check(not bad, f"exact counts within the rectangles' bounds: {len(bad)} not: {bad[:3]}")
own = sum(int(float(r["own"])) for r in rows)
check(own == sum(pairs.values()), f"own counts sum to the pairs: {own} != {sum(pairs.values())}")

r = subprocess.run([tool, "--top", "3", p("r.json")], capture_output=True, text=True)
check(r.returncode == 0 and "rap2.rects" in r.stdout, f"--top lists the rectangles: {r.stderr}")

r = subprocess.run([tool, "--quiet", "--json", p("m.json"), p("r.json")], capture_output=True,
                   text=True)
check(r.returncode == 0, f"--json: {r.stderr}")
check(table(p("m.json"))[0] == text, "the merged JSON reads back to the same table")

_, two = table(p("r.json"), p("r.json"))
own2 = sum(int(float(r["own"])) for r in two)
check(own2 == 2 * sum(pairs.values()), f"two reports merge: {own2}")

check.done()
