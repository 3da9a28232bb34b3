#!/usr/bin/env python3
"""The co-processor against the buffered baseline at equal modelled
overhead on the real-program corpus, one table row per program.

  bench/coproc/cp_corpus.py BUILD_DIR [--cp-seeds N] [KEY=VALUE ...] [NAME ...]

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
invariance is below half of that (the baseline's summed over its seeds).

The co-processor's own LFSR (slot replacement) decides which interrupts
come when, so its schedule and coverage move with its seed. --cp-seeds N
(default 4) runs it with seeds 1..N, each against its own equal-overhead
baseline (4 seeds each); the row then gives the co-processor's mean ± sd
over its seeds, the baselines' pooled mean and sd, the margin between
the two means, how many of its seeds beat their baseline's mean by one
sd, and each count as the mean over the co-processor's seeds.
KEY=VALUE arguments go to every run (hwp_cp_lvp_desc fields: slots=128
runs the table at half the slots, the default before it became 256). Not run in CI (minutes per program per seed on 2 cores).
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


def compare(build, trace, seed=1, opts=()):
    """hwprof-cp-compare's figures on one trace (opts: more key=value)."""
    tool = os.path.join(build, "examples", "replay", "hwprof-cp-compare")
    return parse(subprocess.run([tool, trace, f"seed={seed}"] + list(opts), capture_output=True,
                                text=True, check=True).stdout)


def parse(out):
    """The figures of one hwprof-cp-compare output."""
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


def mean_sd(xs):
    m = sum(xs) / len(xs)
    sd = (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 if len(xs) > 1 else 0.0
    return m, sd


def row(n, runs):
    """One table row from the runs of one program, one per co-processor
    seed."""
    r = runs[0]
    cp_m, cp_sd = mean_sd([x["err"] for x in runs])
    # the baselines pooled: each run's 4 seeds have that run's mean and sd
    b_m = sum(x["b_mean"] for x in runs) / len(runs)
    b_var = sum(x["b_sd"] ** 2 + (x["b_mean"] - b_m) ** 2 for x in runs) / len(runs)
    b_sd = b_var ** 0.5
    margin = (b_m - cp_m) / b_sd if b_sd > 0 else float("nan")
    wins = sum(x["err"] < x["b_mean"] - x["b_sd"] for x in runs)
    avg = lambda k: sum(x[k] for x in runs) / len(runs)  # noqa: E731
    cp = f"{cp_m:.3f} ± {cp_sd:.3f}" if len(runs) > 1 else f"{cp_m:.3f}"
    return (f"| {n} | {r['loads'] / 1e6:.1f} M ({r['pcs']}) | {avg('cp_cycles'):.0f} cycles, "
            f"{avg('cp_pct'):.3f}% | {avg('b_cycles'):.0f} ({avg('ratio'):.3f}) | {cp} | "
            f"{b_m:.3f} ± {b_sd:.3f} | {margin:+.1f} | {wins} of {len(runs)} | "
            f"{100 * avg('cp_cov'):.1f}% / {100 * avg('b_cov'):.1f}% | "
            f"{avg('cp_false'):.3g} / {avg('b_false'):.3g} |")


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a.pop(0))
    cp_seeds = 4
    if a[:1] == ["--cp-seeds"]:
        if len(a) < 2 or not a[1].isdigit() or int(a[1]) < 1:
            sys.exit("cp_corpus: --cp-seeds takes a positive number")
        cp_seeds = int(a[1])
        a = a[2:]
    opts = [o for o in a if "=" in o]
    a = [o for o in a if "=" not in o]
    w = os.path.join(build, "corpus")
    m = corpus.members(w)
    # cc1plus only when named: its recording (23.5 GB) does not fit in
    # memory (docs/coproc.md), as cp_sweep.py leaves it out
    names = a or [n for n in m if n != "cc1plus"]
    for n in names:
        if n not in m:
            sys.exit(f"cp_corpus: unknown member {n} (members: {' '.join(m)})")
    corpus.make_inputs(w)
    print("| program | loads (PCs) | co-processor overhead | baseline overhead (ratio) "
          "| co-processor wrms | baseline wrms, mean ± sd | margin (sds) "
          "| co-processor seeds better by one sd "
          "| executions with an estimate: co-processor / baseline "
          "| called invariant, exactly < 0.45: co-processor / baseline (4 seeds) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        prog, args, _ = m[n]
        if not os.access(prog, os.X_OK):
            print(f"| {n} | not installed | | | | | | | | |")
            continue
        try:
            trace = record(build, w, n, prog, args)
            runs = [compare(build, trace, s, opts) for s in range(1, cp_seeds + 1)]
        except (RuntimeError, subprocess.SubprocessError, OSError, AttributeError) as e:
            print(f"| {n} | failed: {str(e)[-120:]} | | | | | | | | |")
            continue
        print(row(n, runs), flush=True)


if __name__ == "__main__":
    main()
