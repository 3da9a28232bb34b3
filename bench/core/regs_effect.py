#!/usr/bin/env python3
"""The effect of register dependences on one program: two Valgrind-tool
JSON reports (the Valgrind tool's or the QEMU plugin's) of the same run
with core=on, with registers and without (bench/core/regs_effect.sh). Prints the core's cycles, IPC and wasted
issue slots for both, then the five PCs whose mean fetch -> retire-ready
latency per ProfileMe sample rose most, with their mean issue wait
(map -> issue, where an instruction waits for its operands).

usage: regs_effect.py NAME WITH.json WITHOUT.json
"""
import json
import sys

name, with_f, without_f = sys.argv[1:4]


def load(path):
    d = json.load(open(path))
    d = d.get("session", d)  # the Valgrind tool's report wraps the session's
    st = d["models"]["core"]["stats"]
    pcs = {e["pc"]: e for e in d["models"]["profileme"]["table"]["pcs"]}
    return st, pcs


(sw, pw), (so, po) = load(with_f), load(without_f)
ins = sw["events"]
print(f"{name}: {ins} instructions")
print("| registers | cycles | IPC | wasted issue slots |")
print("|---|---:|---:|---:|")
for label, st in (("with", sw), ("none", so)):
    print(f"| {label} | {st['cycles']} | {ins / st['cycles']:.3f} | {st['wasted_slots']} |")
print(f"cycles with / without: {sw['cycles'] / so['cycles']:.3f}")


def mean(e, lo, hi):
    return sum(e["lat_sum"][lo:hi]) / e["samples"]


rows = []
for pc, e in pw.items():
    o = po.get(pc)
    if o and e["samples"] >= 10 and o["samples"] == e["samples"]:
        rows.append((mean(e, 0, 4) - mean(o, 0, 4), pc, e, o))
rows.sort(reverse=True)
print("| pc | samples | fetch->ready with | without | map->issue with | without |")
print("|---|---:|---:|---:|---:|---:|")
for d, pc, e, o in rows[:5]:
    print(f"| {pc} | {e['samples']} | {mean(e, 0, 4):.1f} | {mean(o, 0, 4):.1f} "
          f"| {mean(e, 1, 3):.1f} | {mean(o, 1, 3):.1f} |")
