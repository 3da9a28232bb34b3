#!/usr/bin/env python3
"""The tables of bench/qemu/api.sh from its JSONs.

  bench/qemu/api_table.py DIR

DIR holds apiA-PROGRAM-ROUND.json (one hyperfine --runs 1 per command and
round) and apiA.version. Per API: a program x configuration table of user
CPU as a ratio to plain QEMU of the same binary in the same rounds
(median of each command's user CPU over the rounds, then the ratio), with
"all" over the exact-counting peer and "all" and "all-bursts" over QEMU's
contrib cache plugin beside them (RATIOS) and the geometric mean over
programs as the last row; then the goal table, each configuration's
geometric mean over programs, its range, how many programs meet the goal,
and the floor the API allows beside it, and the peers' geometric means.
"""
import glob
import json
import math
import os
import re
import statistics
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(here), "corpus"))
import corpus  # noqa: E402  the members' order

COLS = ["none", "profileme", "profileme-per-tb", "profileme-core", "coproc", "coproc-bursts",
        "coproc-bursts-cb", "stratified", "stratified-bursts", "stratified-bursts-cb", "pathprof",
        "pathprof-bursts", "pathprof-bursts-cb", "rap", "rap-per-tb", "all-bursts", "all-bursts-cb",
        "all", "peer", "contrib-hotblocks", "contrib-cache", "contrib-bbv", "contrib-uftrace",
        "floor-tb", "floor-mem", "floor-cond"]
# column, numerator, denominator, what it is: each right after its numerator
RATIOS = [("all/peer", "all", "peer", "all models over the exact-counting peer"),
          ("all/contrib-cache", "all", "contrib-cache", "all models over QEMU's contrib cache plugin"),
          ("all-bursts/contrib-cache", "all-bursts", "contrib-cache",
           "all models in bursts over the contrib cache plugin")]
def floors(api1=None, api4=None):
    """The floor configuration per API: API 1's, and API 4's (API 7's too);
    api4 defaults to api1, None is no floor."""
    api4 = api1 if api4 is None else api4
    return {"1": api1, "4": api4, "7": api4}


# configuration, goal text, goal (ratio; None: a peer, shown without a
# goal), floor per API ("none" is its own floor: API 1 puts nothing in the
# translated code, API 4 and 7 one inline add per TB)
GOALS = [("none", "plugin loaded, no model", "<= 1.10x", 1.10, floors()),
         ("profileme", "ProfileMe alone (countdown only)", "<= 1.45x", 1.45,
          floors("floor-tb", "floor-cond")),
         ("profileme-core", "ProfileMe with its latencies (core sampled)", "<= 2.5x", 2.5,
          floors("floor-mem")),
         ("coproc", "co-processor alone (load values)", "<= 2x", 2.0,
          floors("floor-mem")),
         ("coproc-bursts", "co-processor alone, in bursts", "<= 2x", 2.0,
          floors("floor-mem")),
         ("stratified", "stratified alone", "<= 2x", 2.0, floors("floor-mem")),
         ("stratified-bursts", "stratified alone, in bursts", "<= 2x", 2.0,
          floors("floor-mem")),
         ("pathprof", "path profiler alone", "<= 2.5x", 2.5, floors("floor-tb")),
         ("pathprof-bursts", "path profiler alone, in bursts", "<= 2.5x", 2.5,
          floors("floor-tb", "floor-cond")),
         ("rap", "RAP on code ranges alone", "<= 1.5x", 1.5, floors("floor-tb")),
         ("all", "all models", "<= 4x", 4.0, floors("floor-mem")),
         ("all-bursts", "all models, the sampled ones in bursts", "<= 4x", 4.0,
          floors("floor-mem")),
         ("all/peer", "all models / exact-counting peer", "<= 0.35x", 0.35, floors()),
         ("all/contrib-cache", "all five models / contrib cache plugin", "<= 1.0x", 1.0,
          floors()),
         ("all-bursts/contrib-cache", "all five models in bursts / contrib cache plugin",
          "<= 1.0x", 1.0, floors()),
         ("peer", "exact-counting peer", "peer", None, floors()),
         ("contrib-hotblocks", "contrib hotblocks (inline=on)", "peer", None, floors()),
         ("contrib-cache", "contrib cache (default caches)", "peer", None, floors()),
         ("contrib-bbv", "contrib bbv", "peer", None, floors()),
         ("contrib-uftrace", "contrib uftrace", "peer", None, floors())]


