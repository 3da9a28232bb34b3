#!/usr/bin/env python3
"""examples/report/tests/check_report.py HWPROF_REPORT MAKE_REPORTS WORKDIR

hwprof-report's reader and merger:
  - the merge of two halves of a stream equals the report of the whole,
    for the models whose merge is exact (ProfileMe's table, the
    stratified accumulator, the hot path table with room for every
    path): every row of every table, as CSV;
  - the co-processor's buffered value sampler, whose two runs sample
    other loads than one run does: the merge holds the samples of both
    halves (each pair's count and each load's total, added here from
    the halves' JSON), and the loads it saw add up to the whole's;
  - every class of bad input is one line on stderr naming the file and,
    for damaged text, the byte offset of the damage; exit status 1;
  - a merge of different configurations is refused naming the field;
  - PCs are named from the ELF file the report's "modules" member names,
    at the bias given or derived from the file's layout, and placed on
    their source lines in the callgrind export; a missing file is a
    warning and its addresses stay addresses.
"""
import json
import os
import re
import shutil
import subprocess
import sys

from rp_check import Checks

tool, make, work = sys.argv[1:4]
check = Checks(work)
p = check.path
subprocess.run([make, work], check=True)


def run(*args):
    return subprocess.run([tool, *args], capture_output=True, text=True)


# ---- merge of two halves equals the whole ----------------------------------
for table in ("pm_table.insns", "strat_acc.invariance", "hpt.paths"):
    merged = run("--quiet", "--table", table, "--csv", "-", p("half_a.json"), p("half_b.json"))
    whole = run("--quiet", "--table", table, "--csv", "-", p("whole.json"))
    check(merged.returncode == 0 and whole.returncode == 0,
          f"{table}: exit {merged.returncode}/{whole.returncode}: {merged.stderr}{whole.stderr}")
    rows = whole.stdout.splitlines()
    check(len(rows) > 10, f"{table}: the whole stream's table has rows ({len(rows)})")
    check(merged.stdout == whole.stdout, f"{table}: merge of the halves equals the whole")
    half = run("--quiet", "--table", table, "--csv", "-", p("half_a.json"))
    check(half.stdout != whole.stdout, f"{table}: one half alone differs from the whole")

# the buffered sampler: the halves' samples, added
halves = [json.load(open(p(f)))["models"]["coproc_simple"] for f in ("half_a.json", "half_b.json")]
pairs, totals = {}, {}
for h in halves:
    for e in h["pairs"]:
        if "value" in e:
            k = (int(e["pc"], 16), int(e["value"], 16))
            pairs[k] = pairs.get(k, 0) + e["count"]
        else:
            totals[int(e["pc"], 16)] = totals.get(int(e["pc"], 16), 0) + e["count"]
merged = run("--quiet", "--table", "coproc_simple", "--csv", "-", p("half_a.json"),
             p("half_b.json"))
rows = [l.split(",") for l in merged.stdout.splitlines()[1:]]
got = {(int(r[0], 16), int(r[1], 16)): (int(r[3]), r[5]) for r in rows}
want = {k: (totals[k[0]], f"{c / totals[k[0]]:.3f}") for k, c in pairs.items()}
check(merged.returncode == 0 and len(want) > 10 and got == want,
      f"coproc_simple: the merge holds both halves' samples ({len(got)} rows, {len(want)} "
      f"pairs){merged.stderr}")
r = run("--quiet", "--json", p("merged_cps.json"), p("half_a.json"), p("half_b.json"))
m = json.load(open(p("merged_cps.json")))["models"]["models.coproc_simple"]["stats"] if r.returncode == 0 else {}
whole_st = json.load(open(p("whole.json")))["models"]["coproc_simple"]["stats"]
check(m.get("events") == whole_st["events"] and
      m.get("samples") == sum(h["stats"]["samples"] for h in halves),
      f"coproc_simple: loads {m.get('events')} (whole {whole_st['events']}), samples "
      f"{m.get('samples')} of the halves' {[h['stats']['samples'] for h in halves]}")

