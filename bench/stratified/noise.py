#!/usr/bin/env python3
"""How much of a stratified score is the sampling noise of its loads.

  bench/stratified/noise.py expected JSON...
  bench/stratified/noise.py seeds REF.json A.json B.json

JSON files are hosts' session reports (`json=FILE` of hwprof-replay, the
QEMU plugin or the Valgrind tool) with the stratified model.

expected: for each report, its measured section 5.3.1 error beside the
error independent sampling would give, computed from the sampled profile
alone: the metric's selection (1000 executions, 10% invariance, 40%
coverage) made on the estimates, each selected tuple's expected
|I - I_hat| = sqrt(2/pi) sqrt(I (1 - I) / k) for k samples of its load,
weighted by the tuple's estimate; and the share of that weight on loads
with fewer than 30 samples. If the error is noise, measured / expected
stays the same when the rate changes.

seeds: A and B are two runs that differ only in the seed (hash tables
and the periodic counters' phases). Their noise is independent, so for
unbiased errors E|I_A - I_B| = sqrt(2) E|I_A - I|, while an error both
seeds share (a bias of the model) cancels in I_A - I_B. The selection and
weights come from REF, a run at a higher sampling rate standing in for
the exact profile (which the reports do not hold). Disagreement / sqrt(2)
close to the measured error: the error is noise; well below it: a shared
bias.
"""
import json
import math
import sys


def load(path):
    """(report, {pc: count}, {(pc, w): count}) of the value-profile kind"""
    rep = json.load(open(path))
    p = rep["models"]["stratified"]["profile"]
    pcs = {e["pc"]: e for e in p["pc_profile"] if e["kind"] == 0}
    tup = {(t["pc"], t["w"]): t["count"] for t in p["profile"] if t["kind"] == 0}
    return rep, pcs, tup


def selected(pcs, tup):
    """section 5.3.1's selection on a profile: {pc: [(w, count)]}"""
    sel = {}
    for (pc, w), c in tup.items():
        n = pcs[pc]["count"]
        if n >= 1000 and c >= 0.1 * n:
            sel.setdefault(pc, []).append((w, c))
    return {pc: ts for pc, ts in sel.items() if sum(c for _, c in ts) >= 0.4 * pcs[pc]["count"]}


def expected(paths):
    for f in paths:
        rep, pcs, tup = load(f)
        num = den = few = 0.0
        for pc, ts in selected(pcs, tup).items():
            n, k = pcs[pc]["count"], pcs[pc]["samples"]
            for _, c in ts:
                i = c / n
                num += c * math.sqrt(2 / math.pi) * math.sqrt(i * (1 - i) / k)
                den += c
                few += c if k < 30 else 0
        acc = rep.get("accuracy", {}).get("strat_inv_err_pct")
        got = f"{acc['value']:.3f}% over {acc['n']} tuples" if acc else "no score"
        print(f"{f}: measured {got}; independent sampling {100 * num / den:.3f}%; "
              f"{100 * few / den:.1f}% of the weight on loads under 30 samples")


def seeds(ref_path, a_path, b_path):
    ref, a, b = load(ref_path), load(a_path), load(b_path)

    def inv(prof, pc, w):
        n = prof[1][pc]["count"] if pc in prof[1] else 0
        return prof[2].get((pc, w), 0) / n if n else 0.0

    dis = ea = eb = den = 0.0
    for pc, ts in selected(ref[1], ref[2]).items():
        for w, c in ts:
            ia, ib, ir = inv(a, pc, w), inv(b, pc, w), inv(ref, pc, w)
            dis += c * abs(ia - ib)
            ea += c * abs(ia - ir)
            eb += c * abs(ib - ir)
            den += c
    print(f"A and B disagree by {100 * dis / den:.3f}% (/ sqrt 2: "
          f"{100 * dis / den / math.sqrt(2):.3f}%); A against REF {100 * ea / den:.3f}%, "
          f"B against REF {100 * eb / den:.3f}%")


def main():
    a = sys.argv[1:]
    if len(a) >= 2 and a[0] == "expected":
        expected(a[1:])
    elif len(a) == 4 and a[0] == "seeds":
        seeds(*a[1:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
