#!/usr/bin/env python3
"""The co-processor against the buffered baseline at equal modelled
overhead on the real-program corpus, one table row per program.

  bench/coproc/cp_corpus.py BUILD_DIR [NAME ...]

Each corpus member (bench/corpus/corpus.py, same inputs and fixed seeds)
is recorded once under the Valgrind tool (models=none, record=; kept as
BUILD_DIR/corpus/NAME.trace, shared with bench/pathprof/corpus_hpt.py, so
a rerun only replays), then BUILD_DIR/examples/replay/hwprof-cp-compare
runs the co-processor on its loads, searches the baseline's period whose
modelled overhead equals the co-processor's and scores 4 baseline seeds
at it, all with hwp_cp_wrms against the exact profile. The row gives
both overheads, the co-processor's error, the baseline's mean and sd,
the margin in baseline sds, the share of load executions each
profile has an estimate for, and how many characterised estimates each
calls invariant (>= 0.9, the confidence threshold) whose exact
invariance is below half of that (the baseline's summed over its seeds). Not run in CI (minutes per program on 2
cores).
"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "bench", "corpus"))
sys.path.insert(0, os.path.join(root, "bench", "pathprof"))
import corpus  # noqa: E402  the corpus's members and inputs
from corpus_hpt import record  # noqa: E402  the recording the path table's corpus run shares


def compare(build, trace):
    tool = os.path.join(build, "examples", "replay", "hwprof-cp-compare")
    out = subprocess.run([tool, trace], capture_output=True, text=True, check=True).stdout
    cp = re.search(r"co-processor: (\d+) cycles \(([\d.]+)% of (\d+) insns\)", out)
    cov = re.findall(r"covering ([\d.]+) of executions", out)
    false_inv = [int(f) for f in re.findall(r"exactly < 0\.45: (\d+)", out)]
    err = re.search(r"^coproc +wrms ([\d.]+)", out, re.M)
    base = re.search(r"baseline: period (\d+), (\d+) cycles \(ratio ([\d.]+)\)", out)
    ms = re.search(r"baseline mean ([\d.]+) sd ([\d.]+)", out)
    loads = re.search(r"^(\d+) loads, (\d+) load PCs", out, re.M)
    return dict(loads=int(loads.group(1)), pcs=int(loads.group(2)),
                cp_cycles=int(cp.group(1)), cp_pct=float(cp.group(2)),
                err=float(err.group(1)), cp_cov=float(cov[0]),
                b_cycles=int(base.group(2)), ratio=float(base.group(3)),
                b_mean=float(ms.group(1)), b_sd=float(ms.group(2)),
                b_cov=sum(float(c) for c in cov[1:]) / max(1, len(cov) - 1),
                cp_false=false_inv[0], b_false=sum(false_inv[1:]))


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a.pop(0))
    w = os.path.join(build, "corpus")
    m = corpus.members(w)
    names = a or list(m)
    for n in names:
        if n not in m:
            sys.exit(f"cp_corpus: unknown member {n} (members: {' '.join(m)})")
    corpus.make_inputs(w)
    print("| program | loads (PCs) | co-processor overhead | baseline overhead (ratio) "
          "| co-processor wrms | baseline wrms, mean ± sd | margin (sds) "
          "| executions with an estimate: co-processor / baseline "
          "| called invariant, exactly < 0.45: co-processor / baseline (all seeds) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        prog, args, _ = m[n]
        if not os.access(prog, os.X_OK):
            print(f"| {n} | not installed | | | | | | | |")
            continue
        try:
            r = compare(build, record(build, w, n, prog, args))
        except (RuntimeError, subprocess.SubprocessError, OSError, AttributeError) as e:
            print(f"| {n} | failed: {str(e)[-120:]} | | | | | | | |")
            continue
        margin = (r["b_mean"] - r["err"]) / r["b_sd"] if r["b_sd"] > 0 else float("nan")
        print(f"| {n} | {r['loads'] / 1e6:.1f} M ({r['pcs']}) | {r['cp_cycles']} cycles, "
              f"{r['cp_pct']:.3f}% | {r['b_cycles']} ({r['ratio']:.3f}) | {r['err']:.3f} | "
              f"{r['b_mean']:.3f} ± {r['b_sd']:.3f} | {margin:+.1f} | "
              f"{100 * r['cp_cov']:.1f}% / {100 * r['b_cov']:.1f}% | "
              f"{r['cp_false']} / {r['b_false']} |", flush=True)


if __name__ == "__main__":
    main()
