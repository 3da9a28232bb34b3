#!/usr/bin/env python3
"""The co-processor's stripped thresholds swept one at a time on the
real-program corpus, each setting against the buffered baseline at equal
modelled overhead and on the convergence curve (the paper's figure of
error against overhead cycles).

  bench/coproc/cp_sweep.py BUILD_DIR [--checkpoints N] [--settings A,B,..]
                           [--table-only] [KEY=VALUE ...] [NAME ...]

Each corpus member is recorded as bench/coproc/cp_corpus.py does (the
same BUILD_DIR/corpus/NAME.trace), then BUILD_DIR/examples/replay/
hwprof-cp-compare runs on it once per setting, with the co-processor's
seed 1 (one seed per run: its spread over seeds is 0.001-0.011, see
docs/coproc.md) against 4 baseline seeds at the equal-overhead period,
and checkpoints=N (default 10) for the convergence curve. A setting
changes one hwp_cp_lvp_desc field (or one pair) from the defaults,
within the paper's design space: its sensitivity analysis (half and
twice the slots), the counter width, the failed and done counters'
interrupt thresholds, the thrash factor, the confidence test and the
visit bound. --settings picks some by name (default: all, in the order
below). KEY=VALUE arguments go to every run before the setting's own, so
they move the point swept around (slots=128 sweeps around 128 slots, the
default before it became 256). Each run's output is kept in
BUILD_DIR/corpus/sweep/NAME.[KEY=VALUE.]SETTING.txt, so a rerun (or
--table-only, which runs nothing) reuses what ran with the same library;
a change of the library's defaults needs that directory emptied.

Prints two tables: the convergence comparison at the defaults (per
program: the co-processor's final overhead and error, the baseline's mean
error at equal overhead, and the overhead at which the co-processor and
the best of the three samplers, periods P/4, P and 4P, first reach that
error), then the sweep (per setting and program: co-processor error /
baseline mean, and "<" when the co-processor reaches the baseline's error
at less overhead than the samplers), with how many programs each setting
wins on either count. Not run in CI.
"""
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import cp_corpus  # noqa: E402  recording, the tool's figures, the corpus

# name -> the key=value pairs it changes; the defaults are in the Options
# table of docs/coproc.md
SETTINGS = [
    ("default", []),
    ("slots=64", ["slots=64"]),
    ("slots=128", ["slots=128"]),  # half the default, and the default before
    ("slots=256", ["slots=256"]),  # the default (twice around slots=128)
    ("visit_loads=2^16", ["visit_loads=65536"]),
    ("visit_loads=2^18", ["visit_loads=262144"]),
    ("thrash_mult=2", ["thrash_mult=2"]),
    ("thrash_mult=8", ["thrash_mult=8"]),
    ("failed_limit=32", ["failed_limit=32"]),
    ("failed_limit=512", ["failed_limit=512"]),
    ("done_limit=16", ["done_limit=16"]),
    ("done_limit=128", ["done_limit=128"]),
    ("conf_samples=100", ["conf_samples=100"]),
    ("conf_samples=400", ["conf_samples=400"]),
    ("conf 95/5", ["conf_hi_pct=95", "conf_lo_pct=5"]),
    ("conf 80/20", ["conf_hi_pct=80", "conf_lo_pct=20"]),
    ("max_visits=8", ["max_visits=8"]),
    ("min_samples=32", ["min_samples=32"]),
    ("min_samples=128", ["min_samples=128"]),
    ("counter_bits=6", ["counter_bits=6"]),
    ("counter_bits=12", ["counter_bits=12"]),
]


