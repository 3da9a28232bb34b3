#!/usr/bin/env python3
"""examples/report/tests/check_chrome_trace.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR

hwprof-report --chrome-trace against the Trace Event Format's rules and
the report it comes from. The program: make_trace's default loop, then
its --calls program, then the loop again, joined chunk by chunk into one
trace (split_trace.py's reader), so the phase detectors see phases change;
replayed with the path profiler, exact=on (the BBV reference detector)
and a 5000-instruction interval.
  - the format (a validator written here from the format's document, no
    viewer is installed): a traceEvents array; every event a known ph with
    pid, name, ts >= 0 (metadata aside); complete events a dur >= 0;
    instants a scope; counters numeric series; every thread that has
    events named by a thread_name record; on each thread complete events
    nest or follow each other, never overlap in part; B/E pairs balance;
  - units: otherData names the clock (guest instructions) and the
    interval, every ts and dur a multiple of it;
  - content: each track's complete events, expanded interval by interval,
    are the report's phase_ids (the path detector) and bbv_ids (the BBV
    detector); an instant per change; the counter follows the phases;
  - each file is a process with its own tracks: two reports, two
    processes;
  - bad input: a report without the path profiler is refused with the
    reason and the file is left as it was.
"""
import json
import os
import subprocess
import sys

from rp_check import Checks
from split_trace import chunks, put_varint

tool, replay, make_trace, work = sys.argv[1:5]
check = Checks(work)
p = check.path
INTERVAL = 5000

subprocess.run([make_trace, p("a.trc"), "100000"], check=True)
subprocess.run([make_trace, "--calls", p("c.trc"), "3000"], check=True)
out, n = bytearray(), 0
for name in ("a.trc", "c.trc", "a.trc"):
    b = open(p(name), "rb").read()
    out += b[:16] if not out else b""
    for s, e, r in chunks(b):
        out += b[s:e]
        n += r
open(p("j.trc"), "wb").write(bytes(out) + b"E" + put_varint(n))
r = subprocess.run([replay, p("j.trc"), "models=pathprof", "exact=on",
                    f"path_interval={INTERVAL}", "json=" + p("j.json"), "report=" + p("j.txt")],
                   capture_output=True, text=True)
check(r.returncode == 0, f"replay of the joined trace: {r.stderr}")
pp = json.load(open(p("j.json")))["models"]["pathprof"]
want = {"path": pp["phase_ids"], "bbv": pp["bbv_ids"]}
check(len(set(want["path"])) > 1 and len(set(want["bbv"])) > 1,
      f"the detectors see more than one phase: {want}")


def validate(doc, what):
    """The format's rules; returns the events by thread."""
    ev = doc.get("traceEvents")
    check(isinstance(ev, list) and ev, f"{what}: a traceEvents array")
    ev = ev or []
    check(doc.get("displayTimeUnit") in ("ms", "ns"), f"{what}: displayTimeUnit ms or ns")
    names, threads = {}, {}
    for e in ev:
        ph = e.get("ph")
        ok = ph in ("X", "B", "E", "i", "I", "C", "M") and isinstance(e.get("pid"), int) \
            and isinstance(e.get("name"), str)
        if ph == "M":
            ok = ok and e["name"] in ("process_name", "thread_name", "process_sort_index",
                                      "thread_sort_index") and "args" in e
            if e.get("name") == "thread_name":
                ok = ok and (e["pid"], e.get("tid")) not in names
                names[(e["pid"], e.get("tid"))] = e["args"].get("name")
        else:
            ok = ok and isinstance(e.get("ts"), (int, float)) and e["ts"] >= 0
        if ph == "X":
            ok = ok and isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0
        if ph in ("i", "I"):
            ok = ok and e.get("s", "t") in ("g", "p", "t")
        if ph == "C":
            ok = ok and e.get("args") and all(isinstance(v, (int, float))
                                              for v in e["args"].values())
        if ph in ("X", "B", "E", "i", "I"):
            ok = ok and isinstance(e.get("tid"), int)
            threads.setdefault((e["pid"], e.get("tid")), []).append(e)
        check(ok, f"{what}: a well-formed event: {e}")
    for t, es in threads.items():
        check(t in names, f"{what}: thread {t} has a thread_name")
        open_ = []  # ends of the enclosing complete events
        for e in sorted((e for e in es if e["ph"] == "X"), key=lambda e: (e["ts"], -e["dur"])):
            while open_ and open_[-1] <= e["ts"]:
                open_.pop()
            check(not open_ or e["ts"] + e["dur"] <= open_[-1],
                  f"{what}: {e} overlaps an enclosing event ending at {open_[-1:]}")
            open_.append(e["ts"] + e["dur"])
        depth = 0
        for e in sorted((e for e in es if e["ph"] in "BE"), key=lambda e: e["ts"]):
            depth += 1 if e["ph"] == "B" else -1
            check(depth >= 0, f"{what}: an E without its B on {t}")
        check(depth == 0, f"{what}: B and E balance on {t}")
    return names, threads, ev


