#!/usr/bin/env python3
"""The hosts' path stack against the reference path stack on a recorded
real trace (the Valgrind gzip fixture).

  check_path_reference.py HWPROF_REPLAY TRACE WORKDIR

The replayer feeds the model's path stack record by record (hwx_path.c's
per-instruction adapter, the hosts' mode with exact=on or record=); the
exact profile (hwx_exact.c) runs its own unbounded path stack over the
same records, sharing no code with the model's. With
a stack deep enough never to drop and a table large enough never to
evict, the two must hold the same paths with the same counts: the
table holds every distinct path once (misses == distinct), the same
total, and the overlap percentage is 100 (with equal totals and every
path present, a sum of minimum shares of 1 means every count is equal).
The same run scores the dynamic overlap (sec. 8.1: the table emptied at
each window of path_window instructions, scored against that window's
exact paths): every whole window, and no partial one, at 100%. Shown to
fail with the table not emptied between windows (69.78) and with the
trailing partial window scored (9 windows for 8).
Shown to fail with a defect planted in the adapter (one conditional
branch in 16 not fed): 123 paths missing, overlap 99.07. The block mode
(hwx_path.c's hwp_path_branch per block, used only without the exact
profile) is held to this per-record path by block_vs_insn.c.
"""
import json
import os
import subprocess
import sys

WINDOW = 2000000  # the fixture's 17.5M instructions make 8 whole windows


def main():
    replay, trace, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    js = os.path.join(work, "path_reference.json")
    r = subprocess.run([replay, trace, "models=path", "exact=on", "hpt=16384x256",
                        "path_depth=1024", f"path_window={WINDOW}", f"json={js}"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"hwprof-replay failed ({r.returncode}): {r.stderr[-400:]}")
    d = json.load(open(js))
    path = d["models"]["pathprof"]["path"]["stats"]
    hpt = d["models"]["pathprof"]["hpt"]["stats"]
    exact = d["exact"]["paths"]
    ov = d["accuracy"]["hpt_overlap_pct"]["value"]
    dyn = d["accuracy"].get("hpt_dynamic_overlap_pct", {"value": None, "n": None})
    checks = [
        ("the exact profile dropped nothing", exact["dropped"] == 0),
        ("the stack dropped and evicted nothing", path["dropped"] == 0 and path["evicted"] == 0),
        ("the table evicted nothing", hpt["evicted"] == 0),
        (f"every distinct path once: {hpt['misses']} == {exact['distinct']}",
         hpt["misses"] == exact["distinct"]),
        (f"the same total: {hpt['total']} == {exact['total']}", hpt["total"] == exact["total"]),
        (f"overlap 100%: {ov!r}", abs(ov - 100.0) < 1e-9),
        (f"dynamic overlap 100%: {dyn!r}",
         dyn["value"] is not None and abs(dyn["value"] - 100.0) < 1e-9),
        (f"every whole window scored: {dyn['n']} == {d['instructions']} // {WINDOW}",
         dyn["n"] == d["instructions"] // WINDOW),
    ]
    bad = [name for name, ok in checks if not ok]
    for name, ok in checks:
        print(("ok   " if ok else "FAIL ") + name)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
