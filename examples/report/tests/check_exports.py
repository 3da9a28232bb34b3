#!/usr/bin/env python3
"""examples/report/tests/check_exports.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR

hwprof-report's exports against the report they come from, the expected
figures computed here from the report's JSON (written by the models):
  - --callgrind: Debian's callgrind_annotate reads it, and its PROGRAM
    TOTALS equal the report's: ProfileMe samples, estimated fetches and
    latency summed over the table's PCs, RAP's events (the tree's node
    counters sum to the events it counted);
  - --folded without a call-stack profile: the counts sum to the
    estimated fetches;
  - --folded of the co-processor's call-stack program on make_trace
    --calls' program: the stacks are the program's calling contexts,
    computed here from its description, and their counts sum to the
    model's per-context counts in the report;
  - --csv: one row per PC of the table;
  - --bbv: exp-bbv lines "T:id:count ..." equal to the vectors of
    make_trace --blocks' program (three blocks, B every third iteration),
    computed here from its description; the replayer's bbv= file of the
    same trace equals them too, and on a program with calls and returns
    equals hwprof-report's (one writer).
"""
import json
import os
import re
import shutil
import subprocess
import sys

from rp_check import Checks

tool, replay, make_trace, work = sys.argv[1:5]
check = Checks(work)
p = check.path


rep = check.replayed(make_trace, replay, "all", 200000, "models=all")
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

# --key on a load the co-processor profiled: its samples and each value's
# invariance, as its report has them; and RAP's bounds on the same key,
# which hold the sum of the tree's smallest range around it
load = rep["models"]["coproc"]["loads"][0]
r = subprocess.run([tool, "--key", load["pc"], p("all.json")], capture_output=True, text=True)
check(r.returncode == 0 and f"coproc (models.coproc): load {load['pc']}: {load['samples']} samples"
      in r.stdout, f"--key {load['pc']}: the co-processor's samples: {r.stdout}{r.stderr}")
# the most invariant values first, as many as the query gives (the JSON
# keeps its slots' order and 4 decimals)
shown = re.findall(r"^    value (0x[0-9a-f]+)  invariance ([0-9.]+)  95% interval",
                   r.stdout[r.stdout.find("coproc (models.coproc)"):], re.M)
inv = {v["value"]: v["invariance"] for v in load["values"]}
check(shown and all(x in inv and abs(float(s) - inv[x]) < 0.0011 for x, s in shown) and
      [x for x, _ in shown] == sorted(inv, key=lambda x: -inv[x])[:len(shown)],
      f"--key {load['pc']}: the co-processor's most invariant values {shown} of {inv}")
m = re.search(r"rap \(models\.rap\): key (0x[0-9a-f]+): between (\d+) and (\d+) of (\d+) events",
              r.stdout)
check(m is not None and int(m.group(2)) <= int(m.group(3)) and int(m.group(4)) == rap["stats"]["n"],
      f"--key {load['pc']}: RAP's bounds, of all its events: {r.stdout}")

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

# basic-block vectors of make_trace --blocks' program
ITER, I = 3000, 1000
subprocess.run([make_trace, "--blocks", p("b.trc"), str(ITER)], check=True)
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
# the hosts write the same vectors through the same writer (bbv=): the
# replayer's file of the trace equals the program's vectors, and on
# make_trace --calls' program (calls, returns, jumps, an interval that
# cuts blocks) equals hwprof-report's of the same trace
r = subprocess.run([replay, p("b.trc"), "bbv=" + p("h.bbv"), f"bbv_interval={I}",
                    "report=" + p("h.txt")], capture_output=True, text=True)
check(r.returncode == 0 and open(p("h.bbv")).read().splitlines() == want_lines,
      f"replay bbv=: the program's vectors: {r.stderr}")
subprocess.run([make_trace, "--calls", p("c.trc"), "2000"], check=True)
for args in ([], ["models=all"]):
    r = subprocess.run([replay, p("c.trc"), "bbv=" + p("hc.bbv"), "bbv_interval=997",
                        "report=" + p("hc.txt")] + args, capture_output=True, text=True)
    r2 = subprocess.run([tool, "--bbv", p("rc.bbv"), "--trace", p("c.trc"), "--interval", "997"],
                        capture_output=True, text=True)
    hv, rv = open(p("hc.bbv")).read(), open(p("rc.bbv")).read()
    check(r.returncode == 0 and r2.returncode == 0 and hv == rv and hv.count("\n") > 10 and
          len(set(re.findall(r":(\d+):", hv))) > 3,
          f"replay bbv= {args} equals hwprof-report --bbv ({hv.count(chr(10))} and "
          f"{rv.count(chr(10))} lines): {r.stderr} {r2.stderr}")
r = subprocess.run([replay, p("b.trc"), "bbv=" + p("z.bbv"), "bbv_interval=0"],
                   capture_output=True, text=True)
check(r.returncode == 2 and "bbv_interval" in r.stderr and not os.path.exists(p("z.bbv")),
      f"bbv_interval=0 refused by name: {r.stderr}")
