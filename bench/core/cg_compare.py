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
    """Self cost per instruction address and object (lines after calls=
    are the callee's inclusive cost and are skipped). Callgrind writes the
    addresses of a position-independent object relative to its load
    address; rebase() recovers it."""
    events, pcs, skip, ob = None, {}, False, "???"
    names = {}
    for line in open(path):
        if line.startswith("events:"):
            events = line.split()[1:]
            continue
        if line.startswith("ob="):
            ob = line[3:].strip()
            if ob.startswith("("):  # (id) name, or (id) alone
                i = ob.index(")")
                key, rest = ob[:i + 1], ob[i + 1:].strip()
                if rest:
                    names[key] = rest
                ob = names.get(key, key)
            continue
        if line.startswith("calls="):
            skip = True
            continue
        if not line.startswith("0x"):
            continue
        if skip:
            skip = False
            continue
        f = line.split()
        key = (ob, int(f[0], 16))
        row = pcs.setdefault(key, dict.fromkeys(KINDS, 0))
        for e, v in zip(events, f[1:]):
            if e in row:
                row[e] += int(v)
    tot = dict.fromkeys(KINDS, 0)
    for row in pcs.values():
        for k in KINDS:
            tot[k] += row[k]
    return tot, pcs


def rebase(clg, core):
    """Absolute addresses for callgrind's rows: per object, the page-aligned
    bias under which most of its branch and memory instructions line up with
    the trace's (same low 12 bits, same conditional branch and data
    reference counts)."""
    by_sig = {}
    for pc, r in core.items():
        if r["Bc"] >= 50 or r["Dr"] >= 50:
            by_sig.setdefault((pc & 0xFFF, r["Bc"], r["Dr"]), []).append(pc)
    objs = {}
    for (ob, pc), r in clg.items():
        objs.setdefault(ob, []).append((pc, r))
    out = {}
    for ob, rows in objs.items():
        votes = {}
        for pc, r in rows:
            if r["Bc"] >= 50 or r["Dr"] >= 50:
                for cpc in by_sig.get((pc & 0xFFF, r["Bc"], r["Dr"]), []):
                    votes[cpc - pc] = votes.get(cpc - pc, 0) + 1
        bias = max(votes.items(), key=lambda kv: kv[1])[0] if votes else 0
        for pc, r in rows:
            row = out.setdefault(pc + bias, dict.fromkeys(KINDS, 0))
            for k in KINDS:
                row[k] += r[k]
    return out


def core_pcs(path):
    pcs, tot = {}, None
    for line in open(path):
        f = line.split()
        if f[0] == "totals:":
            tot = dict(zip(KINDS, map(int, f[1:])))
        else:
            pcs[int(f[0], 16)] = dict(zip(KINDS, map(int, f[1:])))
    return tot, pcs


def top(pcs, k, n=20, ties=False):
    """The n PCs with most k events (ties broken by address); with ties,
    every PC with at least the n-th count."""
    rows = sorted(((r[k], pc) for pc, r in pcs.items() if r.get(k, 0) > 0),
                  key=lambda x: (-x[0], x[1]))
    if ties and len(rows) > n:
        return [pc for c, pc in rows if c >= rows[n - 1][0]]
    return [pc for _, pc in rows[:n]]


def main(argv):
    name, cg, clg, core = argv
    cgt = cachegrind_totals(cg)
    clgt, clgp = callgrind_pcs(clg)
    cot, cop = core_pcs(core)
    clgp = rebase(clgp, cop)
    print(f"== {name}")
    print(f"{'event':<6} {'cachegrind':>13} {'callgrind':>13} {'core.h':>13} {'core vs cg %':>12}"
          f"  top-20 overlap (core vs callgrind)")
    for k in KINDS:
        a, b, c = cgt.get(k, 0), clgt.get(k, 0), cot.get(k, 0)
        pct = 100.0 * (c - a) / a if a else float("nan")
        ov = ""
        if k not in ("Ir", "Dr", "Dw", "Bc", "Bi"):
            # core's top 20 found among callgrind's (ties included)
            ta, tb = set(top(clgp, k, ties=True)), top(cop, k)
            ov = f"{len(ta.intersection(tb))}/{len(tb)}" if tb else "-"
        print(f"{k:<6} {a:>13} {b:>13} {c:>13} {pct:>+12.2f}  {ov}")


if __name__ == "__main__":
    main(sys.argv[1:])
