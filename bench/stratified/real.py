#!/usr/bin/env python3
"""The stratified sampler's accuracy on the real-program corpus.

  bench/stratified/real.py BUILD_DIR [--host qemu|valgrind|both]
                           [--opt KEY=VALUE]... [NAME ...]

Runs the corpus members (bench/corpus/corpus.py: the same programs and
inputs) with the stratified model alone and the exact profile, which is
much faster than the corpus's every-model run, and prints one row per
run: the section 5.3.1 weighted invariance error with the number of
selected tuples, the exact side's distinct (load, value) tuples and what
it dropped (a score against an incomplete exact profile is refused by the
host: the error column then reads "refused"), and what the host-side
profile lost (counts dropped with their tuple or their pc, as % of the
counts folded). --opt passes a host option (e.g. strat_tuples=1048576,
exact_mb=2048); it may be repeated. Not part of CI.
"""
import json
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "corpus"))
import corpus  # noqa: E402  the members, their inputs and the two hosts' runners


def row(name, host, rep, secs):
    acc = rep.get("accuracy", {}).get("strat_inv_err_pct")
    vals = rep["exact"]["values"]
    prof = rep["models"]["stratified"]["profile"]["stats"]
    total = prof["total"] or 1
    err = f"{acc['value']:.2f}" if acc else "refused"
    n = acc["n"] if acc else "-"
    return (f"| {name} | {host} | {rep['loads']} | {vals['distinct']} | {vals['dropped']} | "
            f"{prof['tuples']} | {prof['pcs']} | {100.0 * prof['dropped_count'] / total:.2f} | "
            f"{100.0 * prof['dropped_pc_count'] / total:.2f} | {n} | {err} | {secs:.0f} |")


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a.pop(0))
    host, opts, names = "both", [], []
    while a:
        x = a.pop(0)
        if x == "--host":
            host = a.pop(0)
        elif x == "--opt":
            opts.append(a.pop(0))
        else:
            names.append(x)
    corpus.MODEL_OPTS = ["models=strat", "exact=on"] + opts
    w = os.path.join(build, "corpus-strat")
    m = corpus.members(w)
    for n in names:
        if n not in m:
            sys.exit(f"real.py: unknown member {n} (members: {' '.join(m)})")
    corpus.make_inputs(w)
    hosts = ["qemu", "valgrind"] if host == "both" else [host]
    print("| program | host | loads | exact tuples | exact dropped | profile tuples | "
          "profile pcs | % counts lost with their tuple | % counts with no pc entry | "
          "tuples selected | error % | s |")
    print("| --- | --- |" + " ---: |" * 10)
    for n in names or list(m):
        prog, args, _ = m[n]
        if not os.access(prog, os.X_OK):
            print(f"{n}: {prog} not installed, skipped", file=sys.stderr)
            continue
        for h in hosts:
            t = time.time()
            try:
                rep = (corpus.run_qemu if h == "qemu" else corpus.run_valgrind)(
                    build, w, n, prog, args)
            except Exception as e:  # one failed run must not lose the others' rows
                print(f"{n} under {h}: failed: {e}", file=sys.stderr)
                continue
            print(row(n, h, rep, time.time() - t), flush=True)


if __name__ == "__main__":
    main()