# the merged report, written back and read again, still equals the whole
r = run("--quiet", "--json", p("merged.json"), p("half_a.json"), p("half_b.json"))
check(r.returncode == 0, f"--json: {r.stderr}")
again = run("--quiet", "--table", "pm_table", "--csv", "-", p("merged.json"))
whole = run("--quiet", "--table", "pm_table", "--csv", "-", p("whole.json"))
check(again.returncode == 0 and again.stdout == whole.stdout, "--json output reads back")

# ---- bad input ---------------------------------------------------------------
text = open(p("whole.json")).read()


def bad(name, content, expect, offset=None):
    path = p(name)
    with open(path, "w") as f:
        f.write(content)
    r = run("--quiet", path)
    lines = r.stderr.strip().splitlines()
    check(r.returncode == 1, f"{name}: exit status 1 (got {r.returncode})")
    check(len(lines) == 1, f"{name}: one line on stderr (got {lines!r})")
    line = lines[0] if lines else ""
    check(path in line, f"{name}: the reason names the file: {line}")
    check(re.search(expect, line) is not None, f"{name}: reason matches {expect!r}: {line}")
    if offset is not None:
        m = re.search(r"byte (\d+)", line)
        check(m is not None and int(m.group(1)) == offset,
              f"{name}: byte offset {offset}: {line}")


cut = len(text) // 2
bad("truncated.json", text[:cut], r"json: ", cut)
at = text.index('"samples":', 200) + len('"samples"')
bad("malformed.json", text[:at] + "#" + text[at + 1:], r"expected ':'", at)
at = text.index('"pm_table"', text.index('"model"'))
bad("unknown.json", text[:at] + '"pm_tabel"' + text[at + 10:], r'unknown model "pm_tabel"', at)
at = text.index('"version":1') + len('"version":')
bad("newer.json", text[:at] + "9" + text[at + 1:], r"newer", at)
bad("empty.json", "", r"empty file", 0)
bad("array.json", "[1,2]", r"not a report", 0)
bad("nomodel.json", '{"schema":"x","models":{}}', r"no model report", 0)
bad("binary.json", "\x7fELF\x02\x01\x01" + "\x00" * 40, r"not a report", 0)
# a desc the model refuses: the model's reason
at = text.index('"capacity":') + len('"capacity":')
end = text.index(",", at)
bad("baddesc.json", text[:at] + "3" + text[end:], r"capacity|desc")

# a host's sections, each damaged in the one way its reader names
head = '{"schema":"hwprof-session-1",'
body = text[len(head):]
check(text.startswith(head), "whole.json starts with its schema")
bad("noblocks.json", head + '"hot_blocks":{"paths":[{"start":"0x1","shape":"0x1"}]},' + body,
    r"hot_blocks: a path with neither blocks nor an error", len(head) + 23)
sites = ",".join(f'"0x{i + 1:x}"' for i in range(9))
bad("sites.json", head + '"coproc_contexts":{"contexts":[{"key":"0x1","sites":[' + sites + ']}]},' +
    body, r"a context with more than 8 call sites")
bad("noframes.json", head + '"call_stacks":{"stacks":[{"count":3}]},' + body,
    r"call_stacks: a stack without frames")
# more model reports than one file may hold
m0 = text.index('{"model":"hpt"')
m1 = text.index(',"coproc_simple"')
hpt = text[m0:m1]
bad("many.json", head + '"models":{' + ",".join(['"hpt":' + hpt] * 33) + "}}",
    r"more than 32 model reports in one file")
# a model's own reader refuses its report: the model and the file's path to it
at = text.index('"ways":', m0) + len('"ways":')
end = text.index(",", at)
bad("badhpt.json", text[:at] + '"x"' + text[end:], r"hpt report at models\.hpt: json: expected a number")

