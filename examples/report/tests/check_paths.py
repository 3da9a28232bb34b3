#!/usr/bin/env python3
"""examples/report/tests/check_paths.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR

Hot paths decoded to their blocks, on make_trace --paths' program (block
A at 0x1000 ends with a conditional branch, taken to C at 0x3000 when
i % 3 != 0, else falling through to B at 0x100c, which jumps to C; C
jumps back to A). Its two Ball-Larus paths and their counts are computed
here from that description, never from the tools' output:
  A > C      2N/3 times (i % 3 != 0)
  A > B > C  N/3 times
  - the replayer's "hot_blocks" holds the true block lists;
  - hwprof-report's path table (--table), its CSV and its merged JSON
    (read back) show them; the HTML figure names the paths by them;
  - a block map too small for the program counts its overflow and writes
    the paths through the missing blocks with their reason;
  - path_metric=insns gives each path its executions times its length;
    cycles and dcmiss (core=on) add up over the paths to the core's own
    totals; hwprof-report names the column and refuses to merge reports
    of two metrics (execution counts, named or not, are one), and takes
    the metric only from where the report format puts it.
"""
import csv
import io
import json
import subprocess
import sys

from rp_check import Checks

tool, replay, make_trace, work = sys.argv[1:5]
check = Checks(work)
p = check.path