r = subprocess.run([tool, "--bbv", p("x.bbv"), "--trace", p("all.json")], capture_output=True,
                   text=True)
check(r.returncode == 1 and "all.json: byte" in r.stderr, f"--bbv of a non-trace: {r.stderr}")

# folded stacks of the co-processor's calling contexts
CALLS, KEEP = 2000, 4
subprocess.run([make_trace, "--calls", p("c.trc"), str(CALLS)], check=True)
r = subprocess.run([replay, p("c.trc"), "models=coproc", "coproc_app=callstack",
                    "json=" + p("c.json"), "report=" + p("c.txt")], capture_output=True, text=True)
check(r.returncode == 0, f"replay --calls: {r.stderr}")
crep = json.load(open(p("c.json")))
cp = crep["models"]["coproc"]
ctx_total = sum(e["a"] for e in cp["table"] if e["kind"] == "context")
check(cp["stats"]["buffer_dropped"] == 0 and ctx_total > 0,
      f"the co-processor kept every sample: {cp['stats']['buffer_dropped']} dropped")


def contexts():
    """Events per calling context of make_trace --calls' program: the
    innermost KEEP call sites outermost first, then the innermost callee,
    "[...]" first when more calls are open; every branch, call and return
    counts in the context current before it."""
    want, stack = {}, []

    def ev():
        n = min(len(stack), KEEP)
        if not n:
            name = "[outermost]"
        else:
            inner = stack[-n:]
            name = ";".join((["[...]"] if len(stack) > n else []) +
                            [f"0x{s:x}" for s, _ in inner] + [f"0x{inner[-1][1]:x}"])
        want[name] = want.get(name, 0) + 1

    def call(site, callee):
        ev()
        stack.append((site, callee))

    def ret():
        ev()
        stack.pop()

    def g(d):
        ev()
        if d > 1:
            call(0x30100, 0x30000)
            g(d - 1)
        ret()

    for i in range(CALLS):
        ev()
        call(0x10100, 0x20000)
        ev()
        if i % 2 == 0:
            call(0x20100, 0x30000)
            g(1 + i % 5)
        ret()
    return want


r = subprocess.run([tool, "--quiet", "--folded", p("c.folded"), p("c.json")],
                   capture_output=True, text=True)
check(r.returncode == 0 and not r.stderr, f"--folded of contexts: {r.returncode} {r.stderr}")
got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1])
       for l in open(p("c.folded")).read().splitlines()}
want = contexts()
check(got == want, f"--folded: the program's contexts\n got  {sorted(got.items())}\n want "
                   f"{sorted(want.items())}")
check(sum(got.values()) == ctx_total, f"--folded: {sum(got.values())} events, the report "
                                       f"{ctx_total}")
# two runs' reports merge: the model's counts add, the dictionaries join
r = subprocess.run([tool, "--quiet", "--folded", p("c2.folded"), p("c.json"), p("c.json")],
                   capture_output=True, text=True)
got2 = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1])
        for l in open(p("c2.folded")).read().splitlines()} if r.returncode == 0 else {}
check(got2 == {k: 2 * v for k, v in want.items()}, f"--folded of two merged runs: {r.stderr}")
# a co-processor too slow for the stream drops call and return samples:
# its stack leaves the program's, the contexts it counts then are
# [stale], the others are still the program's, and all add up
r = subprocess.run([replay, p("c.trc"), "models=coproc", "coproc_app=callstack",
                    "coproc_buffer=64", "coproc_clock=1", "json=" + p("cs.json"),
                    "report=" + p("cs.txt")], capture_output=True, text=True)
srep = json.load(open(p("cs.json"))) if r.returncode == 0 else {"models": {}}
lost = srep["models"].get("coproc_contexts", {}).get("lost", 0)
s_total = sum(e["a"] for e in srep["models"].get("coproc", {}).get("table", [])
              if e["kind"] == "context")
r = subprocess.run([tool, "--quiet", "--folded", p("cs.folded"), p("cs.json")],
                   capture_output=True, text=True)
lines = [l.rsplit(" ", 1) for l in open(p("cs.folded")).read().splitlines()] \
    if r.returncode == 0 else []
fresh = [f for f, _ in lines if not f.startswith("[stale]")]
check(lost > 0 and "[stale]" in r.stderr and len(fresh) < len(lines) and
      set(fresh) <= set(want) and sum(int(c) for _, c in lines) == s_total,
      f"--folded after dropped calls: {lost} lost, {len(lines) - len(fresh)} stale stacks, "
      f"fresh ones outside the program's: {sorted(set(fresh) - set(want))}")
r = subprocess.run([tool, "--quiet", "--stacks", "pm", "--folded", p("c.pm"), p("c.json")],
                   capture_output=True, text=True)
check(r.returncode == 1 and "no call-stack profile and no per-PC table" in r.stderr,
      f"--stacks pm without ProfileMe: {r.returncode} {r.stderr}")

check.done()
