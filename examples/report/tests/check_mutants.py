#!/usr/bin/env python3
"""examples/report/tests/check_mutants.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR SEED...

hwprof-report on reports damaged one member at a time. The bases are a
report of every model (make_trace's program through the replayer) and
the SEEDs (saved reports with the hosts' sections: call stacks,
co-processor contexts, hot blocks, the 2-D RAP tree). Every value the
base holds, down to the first two elements of each array (in the
models' own sections, down to their members' members: past that the
models' readers, fuzzed on their own, take over), is replaced in turn by
a value of each other kind (a string, a negative number, an array, an
object); every member of an object is also removed, and an unknown
member added. Each mutant is read, merged with itself (where a reader
meets what it parsed) and its tables printed (`--top 3`). Each must either be taken (exit 0)
or refused with exit 1 and one line on stderr that names the file: never
a crash, a hang or a message on several lines. The figures at the end
say how many were refused; the test also fails if none was refused or
none taken (the mutations would then not reach the reader).
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from rp_check import Checks

tool, replay, make_trace, work = sys.argv[1:5]
seeds = sys.argv[5:]
check = Checks(work)

OTHERS = ["x", -1, [1, "y"], {"zz": [1]}]
ARRAY_HEAD = 2  # elements of each array that are walked
MODEL_DEPTH = 4  # models.NAME.member.member


def paths(v, at=()):
    """Every place a value sits in v, as a tuple of keys and indices."""
    yield at
    if at[:1] == ("models",) and len(at) >= MODEL_DEPTH:
        return
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:ARRAY_HEAD]):
            yield from paths(x, at + (i,))


def copy_with(doc, at, fn):
    """A deep copy of doc with fn(parent, key) applied at path `at`."""
    doc = json.loads(json.dumps(doc))
    parent = doc
    for k in at[:-1]:
        parent = parent[k]
    fn(parent, at[-1])
    return doc


def mutants(doc):
    for at in paths(doc):
        if not at:
            continue
        old = doc
        for k in at:
            old = old[k]
        for new in OTHERS:
            if type(new) is not type(old):
                yield at, "=" + json.dumps(new), copy_with(doc, at, lambda p, k: p.__setitem__(k, new))
        if isinstance(at[-1], str):
            yield at, " removed", copy_with(doc, at, lambda p, k: p.pop(k))
            yield at, " beside an unknown member", copy_with(
                doc, at, lambda p, k: p.__setitem__("zz_unknown_" + k, {"a": [1]}))


def run(job):
    name, what, doc = job
    path = check.path(name)
    with open(path, "w") as f:
        json.dump(doc, f)
    out = []
    for args in (["--top", "3", path, path],):
        try:
            r = subprocess.run([tool] + args, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            out.append(("hang", what))
            continue
        err = r.stderr.strip().splitlines()
        if r.returncode == 0:
            out.append(("taken", None))
        elif r.returncode == 1 and len(err) == 1 and path in err[0]:
            out.append(("refused", None))
        else:
            out.append(("bad", f"{what}: {' '.join(args[:-1])}: exit {r.returncode}: "
                               f"{r.stderr.strip()[:300]}"))
    os.unlink(path)
    return out


bases = [("all", check.replayed(make_trace, replay, "all", 20000, "models=all"))]
bases += [(os.path.basename(s)[:-5], json.load(open(s))) for s in seeds]
jobs = []
for base, doc in bases:
    for n, (at, how, mutant) in enumerate(mutants(doc)):
        jobs.append((f"{base}-{n}.json", f"{base}: {'.'.join(map(str, at))}{how}", mutant))
tally = {"taken": 0, "refused": 0, "bad": 0, "hang": 0}
with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for out in pool.map(run, jobs):
        for kind, why in out:
            tally[kind] += 1
            if why:
                check(False, why)
check(tally["refused"] > 0 and tally["taken"] > 0,
      f"both refused and taken mutants: {tally}")
print(f"{len(jobs)} mutants of {len(bases)} reports, each read and merged: "
      f"{tally['taken']} taken, {tally['refused']} refused, {tally['bad']} badly, "
      f"{tally['hang']} hung")
check.done()