def run(build, trace, out, opts):
    """The tool's output for one setting, from the cache or a run."""
    if not os.path.exists(out):
        tool = os.path.join(build, "examples", "replay", "hwprof-cp-compare")
        text = subprocess.run([tool, trace, "seed=1"] + opts, capture_output=True, text=True,
                              check=True).stdout
        with open(out + ".part", "w") as f:
            f.write(text)
        os.rename(out + ".part", out)
    with open(out) as f:
        text = f.read()
    r = cp_corpus.parse(text)
    m = re.search(r"^reach ([\d.]+) \(the baseline mean\): co-processor at (-?\d+) cycles, "
                  r"sampler at (-?\d+) cycles .*co-processor first: (yes|no)$", text, re.M)
    r.update(level=float(m.group(1)), cp_reach=int(m.group(2)), s_reach=int(m.group(3)),
             first=m.group(4) == "yes")
    return r


def reach(c):
    return "never" if c < 0 else f"{c:.0f}"


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a.pop(0))
    ncheck, picked, table_only = 10, [s for s, _ in SETTINGS], False
    while a and a[0].startswith("--"):
        o = a.pop(0)
        if o == "--table-only":
            table_only = True
        elif o in ("--checkpoints", "--settings") and a:
            v = a.pop(0)
            if o == "--checkpoints":
                if not v.isdigit() or int(v) < 1:
                    sys.exit("cp_sweep: --checkpoints takes a positive number")
                ncheck = int(v)
            else:
                picked = v.split(",")
        else:
            sys.exit(__doc__)
    base = [o for o in a if "=" in o]
    a = [o for o in a if "=" not in o]
    known = dict(SETTINGS)
    for s in picked:
        if s not in known:
            sys.exit(f"cp_sweep: unknown setting {s} (settings: {', '.join(known)})")
    w = os.path.join(build, "corpus")
    m = cp_corpus.corpus.members(w)
    # cc1plus: its recording does not fit in memory (docs/coproc.md)
    names = a or [n for n in m if n != "cc1plus"]
    for n in names:
        if n not in m:
            sys.exit(f"cp_sweep: unknown member {n} (members: {' '.join(m)})")
    cp_corpus.corpus.make_inputs(w)
    os.makedirs(os.path.join(w, "sweep"), exist_ok=True)
    res = {}
    # setting by setting, so a sweep cut short has whole rows
    for s in picked:
        for n in names:
            prog, args, _ = m[n]
            tag = "".join(f"{o}." for o in base) + s.replace('/', '-').replace(' ', '_')
            out = os.path.join(w, "sweep", f"{n}.{tag}.txt")
            if table_only and not os.path.exists(out):
                continue
            try:
                trace = cp_corpus.record(build, w, n, prog, args)
                res[s, n] = run(build, trace, out, base + known[s] + [f"checkpoints={ncheck}"])
            except (RuntimeError, subprocess.SubprocessError, OSError, AttributeError) as e:
                print(f"cp_sweep: {n} {s}: {str(e)[-200:]}", file=sys.stderr)
            if (s, n) in res:
                print(f"cp_sweep: {s} {n} done", file=sys.stderr, flush=True)
    print("| program | co-processor overhead (cycles) | co-processor wrms | baseline wrms "
          "(mean of 4) | co-processor reaches it at | best sampler (P/4, P, 4P) reaches it at "
          "| co-processor first |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for n in names:
        r = res.get(("default", n))
        if r:
            print(f"| {n} | {r['cp_cycles']} | {r['err']:.3f} | {r['b_mean']:.3f} | "
                  f"{reach(r['cp_reach'])} | {reach(r['s_reach'])} | "
                  f"{'yes' if r['first'] else 'no'} |")
    print()
    print("| setting | " + " | ".join(names) + " | lower error | reaches first |")
    print("| --- " * (len(names) + 3) + "|")
    for s in picked:
        rs = [res.get((s, n)) for n in names]
        if not any(rs):
            continue
        cells = [f"{r['err']:.3f} / {r['b_mean']:.3f}{' <' if r['first'] else ''}" if r else "not run"
                 for r in rs]
        ran = [r for r in rs if r]
        print(f"| {s} | " + " | ".join(cells) +
              f" | {sum(r['err'] < r['b_mean'] for r in ran)} of {len(ran)} "
              f"| {sum(r['first'] for r in ran)} of {len(ran)} |")


if __name__ == "__main__":
    main()
