#!/usr/bin/env python3
"""examples/report/tests/check_mutants.py FUZZ_REPLAY_REPORT HWPROF_REPLAY MAKE_TRACE WORKDIR SEED...

hwprof-report's reader on reports damaged one member at a time. The
bases are a report of every model (make_trace's program through the
replayer) and the SEEDs (saved reports with the hosts' sections: call
stacks, co-processor contexts, hot blocks, the 2-D RAP tree). Every
value the base holds, down to the first two elements of each array (in
the models' own sections, down to their members' members: past that the
models' readers, fuzzed on their own, take over), is replaced in turn by
a value of each other kind (a string, a negative number, an array, an
object); every member of an object is also removed, and an unknown
member added. Every mutant goes through the report fuzz target's entry
(tests/fuzz/fuzz_report.c, its plain driver): read, then either refused
with one line that names the file, or listed as tables, written back as
JSON that reads again, and merged with itself; anything else aborts.
The test fails on an abort or if the driver did not run every mutant.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from rp_check import Checks

driver, replay, make_trace, work = sys.argv[1:5]
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


def mutants(doc):
    """Each mutant of doc as JSON text: the change is made in place for
    the dump and undone after it (a member removed goes back where it
    was, so the members keep their order)."""
    for at in list(paths(doc)):
        if not at:
            continue
        parent = doc
        for k in at[:-1]:
            parent = parent[k]
        k = at[-1]
        old = parent[k]
        for new in OTHERS:
            if type(new) is not type(old):
                parent[k] = new
                yield json.dumps(doc)
        parent[k] = old
        if isinstance(k, str):
            items = list(parent.items())
            del parent[k]
            yield json.dumps(doc)
            parent["zz_unknown_" + k] = {"a": [1]}
            parent.clear()
            parent.update(items[:[i for i, (x, _) in enumerate(items) if x == k][0] + 1])
            parent["zz_unknown_" + k] = {"a": [1]}
            parent.update(items)
            yield json.dumps(doc)
            del parent["zz_unknown_" + k]


# small tables (the reader initialises every model of a report it reads,
# three times per mutant): the same members, a hundredth of the storage
bases = [("all", check.replayed(make_trace, replay, "all", 20000, "models=all", "pm_table=256",
                                "strat_tuples=1024", "coproc_loads=1024"))]
bases += [(os.path.basename(s)[:-5], json.load(open(s))) for s in seeds]
out = check.path("mutants")
shutil.rmtree(out, ignore_errors=True)
os.makedirs(out)
n = 0
for base, doc in bases:
    for text in mutants(doc):
        with open(os.path.join(out, f"{base}-{n}.json"), "w") as f:
            f.write(text)
        n += 1
r = subprocess.run([driver, out], capture_output=True, text=True, timeout=600)
m = re.search(r"replay: (\d+) inputs, ok", r.stdout)
check(r.returncode == 0 and m is not None and int(m.group(1)) == n,
      f"{n} mutants through the reader: exit {r.returncode}: {r.stdout.strip()} "
      f"{r.stderr.strip()[-500:]}")
print(f"{n} mutants of {len(bases)} reports: {r.stdout.strip()}")
check.done()