def gmean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load(d):
    """{api: {program: {"plain": median user CPU s, configuration: ratio to
    plain}}}, rounds per api. A program's rounds come in sets: api.sh with
    CONFIGS writes apiA-PROGRAM-ROUND@CONFIGS.json beside the full sweep's
    apiA-PROGRAM-ROUND.json. Each configuration is taken from the latest
    set that ran it (a re-run replaces it) and divided by plain QEMU of
    that set's rounds."""
    sets = {}  # (api, program) -> {tag: [rounds]}
    for f in glob.glob(os.path.join(d, "api*-*-*.json")):
        m = re.match(r"api(\d+)-(.+)-(\d+)(?:@(.+))?\.json$", os.path.basename(f))
        if m:
            sets.setdefault((m[1], m[2]), {}).setdefault(m[4] or "", []).append(
                (os.path.getmtime(f), json.load(open(f))["results"]))
    out, nrounds = {}, {}
    for (api, prog), tags in sets.items():
        u = out.setdefault(api, {}).setdefault(prog, {})
        for _, rounds in sorted(tags.items(), key=lambda t: max(r[0] for r in t[1])):
            # a round cut short (hyperfine writes its JSON as it goes) is left out
            full = max(len(rd) for _, rd in rounds)
            rounds = [{r["command"]: r["user"] for r in rd} for _, rd in rounds if len(rd) == full]
            plain = statistics.median(rd["plain"] for rd in rounds)
            u["plain"] = plain
            for n in rounds[0]:
                if n != "plain":
                    u[n] = statistics.median(rd[n] for rd in rounds) / plain
            nrounds.setdefault(api, set()).add(len(rounds))
    return out, nrounds


def main():
    d = sys.argv[1]
    data, nrounds = load(d)
    order = list(corpus.members("W"))
    lines = []
    ratios = {}  # api -> configuration -> {program: ratio}
    for api in sorted(data):
        progs = sorted(data[api], key=lambda p: order.index(p) if p in order else len(order))
        cols = [c for c in COLS if any(c in data[api][p] for p in progs)]
        try:
            ver = open(os.path.join(d, f"api{api}.version")).read().strip()
        except OSError:
            ver = "qemu-x86_64"
        r = ratios.setdefault(api, {})
        for p in progs:
            u = data[api][p]
            for c in cols:
                if c in u and c != "plain":
                    r.setdefault(c, {})[p] = u[c]
            for col, num, den, _ in RATIOS:
                if num in u and den in u:
                    r.setdefault(col, {})[p] = u[num] / u[den]
        ratio_cols = [x for x in RATIOS if x[0] in r]
        head = [h for c in cols for h in [c] + [x[0] for x in ratio_cols if x[1] == c]]
        what = "; ".join(f"{col}: {text}" for col, _, _, text in ratio_cols)
        lines += [f"### Plugin API {api}: {ver}", "",
                  f"{'/'.join(map(str, sorted(nrounds[api])))} rounds; user CPU of each command, "
                  "median over the rounds, over plain QEMU's in the same rounds"
                  + (f" ({what})" if what else ""), "",
                  "| program | plain user ms | " + " | ".join(head) + " |",
                  "| --- |" + " ---: |" * (len(head) + 1)]
        for p in progs:
            lines.append(f"| {p} | {data[api][p]['plain'] * 1000:.0f} | " + " | ".join(
                f"{r[c][p]:.2f}" if p in r.get(c, {}) else "-" for c in head) + " |")
        lines.append("| geometric mean | | " + " | ".join(
            f"{gmean(list(r[c].values())):.2f}" if r.get(c) else "-" for c in head) + " |")
        lines.append("")
    apis = sorted(ratios, reverse=True)
    if apis:
        lines += ["### Against the goals", "",
                  "Geometric mean over programs (range; programs meeting the goal), "
                  "API " + " / API ".join(apis) + "; the floor is the same geometric mean "
                  "for the cheapest callback of the kind the configuration needs", "",
                  "| configuration | goal | " + " | ".join(f"API {a}" for a in apis) +
                  " | " + " | ".join(f"floor, API {a}" for a in apis) + " |",
                  "| --- | --- |" + " --- |" * (2 * len(apis))]
        for key, label, goal, lim, floors in GOALS:
            if not any(ratios[a].get(key) for a in apis):
                continue
            cells, fcells = [], []
            for a in apis:
                v = ratios[a].get(key)
                if not v:
                    cells.append("-")
                else:
                    met = "" if lim is None else f"; {sum(x <= lim for x in v.values())}/{len(v)}"
                    cells.append(f"{gmean(list(v.values())):.2f}x ({min(v.values()):.2f}-"
                                 f"{max(v.values()):.2f}{met})")
                f = floors.get(a)
                fv = ratios[a].get(f) if f else None
                fcells.append(f"{gmean(list(fv.values())):.2f}x ({f})" if fv else "-")
            lines.append(f"| {label} | {goal} | " + " | ".join(cells) + " | " +
                         " | ".join(fcells) + " |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
