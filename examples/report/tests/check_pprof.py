#!/usr/bin/env python3
"""examples/report/tests/check_pprof.py HWPROF_REPORT HWPROF_REPLAY MAKE_TRACE NAMED_ELF WORKDIR

hwprof-report --pprof read by the real tool, `go tool pprof` (Debian's
golang-go; the test skips, exit 77, without it), against the report's
JSON (written by the models), the expected figures computed here:
  - -raw: the sample types are the report's per-PC events, and each
    type's total over the samples equals the report's: ProfileMe samples,
    estimated fetches and latency summed over its PCs (rounded per PC),
    RAP's events (the tree's node counters sum to the events it counted),
    stratified sampling's events per pc;
  - -top -addresses: every address listed, the costliest first, carries
    the report's estimated fetches of that PC;
  - names: with --elf NAMED_ELF loaded where the trace's PCs land in its
    `main`, -top -lines puts the costs on `main` at the source lines
    binutils' addr2line gives for those addresses, and -raw's mapping is
    the ELF file with functions and line numbers;
  - bad input: a report with no per-PC table (the path profiler alone) is
    refused with the reason and leaves the file as it was; an unwritable
    path is refused and leaves nothing.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from rp_check import Checks

tool, replay, make_trace, elf, work = sys.argv[1:6]
check = Checks(work)
p = check.path

go = shutil.which("go")
if not go:
    print("SKIP: go is not installed (Debian's golang-go, tests/deps.sh installs it): "
          "nothing reads the pprof file")
    check.done(skipped=True)
env = dict(os.environ, HOME=work, GOCACHE=p("gocache"), GOFLAGS="", GOTOOLCHAIN="local")


def pprof(*args):
    r = subprocess.run([go, "tool", "pprof", "-symbolize=none"] + list(args),
                       capture_output=True, text=True, env=env)
    check(r.returncode == 0, f"go tool pprof {' '.join(args)}: {r.stderr}")
    return r.stdout


def raw(path):
    """-raw: the sample types and each sample's values."""
    out = pprof("-raw", path)
    lines = out.splitlines()
    at = lines.index("Samples:") if "Samples:" in lines else len(lines) - 1
    types = [t.split("/")[0] for t in lines[at + 1].replace("[dflt]", "").split()]
    samples = []
    for l in lines[at + 2:]:
        m = re.match(r"\s*([\d\s]+):\s*([\d\s]+)$", l)
        if not m:
            break
        samples.append((list(map(int, m.group(1).split())), list(map(int, m.group(2).split()))))
    return types, samples, out


rep = check.replayed(make_trace, replay, "all", 200000, "models=all")
pm = rep["models"]["profileme"]["table"]
rap = rep["models"]["rap"]
strat = rep["models"]["stratified"]["profile"]
rnd = lambda x: int(x + 0.5)
want = {
    "pm_samples": sum(e["samples"] for e in pm["pcs"]),
    "pm_fetches": sum(rnd(e["est"]) for e in pm["pcs"]),
    "pm_latency": sum(rnd(e["latency"]) for e in pm["pcs"]),
    "rap_events": rap["stats"]["n"],
    "strat_events": sum(e["count"] for e in strat["pc_profile"]),
}
check(want["pm_samples"] > 0 and want["strat_events"] > 0 and
      sum(r["count"] for r in rap["ranges"]) == want["rap_events"],
      f"the report has samples and its tree holds every event: {want}")

r = subprocess.run([tool, "--quiet", "--pprof", p("all.pb.gz"), p("all.json")],
                   capture_output=True, text=True)
check(r.returncode == 0 and not r.stderr, f"--pprof: {r.returncode} {r.stderr}")
check(open(p("all.pb.gz"), "rb").read(2) == b"\x1f\x8b", "--pprof writes gzip")
types, samples, out = raw(p("all.pb.gz"))
for t in ["pm_samples", "pm_fetches", "pm_latency", "pm_lat_fetch_map", "rap_events",
          "strat_events", "strat_invariant", "coproc_samples", "coproc_invariant"]:
    check(t in types, f"-raw: sample type {t} in {types}")
