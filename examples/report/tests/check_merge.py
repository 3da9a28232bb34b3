#!/usr/bin/env python3
"""examples/report/tests/check_merge.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR

Merged totals equal the sum of the parts. A trace is split into pieces
of consecutive chunks (split_trace.py), each piece replayed with every
model into its own report, and hwprof-report merges the reports (the
way bench/report/merge.sh merges a thousand). Against the parts' own
JSON, summed here:
  - the records of the pieces are the trace's, and the merged report's
    instructions their sum;
  - every component's stats.events in the merged --json is the sum of
    the parts';
  - ProfileMe's samples per PC, and RAP's events (its stats and the sum
    of its ranges' counters) are the parts' sums;
  - call stacks (the Lua host's call_stacks) of three files: the same
    stack in several files is one line with the counts added (the reader
    folds them as it merges, the export folds too: this checks the
    result, not where the folding happened);
  - with go tool pprof (skipped without it), the merged --pprof's totals
    of the count events are the sums of the parts' --pprof totals.
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
here = os.path.dirname(os.path.abspath(__file__))

K, N = 5, 400000
subprocess.run([make_trace, p("t.trc"), str(N)], check=True)
r = subprocess.run([sys.executable, os.path.join(here, "split_trace.py"), p("t.trc"), str(K),
                    p("piece")], capture_output=True, text=True)
check(r.returncode == 0, f"split_trace: {r.stderr}")
counts = [int(x) for x in r.stdout.split()]
check(len(counts) == K and sum(counts) == N and min(counts) > 0,
      f"the pieces hold the trace's {N} records: {counts}")
parts = []
for j in range(K):
    trc, rep = p(f"piece.{j:04d}.trc"), p(f"part{j}.json")
    r = subprocess.run([replay, trc, "models=all", "json=" + rep, "report=" + p("r.txt")],
                       capture_output=True, text=True)
    check(r.returncode == 0, f"replay of piece {j}: {r.stderr}")
    parts.append(rep)
r = subprocess.run([tool, "--quiet", "--json", p("merged.json")] + parts,
                   capture_output=True, text=True)
check(r.returncode == 0 and not r.stderr, f"merge: {r.returncode} {r.stderr}")
merged = json.load(open(p("merged.json")))
check(merged["files"] == K and merged["instructions"] == N,
      f"merged: {merged['files']} files, {merged['instructions']} instructions")


def envelopes(o, path=""):
    """path -> every model envelope inside a host report, as the tool names them."""
    out = {}
    if isinstance(o, dict):
        if next(iter(o), None) == "model":
            return {path: o}
        for k, v in o.items():
            out.update(envelopes(v, f"{path}.{k}" if path else k))
    return out


part_env = [envelopes(json.load(open(f))) for f in parts]
comps = merged["models"]
check(len(comps) >= 6 and set(comps) == set(part_env[0]),
      f"the merged report has the parts' components: {sorted(comps)}")
for path, m in comps.items():
    want = sum(e[path]["stats"]["events"] for e in part_env)
    check(m["stats"]["events"] == want and want > 0,
          f"{path}: events {m['stats']['events']}, the parts' sum {want}")

pm_path = next(k for k, v in comps.items() if v["model"] == "pm_table")
samples = {}
for e in part_env:
    for x in e[pm_path]["pcs"]:
        samples[x["pc"]] = samples.get(x["pc"], 0) + x["samples"]
got = {x["pc"]: x["samples"] for x in comps[pm_path]["pcs"]}
check(got == samples and sum(got.values()) > 0, f"ProfileMe samples per PC: {got}, {samples}")
rap = comps["models.rap"]
want = sum(e["models.rap"]["stats"]["n"] for e in part_env)
check(rap["stats"]["n"] == want == N and sum(x["count"] for x in rap["ranges"]) == want,
      f"RAP: {rap['stats']['n']} events, ranges sum {sum(x['count'] for x in rap['ranges'])}, "
      f"the parts' {want}")

# call stacks: three files, two stacks in common
def with_stacks(name, stacks, dropped):
    doc = json.load(open(parts[0]))
    doc["call_stacks"] = {"interval": 997, "samples": sum(stacks.values()), "dropped": dropped,
                          "stacks": [{"frames": k.split(";"), "count": v}
                                     for k, v in stacks.items()]}
    json.dump(doc, open(p(name), "w"))
    return p(name)


a = {"main;f": 3, "main;g;h": 1}
b = {"main;g;h": 2, "main": 5}
files = [with_stacks("sa.json", a, 1), with_stacks("sb.json", b, 0), p("sa.json")]
r = subprocess.run([tool, "--quiet", "--folded", p("s.folded")] + files,
                   capture_output=True, text=True)
lines = open(p("s.folded")).read().splitlines() if r.returncode == 0 else []
got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in lines}
check(len(lines) == len(got) and
      got == {"main;f": 6, "main;g;h": 4, "main": 5, "[dropped]": 2},
      f"call stacks of three files fold: {lines} {r.stderr}")

go = shutil.which("go")
if go:
    env = dict(os.environ, HOME=work, GOCACHE=p("gocache"), GOTOOLCHAIN="local")

    def totals(files, name):
        r = subprocess.run([tool, "--quiet", "--pprof", p(name)] + files,
                           capture_output=True, text=True)
        check(r.returncode == 0, f"--pprof {name}: {r.stderr}")
        out = subprocess.run([go, "tool", "pprof", "-symbolize=none", "-raw", p(name)],
                             capture_output=True, text=True, env=env).stdout.splitlines()
        at = out.index("Samples:")
        types = [t.split("/")[0] for t in out[at + 1].replace("[dflt]", "").split()]
        tot = [0] * len(types)
        for l in out[at + 2:]:
            m = re.match(r"\s*([\d\s]+):", l)
            if not m:
                break
            tot = [a + int(b) for a, b in zip(tot, m.group(1).split())]
        return dict(zip(types, tot))

    whole = totals(parts, "merged.pb.gz")
    each = [totals([f], f"part{j}.pb.gz") for j, f in enumerate(parts)]
    for t in ("pm_samples", "rap_events"):
        check(whole.get(t, 0) > 0 and whole[t] == sum(e[t] for e in each),
              f"--pprof total {t}: merged {whole.get(t)}, the parts' {[e.get(t) for e in each]}")
    check.done()
else:
    print("go tool pprof is not installed (golang-go): the --pprof totals were not checked")
    check.done(" (--pprof totals skipped)")
