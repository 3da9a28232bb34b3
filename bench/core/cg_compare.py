#!/usr/bin/env python3
"""bench/core/cg_compare.py NAME CACHEGRIND_OUT CALLGRIND_OUT CG_CORE_TXT

Totals: cachegrind's summary line against core.h's (cg_core), with the
difference in %. Per PC: callgrind's --dump-instr=yes costs (its
simulator is cachegrind's: the totals line shows whether they agree)
against cg_core's, the top 20 PCs by each kind of miss in both and the
size of the overlap of the two sets."""
import sys

KINDS = ["Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw",
         "Bc", "Bcm", "Bi", "Bim"]


def cachegrind_totals(path):
    events = summary = None
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
    return dict(zip(events, summary))


def callgrind_pcs(path):
    """Self cost per instruction address (lines after calls= are the
    callee's inclusive cost and are skipped)."""
    events, pcs, skip = None, {}, False
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
            continue
        if line.startswith("calls="):
            skip = True
            continue
        if not line[:1].isdigit() and not line.startswith("0x"):
            continue
        if skip:
            skip = False
            continue
        f = line.split()
        pc = int(f[0], 16) if f[0].startswith("0x") else int(f[0])
        row = pcs.setdefault(pc, dict.fromkeys(KINDS, 0))
        for e, v in zip(events, f[1:]):
            if e in row:
                row[e] += int(v)
    tot = dict.fromkeys(KINDS, 0)
    for row in pcs.values():
        for k in KINDS:
            tot[k] += row[k]
    return tot, pcs


def core_pcs(path):
    pcs, tot = {}, None
    for line in open(path):
        f = line.split()
        if f[0] == "totals:":
            tot = dict(zip(KINDS, map(int, f[1:])))
        else:
            pcs[int(f[0], 16)] = dict(zip(KINDS, map(int, f[1:])))
    return tot, pcs


def top(pcs, k, n=20):
    rows = [(r[k], pc) for pc, r in pcs.items() if r.get(k, 0) > 0]
    rows.sort(key=lambda x: (-x[0], x[1]))
    return [pc for _, pc in rows[:n]]


def main(argv):
    name, cg, clg, core = argv
    cgt = cachegrind_totals(cg)
    clgt, clgp = callgrind_pcs(clg)
    cot, cop = core_pcs(core)
    print(f"== {name}")
    print(f"{'event':<6} {'cachegrind':>13} {'callgrind':>13} {'core.h':>13} {'core vs cg %':>12}"
          f"  top-20 overlap (core vs callgrind)")
    for k in KINDS:
        a, b, c = cgt.get(k, 0), clgt.get(k, 0), cot.get(k, 0)
        pct = 100.0 * (c - a) / a if a else float("nan")
        ov = ""
        if k not in ("Ir", "Dr", "Dw", "Bc", "Bi"):
            ta, tb = set(top(clgp, k)), set(top(cop, k))
            ov = f"{len(ta & tb)}/{len(ta)}" if ta else "-"
        print(f"{k:<6} {a:>13} {b:>13} {c:>13} {pct:>+12.2f}  {ov}")


if __name__ == "__main__":
    main(sys.argv[1:])
