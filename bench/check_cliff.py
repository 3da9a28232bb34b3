#!/usr/bin/env python3
"""bench/check_cliff.py BUILD_DIR WORKDIR: bench/cliff.sh end to end on a
tiny sweep (2^8 and 2^10 distinct keys, 2^12 events, no callgrind): the
CSV has a row per target and point with the events the JSON reports,
and the SVG is well-formed with a line per target."""
import csv
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

build, work = sys.argv[1], sys.argv[2]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
env = dict(os.environ, REPS="2", STEP="2", MIN_EVENTS="4096", NO_CALLGRIND="1")
r = subprocess.run(["bash", os.path.join(root, "bench/cliff.sh"), build, "10", work],
                   capture_output=True, text=True, env=env, timeout=300)
fails = 0


def check(what, ok, detail=""):
    global fails
    if not ok:
        fails += 1
        print(f"FAIL {what}: {detail}")


check("cliff.sh exits 0", r.returncode == 0, r.stderr[-500:])
rows = list(csv.DictReader(open(os.path.join(work, "cliff.csv")))) if r.returncode == 0 else []
got = sorted((int(x["log2_distinct"]), x["target"], x["stream"]) for x in rows)
want = sorted((k, t, s) for k in (8, 10) for t, s in
              [("rap", "keys"), ("spacesaving", "keys"), ("countmin", "keys"),
               ("exact", "keys"), ("strat", "pairs"), ("exact", "pairs")])
check("a row per target and point", got == want, got)
check("events: 4096 a pass, whole passes", all(int(x["events"]) % 4096 == 0 and int(x["events"]) > 0
                                               for x in rows), [x["events"] for x in rows])
check("quartiles ordered", all(float(x["min_ns"]) <= float(x["q1_ns"]) <= float(x["median_ns"])
                               <= float(x["q3_ns"]) <= float(x["max_ns"]) for x in rows), rows[:2])
svg = os.path.join(work, "cliff.svg")
try:
    tree = ET.parse(svg)
    lines = [e for e in tree.iter() if e.tag.endswith("polyline")]
    check("a line per target in the time panel", len(lines) == 6, len(lines))
except (OSError, ET.ParseError) as e:
    check("the SVG parses", False, e)
print(f"{len(rows)} rows, {fails} failed")
sys.exit(1 if fails else 0)
