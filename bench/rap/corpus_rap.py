#!/usr/bin/env python3
"""RAP alone on the real-program corpus, one run per key kind.

  bench/rap/corpus_rap.py BUILD_DIR [--host qemu|valgrind] [--keys pc,value,addr,dmiss,pcaddr]
                          [--opt KEY=VALUE ...] [--templates N] NAME...

bench/corpus/corpus.py runs every model once with key=pc; this runs the
same members, inputs and environment with models=rap exact=on rap_kb=8
rap_eps=0.1 and each key kind of --keys (pc: code, value: load values,
addr: data addresses of loads and stores; dmiss: the data addresses of
the loads and stores that miss the core's L1D, with core=on
core_mode=caches, checked against the core's own miss total; pcaddr:
(pc, data address) pairs of loads and stores in the 2-D tree, over its
default domain, scored on the hot rectangles), and prints per run the
paper's mean percent error over the hot ranges (sec. 4.3), the number of
hot ranges, the largest single hot-range error (the exact ranges from
the text report), deferred splits, peak nodes and the host's stall
cycles. --opt adds a host option to every run (e.g. --opt exact_mb=1024:
a run whose exact table for its key dropped keys has no ground truth and
is refused). cc1plus compiles the first 12 of the corpus's 60 templates
(--templates N: the first N, at least 1).
Not part of CI; a run that passes the fixture's time limit fails.
"""
import json
import os
import re
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "corpus"))
import corpus  # noqa: E402  the members, their inputs and the two hosts' runners

KEYS = {"pc": "code", "value": "values", "addr": "data", "dmiss": "D-cache misses",
        "pcaddr": "code x data"}


def small_cpp(path, templates=12):
    """cc1plus's input cut to its first templates: the corpus's 60 take
    over 10 minutes under the Valgrind tool with the exact profile."""
    lines = open(f"{path}.full").read().splitlines()
    keep = [x for x in lines if not x.startswith("template") or
            int(x.split(" f")[1].split("(")[0]) < templates]
    keep[-1] = f"int main() {{ return f{templates - 1}<int>(3) + (int)f{templates - 1}<long>(2); }}"
    with open(path, "w") as f:
        f.write("\n".join(keep) + "\n")


def run(build, w, host, name, key, extra):
    prog, args, _ = corpus.members(w)[name]
    # key=dmiss: the core's caches (no pipeline timing) say which
    # accesses miss
    core = ["models=rap+core", "core_mode=caches"] if key == "dmiss" else ["models=rap"]
    corpus.MODEL_OPTS = core + ["exact=on", "rap_kb=8", "rap_eps=0.1", f"key={key}"] + extra
    tag = f"rap-{name}-{key}"
    rep = (corpus.run_qemu if host == "qemu" else corpus.run_valgrind)(build, w, tag, prog, args)
    txt = open(f"{w}/{tag}-{'qemu' if host == 'qemu' else 'vg'}.txt").read()
    # The table RAP is scored against dropped keys: no ground truth. (The
    # load-value table, which no RAP key reads, may overflow on its own.)
    if rep["exact"]["pcs" if key == "pc" else "keys"]["dropped"]:
        raise RuntimeError(f"{tag}: the exact profile is incomplete, raise exact_mb (--opt)")
    if key == "dmiss":  # RAP saw every miss the core counted, and no other event
        cs, rs = rep["models"]["core"]["stats"], rep["models"]["rap"]["stats"]
        misses = cs["l1d_read_misses"] + cs["l1d_write_misses"]
        if rs["events"] != misses:
            raise RuntimeError(f"{tag}: RAP took {rs['events']} events, the core "
                               f"counted {misses} D-cache misses")
    return rep, txt


def worst(txt):
    """The largest |rap - exact| / exact over the hot ranges the text
    report lists with their exact share ("... 12.34% (exact 12.50%)")."""
    errs = [abs(float(a) - float(b)) / float(b) * 100
            for a, b in re.findall(r"([0-9.]+)%\s+\(exact ([0-9.]+)%\)", txt) if float(b) > 0]
    return max(errs) if errs else None


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a.pop(0))
    host, keys, extra, names, templates = "valgrind", ["pc", "value", "addr"], [], [], 12
    while a:
        x = a.pop(0)
        if x == "--host":
            host = a.pop(0)
        elif x == "--keys":
            keys = a.pop(0).split(",")
        elif x == "--opt":
            extra.append(a.pop(0))
        elif x == "--templates":
            templates = int(a.pop(0))
        else:
            names.append(x)
    w = os.path.join(build, "corpus")
    corpus.make_inputs(w)
    os.replace(f"{w}/gen.cpp", f"{w}/gen.cpp.full")
    small_cpp(f"{w}/gen.cpp", templates)
    print("| program | host | keys | hot ranges | mean error % | worst range % "
          "| deferred | peak nodes | stall cycles | % of instructions |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        for k in keys:
            t = time.time()
            rep, txt = run(build, w, host, n, k, extra)
            acc = rep.get("accuracy", {}).get("rap_hot_err_pct", {})
            st = rep["models"]["rap"]["tree" if "tree" in rep["models"]["rap"] else "stats"]
            st = st.get("stats", st)
            cyc = rep.get("overhead", {}).get("models", {}).get("rap")
            pct = 100.0 * cyc / rep["instructions"] if cyc is not None else None
            wr = worst(txt)
            print(f"| {n} | {host} | {KEYS.get(k, k)} | {acc.get('n', '-')} | "
                  f"{corpus.fmt(acc.get('value'), 3)} | {corpus.fmt(wr, 2)} | "
                  f"{st.get('deferred', '-')} | {st.get('peak', '-')} | {cyc} | "
                  f"{corpus.fmt(pct, 3)} |", flush=True)
            print(f"{n} {k}: {rep['instructions']} instructions, {time.time() - t:.0f} s",
                  file=sys.stderr)


if __name__ == "__main__":
    main()