# members a newer writer may add inside the hosts' sections are passed
# over, and the file merges with itself (its modules then repeat)
extra = head + ('"modules":[{"path":"/x","lo":"0x1000","hi":"0x2000","note":"y"}],'
                '"timeline":{"every":10,"insns":[1,2],"counters":{"later":3,"rap.splits":[1,2]}},'
                '"hot_blocks":{"paths":[{"start":"0x1","shape":"0x1","n":1,"blocks":["0x1"],'
                '"later":[1,2]}],"later":3},'
                '"coproc_contexts":{"contexts":[{"key":"0x1","sites":["0x2"],"later":{}}]},'
                '"call_stacks":{"stacks":[{"frames":["a","b"],"count":2,"later":"x"}],"later":1},') + body
with open(p("extra.json"), "w") as f:
    f.write(extra)
r = run("--quiet", "--json", p("extra_merged.json"), p("extra.json"), p("extra.json"))
check(r.returncode == 0, f"extra.json: unknown members are passed over: {r.stderr}")
if r.returncode == 0:
    hb = json.load(open(p("extra_merged.json"))).get("hot_blocks", {}).get("paths", [])
    check([(x["start"], x["blocks"]) for x in hb] == [("0x1", ["0x1"])],
          f"extra.json twice: its one hot path, its known members: {hb}")
# a path that opens but cannot be read (a directory)
r = run("--quiet", work)
check(r.returncode == 1 and "read error" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
      f"a directory: one line, a read error: {r.stderr}")

# a file that does not exist
r = run("--quiet", p("missing.json"))
check(r.returncode == 1 and "missing.json: cannot open" in r.stderr, f"missing file: {r.stderr}")

# configurations that do not merge: the field is named
r = run("--quiet", p("half_a.json"), p("other.json"))
check(r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1,
      f"mismatch: one line, exit 1: {r.stderr}")
check("other.json" in r.stderr and "capacity" in r.stderr,
      f"mismatch: names the file and the field: {r.stderr}")
# a report with other models than the first
with open(p("rap_only.json"), "w") as f:
    f.write(text[text.index('{"model":"pm_table"'):text.index(',"strat_acc"')])
r = run("--quiet", p("half_a.json"), p("rap_only.json"))
check(r.returncode == 1 and "not the same configuration" in r.stderr,
      f"different model sets: {r.stderr}")

# ---- queries -------------------------------------------------------------------
r = run("--top", "3", p("whole.json"))
check(r.returncode == 0 and "pm_table.insns" in r.stdout, f"listing: {r.stderr}")
listed = [l for l in r.stdout.splitlines() if l.startswith("0x")]
check(len(listed) == 12, f"--top 3: three rows in each of the four tables ({len(listed)})")
r = run("--key", "0x401000", p("whole.json"))
check(r.returncode == 0 and "estimate" in r.stdout and "95% interval" in r.stdout
      and "samples" in r.stdout and "interval" in r.stdout, f"--key: {r.stdout}{r.stderr}")
r = run("--tables", p("whole.json"))
check(r.returncode == 0 and "strat_acc.invariance" in r.stdout, f"--tables: {r.stdout}")
r = run("--table", "nosuch", p("whole.json"))
check(r.returncode == 1 and "nosuch" in r.stderr, f"unknown table: {r.stderr}")
r = run("--help")
for word in ("--top", "--key", "--table", "--csv", "--callgrind", "--folded", "--bbv",
             "--html", "--json", "--elf"):
    check(word in r.stdout, f"--help documents {word}")