N = 3000
A, B, C = 0x1000, 0x100C, 0x3000
truth = {(A, C): N - (N + 2) // 3, (A, B, C): (N + 2) // 3}  # i % 3 == 0 for ceil(N/3) i
text = {k: " > ".join(f"0x{b:x}" for b in k) for k in truth}

subprocess.run([make_trace, "--paths", p("p.trc"), str(N)], check=True)
subprocess.run([replay, p("p.trc"), "models=path", "json=" + p("p.json")], check=True,
               capture_output=True)
rep = json.load(open(p("p.json")))
hb = rep["models"]["pathprof"].get("hot_blocks", {})
# the HPT's entries: shape = a sentinel bit above len direction bits
hpt = {(int(r["start"], 16), 1 << r["len"] | int(r["dirs"], 16)): r["count"]
       for r in rep["models"]["pathprof"]["hpt"]["paths"]}
got = {}
for e in hb.get("paths", []):
    if "blocks" in e:
        key = tuple(int(b, 16) for b in e["blocks"])
        got[key] = hpt.get((int(e["start"], 16), int(e["shape"], 16)), 0)
check(got == truth, f"decoded hot paths and their counts: {got} != {truth}")
check(hb.get("overflow") == 0 and hb.get("blocks") == 3, f"block map: {hb}")

r = subprocess.run([tool, "--table", "hpt", "--top", "2", p("p.json")], capture_output=True,
                   text=True)
check(r.returncode == 0, f"--table hpt: {r.stderr}")
lines = [l for l in r.stdout.splitlines() if l.startswith("0x")]
check(len(lines) == 2 and lines[0].endswith(text[(A, C)]) and lines[1].endswith(text[(A, B, C)]),
      f"the table's two hottest rows name their blocks: {lines}")

r = subprocess.run([tool, "--quiet", "--table", "hpt", "--csv", "-", "--json", p("m.json"),
                    "--html", p("p.html"), p("p.json")], capture_output=True, text=True)
check(r.returncode == 0, f"exports: {r.stderr}")
rows = {row["blocks"]: int(float(row["count"])) for row in csv.DictReader(io.StringIO(r.stdout))}
check(all(rows.get(text[k]) == n for k, n in truth.items()), f"CSV blocks column: {rows}")
html = open(p("p.html")).read()
check(all(f"<title>{t.replace('>', '&gt;')}</title>" in html for t in text.values()),
      "the HTML hot-path figure names the paths by their blocks")
r = subprocess.run([tool, "--table", "hpt", p("m.json")], capture_output=True, text=True)
check(r.returncode == 0 and all(t in r.stdout for t in text.values()),
      f"the merged JSON read back keeps the blocks: {r.stdout} {r.stderr}")

# a map of two slots keeps one block (one stays free): the others overflow
subprocess.run([replay, p("p.trc"), "models=path", "path_blocks=2", "json=" + p("s.json")],
               check=True, capture_output=True)
hb = json.load(open(p("s.json")))["models"]["pathprof"]["hot_blocks"]
check(hb["blocks"] == 1 and hb["overflow"] > 0, f"small map counts its overflow: {hb}")
check(all(e.get("error") in ("block not in map", "no branch recorded") for e in hb["paths"]) and
      hb["undecoded"] == len(hb["paths"]), f"paths through missing blocks say why: {hb}")
r = subprocess.run([tool, "--table", "hpt", p("s.json")], capture_output=True, text=True)
check("(not decoded: block not in map)" in r.stdout, f"the table says why: {r.stdout}")

# path_metric=: each hot path's counter sums the metric along it.
# insns: A is 3 instructions, B 5, C 2 (make_trace's description), so a
# path's sum is its executions times its length.
LEN = {A: 3, B: 5, C: 2}


def decoded(rep):
    pp = rep["models"]["pathprof"]
    hpt = {(int(r["start"], 16), 1 << r["len"] | int(r["dirs"], 16)): r["count"]
           for r in pp["hpt"]["paths"]}
    return {tuple(int(b, 16) for b in e["blocks"]):
            hpt.get((int(e["start"], 16), int(e["shape"], 16)), 0)
            for e in pp.get("hot_blocks", {}).get("paths", []) if "blocks" in e}, hpt


r = subprocess.run([replay, p("p.trc"), "models=path", "path_metric=insns",
                    "json=" + p("mi.json"), "report=" + p("mi.txt")], capture_output=True, text=True)
got, _ = decoded(json.load(open(p("mi.json"))))
want = {k: n * sum(LEN[b] for b in k) for k, n in truth.items()}
check(r.returncode == 0 and {k: v for k, v in got.items() if v} == want,
      f"path_metric=insns: each path's instructions {got} != {want}: {r.stderr}")
# cycles and D-cache misses from the core: every path fits the table and
# the streams end on a branch, so the paths' sums add up to the core's
# own totals (its clock; its D-cache read and write misses)
subprocess.run([make_trace, p("d.trc"), "200000"], check=True)
for trc, metric, total in (("p.trc", "cycles", lambda st: st["cycles"]),
                           ("d.trc", "dcmiss",
                            lambda st: st["l1d_read_misses"] + st["l1d_write_misses"])):
    r = subprocess.run([replay, p(trc), "models=path+core", "path_metric=" + metric,
                        "json=" + p("m.json"), "report=" + p("m.txt")], capture_output=True,
                       text=True)
    rep = json.load(open(p("m.json")))
    _, hpt = decoded(rep)
    want = total(rep["models"]["core"]["stats"])
    check(r.returncode == 0 and want > 0 and sum(hpt.values()) == want and
          rep["models"]["pathprof"]["metric"] == metric and
          rep["models"]["pathprof"]["hpt"]["stats"]["evicted"] == 0,
          f"path_metric={metric}: the paths' sums {sum(hpt.values())} add up to the core's "
          f"{want}: {r.stderr}")
    subprocess.run(["cp", p("m.json"), p(f"m_{metric}.json")], check=True)
r = subprocess.run([tool, "--table", "hpt", p("m_cycles.json")], capture_output=True, text=True)
check(r.returncode == 0 and "start  shape  cycles  branches" in r.stdout,
      f"hwprof-report names the HPT's column by the metric: {r.stdout[-400:]}")
r = subprocess.run([tool, "--table", "hpt", p("m_cycles.json"), p("m_dcmiss.json")],
                   capture_output=True, text=True)
check(r.returncode == 1 and "path_metric is dcmiss" in r.stderr,
      f"reports of two metrics are not merged: {r.stderr}")
# the merged JSON keeps the metric: read back, its column is still cycles
r = subprocess.run([tool, "--quiet", "--json", p("mm.json"), p("m_cycles.json")],
                   capture_output=True, text=True)
check(r.returncode == 0, f"merged JSON of cycles: {r.stderr}")
r = subprocess.run([tool, "--table", "hpt", p("mm.json")], capture_output=True, text=True)
check(r.returncode == 0 and "start  shape  cycles  branches" in r.stdout,
      f"the merged JSON read back names the metric: {r.stdout[-400:]} {r.stderr}")
# execution counts are execution counts whether the report names them
# ("metric":"paths") or predates path_metric= (no "metric")
old = json.load(open(p("p.json")))
del old["models"]["pathprof"]["metric"]
json.dump(old, open(p("p_old.json"), "w"))
r = subprocess.run([tool, "--table", "hpt", p("p.json"), p("p_old.json")],
                   capture_output=True, text=True)
check(r.returncode == 0 and "start  shape  count" in r.stdout,
      f"a report without \"metric\" merges with one of paths: {r.stdout[-400:]} {r.stderr}")
# only the "metric" where the format puts it (the pathprof object, a merged
# report's top level) names the HPT's counts: another member of that name,
# after it, in an object of its own, changes nothing
for src, stray, col in (("p.json", "cycles", "count"), ("m_cycles.json", "paths", "cycles")):
    rep = json.load(open(p(src)))
    rep["other"] = {"metric": stray, "more": [{"metric": stray}]}
    json.dump(rep, open(p("stray.json"), "w"))
    r = subprocess.run([tool, "--table", "hpt", p("stray.json")], capture_output=True, text=True)
    check(r.returncode == 0 and f"start  shape  {col}  branches" in r.stdout,
          f"a stray \"metric\":\"{stray}\" leaves {src}'s column {col}: "
          f"{r.stdout[-400:]} {r.stderr}")
r = subprocess.run([replay, p("p.trc"), "models=path", "path_metric=cycles"],
                   capture_output=True, text=True)
check(r.returncode == 2 and "path_metric" in r.stderr and "core=on" in r.stderr,
      f"path_metric=cycles without the core is refused: {r.stderr}")

check.done()