check(len(samples) == len({int(a, 16) for a in re.findall(r"^\s+\d+: (0x[0-9a-f]+)", out, re.M)}),
      "-raw: one location per sample, each its own address")
for t, v in want.items():
    got = sum(s[0][types.index(t)] for s in samples) if t in types else None
    check(got == v, f"-raw: total {t} {got}, the report's {v}")

# the costliest addresses, as -top lists them, carry the report's figures
est = {int(e["pc"], 16): rnd(e["est"]) for e in pm["pcs"]}
top = pprof("-top", "-addresses", "-sample_index=pm_fetches", p("all.pb.gz"))
rows = re.findall(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+([0-9a-f]{6,})\b", top, re.M)
check(len(rows) == len(est), f"-top: a row per sampled PC ({len(rows)}, {len(est)})\n{top}")
check(all(est.get(int(a, 16)) == int(v) for v, a in rows), f"-top: the report's fetches\n{top}")
check([int(v) for v, _ in rows] == sorted(est.values(), reverse=True),
      "-top: the costliest PC first")

# names and lines: the trace's PCs (0x401000 + 4i) placed on the ELF's main
syms = subprocess.run(["nm", elf], capture_output=True, text=True).stdout
main = [int(l.split()[0], 16) for l in syms.splitlines() if l.split()[-1:] == ["main"]]
check(len(main) == 1, f"nm finds main in {elf}")
bias = 0x401000 - main[0]
r = subprocess.run([tool, "--quiet", "--elf", f"{elf}@{bias:#x}", "--pprof", p("named.pb.gz"),
                    p("all.json")], capture_output=True, text=True)
check(r.returncode == 0, f"--pprof --elf: {r.stderr}")
a2l = subprocess.run(["addr2line", "-e", elf] + [hex(pc - bias) for pc in sorted(est)],
                     capture_output=True, text=True).stdout.split()
want_lines = {}
for pc, fl in zip(sorted(est), a2l):
    line = int(re.sub(r"\D.*", "", fl.rsplit(":", 1)[1]))
    want_lines[line] = want_lines.get(line, 0) + est[pc]
top = pprof("-top", "-lines", "-sample_index=pm_fetches", p("named.pb.gz"))
got_lines = {int(l): int(v) for v, l in
             re.findall(r"^\s*(\d+)\s.*\smain \S*make_reports\.c:(\d+)", top, re.M)}
check(len(want_lines) > 0 and got_lines == want_lines,
      f"-top -lines: fetches on main's lines {got_lines}, addr2line's {want_lines}\n{top}")
_, _, out = raw(p("named.pb.gz"))
check(re.search(r"^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ \S*" + re.escape(os.path.basename(elf)) +
                r"\s+\[FN\]\[FL\]\[LN\]", out, re.M) is not None,
      f"-raw: the ELF is mapping 1, with functions and lines\n{out[-400:]}")

# bad input
check.replayed(make_trace, replay, "paths", 200000, "models=pathprof")
with open(p("old.pb.gz"), "w") as f:
    f.write("old")
r = subprocess.run([tool, "--quiet", "--pprof", p("old.pb.gz"), p("paths.json")],
                   capture_output=True, text=True)
check(r.returncode == 1 and "no per-PC table" in r.stderr and
      open(p("old.pb.gz")).read() == "old",
      f"no per-PC table: refused, the file untouched: {r.returncode} {r.stderr}")
r = subprocess.run([tool, "--quiet", "--pprof", p("no/such/dir.pb.gz"), p("all.json")],
                   capture_output=True, text=True)
check(r.returncode == 1 and "cannot write" in r.stderr and not os.path.exists(p("no")),
      f"unwritable path: refused: {r.returncode} {r.stderr}")
check(not [f for f in os.listdir(work) if ".tmp" in f], "no temporary file left behind")
check.done()