# ---- names -------------------------------------------------------------------
# PCs inside make_reports' own main(), the image placed at a bias as a
# loader would: the report's "modules" member names the file. Where main
# is, and the executable segment's address, come from binutils' readelf.
if shutil.which("readelf") and shutil.which("nm"):
    exe = os.path.abspath(make)
    syms = subprocess.run(["readelf", "-Ws", exe], capture_output=True, text=True).stdout
    main = [l.split() for l in syms.splitlines() if l.split()[-1:] == ["main"] and "FUNC" in l]
    segs = subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout
    loads = [l.split() for l in segs.splitlines() if l.split()[:1] == ["LOAD"]]
    xva = min(int(l[2], 16) for l in loads if "E" in l[6:-1])
    pie = "DYN" in subprocess.run(["readelf", "-hW", exe], capture_output=True, text=True).stdout
    bias = 0x555555000000 if pie else 0
    check(len(main) == 1 and int(main[0][2]) > 8, f"readelf finds main: {main}")
    at = bias + int(main[0][1], 16)
    named = os.path.join(work, "named")
    os.makedirs(named, exist_ok=True)
    subprocess.run([make, named, hex(at)], check=True)
    base = open(os.path.join(named, "whole.json")).read()

    def with_modules(name, mods):
        path = os.path.join(named, name)
        with open(path, "w") as f:
            f.write(base.replace('"instructions":3000', '"instructions":3000,"modules":' + mods, 1))
        return path

    lo = hex(bias + xva)
    for name, mods in (("layout.json", f'[{{"path":"{exe}","lo":"{lo}","hi":"0x0"}}]'),
                       ("bias.json", f'[{{"path":"{exe}","lo":"{lo}","hi":"0x0","bias":"{hex(bias)}"}}]')):
        r = run("--quiet", "--table", "pm_table", "--csv", "-", with_modules(name, mods))
        rows = {l.split(",")[0]: l.split(",")[1] for l in r.stdout.splitlines()[1:]}
        check(r.returncode == 0 and rows.get(hex(at)) == '"main"',
              f"{name}: {hex(at)} is main: {rows.get(hex(at))} {r.stderr}")
        check(rows.get(hex(at + 4)) == '"main+0x4"', f"{name}: main+0x4: {rows.get(hex(at + 4))}")
    # per-function totals: main's samples are those of the PCs inside main
    # (its address and size from readelf, the samples from the JSON)
    import json
    size = int(main[0][2])
    pcs = json.load(open(os.path.join(named, "whole.json")))["models"]["pm_table"]["pcs"]
    in_main = sum(e["samples"] for e in pcs if at <= int(e["pc"], 16) < at + size)
    r = run("--functions", "--table", "pm_table", os.path.join(named, "layout.json"))
    got = [l.split() for l in r.stdout.splitlines() if l.startswith("main ")]
    check(r.returncode == 0 and len(got) == 1 and int(got[0][1]) == in_main > 0,
          f"--functions: main's samples {got} equal the JSON's {in_main}: {r.stderr}")
    # source lines (addr2line over the DWARF line table): the PCs in main
    # fall on lines of main's body in make_reports.c
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_reports.c")
    first = [i + 1 for i, l in enumerate(open(src)) if l.startswith("int main(")][0]
    r = run("--quiet", "--callgrind", os.path.join(named, "cg.out"),
            os.path.join(named, "layout.json"))
    cg = open(os.path.join(named, "cg.out")).read().split("\nfn=main\n")
    fl = re.findall(r"^fl=(.*)$", cg[0], re.M) if len(cg) == 2 else []
    lines = [int(l.split()[1]) for l in cg[1].split("\n\n")[0].splitlines()
             if l.startswith("0x")] if len(cg) == 2 else []
    check(r.returncode == 0 and fl and fl[-1].endswith("make_reports.c"),
          f"callgrind: main's file is make_reports.c: {fl[-1:]} {r.stderr}")
    check(lines and all(first <= l <= first + 40 for l in lines),
          f"callgrind: main's PCs on main's lines {first}..: {lines[:8]}")
    r = run("--quiet", "--table", "pm_table", "--csv", "-",
            with_modules("missing.json", '[{"path":"/nonexistent/prog","lo":"0x1000"}]'))
    rows = {l.split(",")[0]: l.split(",")[1] for l in r.stdout.splitlines()[1:]}
    check(r.returncode == 0 and "/nonexistent/prog" in r.stderr and rows.get(hex(at)) == '""',
          f"a missing module: a warning, addresses stay: {r.stderr} {rows.get(hex(at))}")
    r = run("--top", "3", os.path.join(named, "missing.json"))
    check("names: " in r.stdout and "unresolved" in r.stdout, f"unresolved listed: {r.stdout[-300:]}")
else:
    check(False, "binutils (readelf, nm) are not installed")

check.done()