def tracks(path, what):
    doc = json.load(open(path))
    names, threads, ev = validate(doc, what)
    other = doc.get("otherData", {})
    check("instructions" in other.get("clock", "") and
          other.get("interval_instructions") == INTERVAL,
          f"{what}: otherData names the clock and the interval: {other}")
    check(all(e.get("ts", 0) % INTERVAL == 0 and e.get("dur", 0) % INTERVAL == 0 for e in ev),
          f"{what}: every ts and dur a whole number of intervals")
    got = {}
    for (pid, tid), es in threads.items():
        det = (pid, names[(pid, tid)].split()[0])
        ids = []
        for e in sorted((e for e in es if e["ph"] == "X"), key=lambda e: e["ts"]):
            check(e["ts"] == len(ids) * INTERVAL, f"{what}: {det}: runs follow each other")
            ids += [e["args"]["phase"]] * (e["dur"] // INTERVAL)
        got[det] = ids
        changes = [e for e in es if e["ph"] == "i"]
        want_ch = [k for k in range(1, len(ids)) if ids[k] != ids[k - 1]]
        check([e["ts"] // INTERVAL for e in changes] == want_ch,
              f"{what}: {det}: an instant at each change")
        counter = [(e["ts"] // INTERVAL, e["args"]["phase"]) for e in ev
                   if e["ph"] == "C" and e["pid"] == pid and e["name"] == f"{det[1]} phase"]
        check(counter == [(0, ids[0])] + [(k, ids[k]) for k in want_ch],
              f"{what}: {det}: the counter follows the phases")
    return got


r = subprocess.run([tool, "--quiet", "--chrome-trace", p("j.trace.json"), p("j.json")],
                   capture_output=True, text=True)
check(r.returncode == 0 and not r.stderr, f"--chrome-trace: {r.returncode} {r.stderr}")
got = tracks(p("j.trace.json"), "one report")
check(got == {(1, k): v for k, v in want.items()},
      f"the tracks are the report's phases\n got  {got}\n want {want}")

r = subprocess.run([tool, "--quiet", "--chrome-trace", p("m.trace.json"), p("j.json"),
                    p("j.json")], capture_output=True, text=True)
check(r.returncode == 0, f"--chrome-trace of two reports: {r.stderr}")
got = tracks(p("m.trace.json"), "two reports")
check(got == {(f, k): v for k, v in want.items() for f in (1, 2)},
      "two reports: a process each, with the report's tracks")

subprocess.run([replay, p("a.trc"), "models=pm", "json=" + p("pm.json"), "report=" + p("pm.txt")],
               check=True, capture_output=True)
with open(p("old.json"), "w") as f:
    f.write("old")
r = subprocess.run([tool, "--quiet", "--chrome-trace", p("old.json"), p("pm.json")],
                   capture_output=True, text=True)
check(r.returncode == 1 and "no timeline" in r.stderr and open(p("old.json")).read() == "old",
      f"no timeline: refused, the file untouched: {r.returncode} {r.stderr}")

# The models' counters over time (timeline=N, at a spacing that is not
# the phase interval's): a counter track per model whose events start at
# each point's interval and give what it added; they add up to the last
# point, which is the run's total (RAP's splits as its stats say).
TL = 7000
r = subprocess.run([replay, p("j.trc"), "models=all", f"timeline={TL}", f"path_interval={INTERVAL}",
                    "json=" + p("t.json"), "report=" + p("t.txt")], capture_output=True, text=True)
check(r.returncode == 0, f"replay with timeline=: {r.stderr}")
rep = json.load(open(p("t.json")))
tl = rep.get("timeline", {})
clock = tl.get("insns", [])
check(tl.get("every") == TL and clock and clock[-1] == rep["instructions"] and
      all(b > a for a, b in zip(clock, clock[1:])),
      f"the report's timeline: every {tl.get('every')}, points rising to the run's end")
check(tl["counters"]["rap.splits"][-1] == rep["models"]["rap"]["stats"]["splits"],
      "the last point holds the run's totals (RAP's splits)")
r = subprocess.run([tool, "--quiet", "--chrome-trace", p("t.trace.json"), p("t.json")],
                   capture_output=True, text=True)
check(r.returncode == 0, f"--chrome-trace with counters: {r.stderr}")
doc = json.load(open(p("t.trace.json")))
validate(doc, "counters")
groups = sorted({k.split(".")[0] for k in tl["counters"]})
for g in groups:
    ev = [e for e in doc["traceEvents"] if e["ph"] == "C" and e["name"] == g]
    check([e["ts"] for e in ev] == [0] + clock[:-1], f"{g}: an event at the start of each interval")
    for k, v in tl["counters"].items():
        if k.split(".")[0] != g:
            continue
        name = k.split(".", 1)[1]
        got = [e["args"].get(name) for e in ev]
        check(got == [b - a for a, b in zip([0] + v[:-1], v)],
              f"{k}: each event what its interval added")
check(set(groups) >= {"pm", "rap", "path", "strat", "coproc", "overhead"},
      f"a track for every model and the overhead: {groups}")

# Bounded: 8375 intervals of 100 are more points than a timeline holds
# (512); it keeps every other point and doubles its spacing until they
# fit, so the points stay evenly spaced and the last is still the total.
r = subprocess.run([replay, p("j.trc"), "models=rap", "timeline=100", "json=" + p("b.json"),
                    "report=" + p("b.txt")], capture_output=True, text=True)
rep = json.load(open(p("b.json"))) if r.returncode == 0 else {}
tl = rep.get("timeline", {})
every, clock = tl.get("every", 0), tl.get("insns", [])
check(every > 100 and len(clock) <= 513 and clock and clock[-1] == rep["instructions"] and
      all(c % every == 0 for c in clock[:-1]) and
      all(b - a == every for a, b in zip(clock[:-2], clock[1:-1])),
      f"a bounded timeline: every {every}, {len(clock)} points, evenly spaced")
check(tl.get("counters", {}).get("rap.events", [0])[-1] == rep["models"]["rap"]["stats"]["events"],
      "a bounded timeline's last point is the run's total")
check.done(" (format checked by this validator; no trace viewer is run)")
