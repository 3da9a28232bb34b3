#!/usr/bin/env python3
"""bench/harness/check_hwprof_bench.py HWPROF_BENCH MAKE_TRACE WORKDIR

hwprof-bench's contract, in seconds: bad input exits 2 with one line
naming the file, offset or field; the JSON and CSV have their documented
shape; events are the stream's length times the passes; the exact peer's
profile matches a count made here, in Python, from the same file; --help
names every option the parser takes."""
import collections
import csv
import io
import json
import os
import random
import re
import struct
import subprocess
import sys

bench, make_trace, work = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(work, exist_ok=True)
fails = 0
checks = 0


def check(what, ok, detail=""):
    global fails, checks
    checks += 1
    if not ok:
        fails += 1
        print(f"FAIL {what}: {detail}")


def run(*args):
    return subprocess.run([bench, "--quiet", *args], capture_output=True, text=True, timeout=120)


def path(name):
    return os.path.join(work, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


FAST = ["--reps", "3", "--passes", "1"]

# ---- bad input: exit 2, one line naming the file / offset / field ----------
random.seed(7)
keys = [random.choice(range(500)) * 0x9E3779B97F4A7C15 % 2**64 for _ in range(20000)]
keyfile = write("k.u64", b"".join(struct.pack("<Q", k) for k in keys))
write("odd.u64", b"\x01" * 12)
write("odd.pairs", b"\x01" * 24)
write("empty.u64", b"")
write("bad.hwpt", b"HWPT-not-a-trace")
write("bad.txt", b"1\n2\nzz\n")
write("mixed.txt", b"1 2\n3\n")
write("blank.txt", b"# only a comment\n\n")
bad = [
    (["--keys", path("odd.u64")], [path("odd.u64"), "multiple of 8", "offset 8"]),
    (["--pairs", path("odd.pairs")], [path("odd.pairs"), "multiple of 16", "offset 16"]),
    (["--keys", path("empty.u64")], [path("empty.u64"), "empty stream"]),
    (["--text", path("blank.txt")], [path("blank.txt"), "empty stream"]),
    (["--trace", path("bad.hwpt")], [path("bad.hwpt"), "offset"]),
    (["--text", path("bad.txt")], [path("bad.txt") + ":3", '"zz"']),
    (["--text", path("mixed.txt")], [path("mixed.txt") + ":2"]),
    (["--keys", path("missing.u64")], [path("missing.u64"), "No such file"]),
    (["nosuchmodel"], ['"nosuchmodel"', "unknown target"]),
    (["rap", "rap.nosuchfield=1"], ["rap.nosuchfield=1", "no desc field", "eps"]),
    (["rap", "rap.eps=2"], ["rap.eps=2", "eps must be in"]),
    (["rap", "rap.eps=abc"], ["rap.eps=abc", "expected a number"]),
    (["strat", "strat.hash=fast"], ["strat.hash=fast", "paper or cheap"]),
    (["core", "core.bp=perceptron"], ["core.bp=perceptron", "tournament, gshare or gselect"]),
    (["path", "path.mode=zigzag"], ["path.mode=zigzag"]),
    (["path", "hpt.entries=3"], ["hpt", "entries"]),
    (["rap", "strat.rate=10"], ["strat.rate=10", "no strat target"]),
    (["--gen", "zipf:x"], ["--gen", '"x"']),
    (["--gen", "wavy"], ['"wavy"', "unknown generator"]),
    (["--reps", "0"], ["--reps"]),
    (["strat", "--keys", keyfile], ["strat takes pairs"]),
    (["--bogus"], ['"--bogus"']),
]
for args, want in bad:
    r = run(*args, *FAST, "--events", "1000")
    line = r.stderr.strip()
    check(f"{args}: exit 2", r.returncode == 2, (r.returncode, r.stderr[-300:]))
    check(f"{args}: one line", line.count("\n") == 0 and line.startswith("hwprof-bench: "), line)
    for w in want:
        check(f"{args}: names {w}", w in line, line)
    check(f"{args}: nothing on stdout", r.stdout == "", r.stdout[:200])

# ---- JSON on a key file: events, descs, exact against a Python count -------
r = run("--keys", keyfile, "rap", "exact", "spacesaving", "countmin", "rap.eps=0.05", "--json",
        *FAST)
check("json run exits 0", r.returncode == 0, r.stderr[-300:])
d = json.loads(r.stdout) if r.returncode == 0 else {}
res = {x["name"]: x for x in d.get("results", [])}
count = collections.Counter(keys)
check("machine and build recorded", all(d.get("machine", {}).get(k) for k in ("cpu", "cores"))
      and all(k in d.get("build", {}) for k in ("compiler", "flags", "buildtype", "commit")), d.get("build"))
check("input counts", d.get("input", {}).get("keys") == len(keys)
      and d["input"].get("keys_distinct") == len(count), d.get("input"))
check("targets", sorted(res) == ["countmin", "exact", "rap", "spacesaving"], sorted(res))
for name, x in res.items():
    q = x["ns_per_event"]
    check(f"{name}: events = stream x passes", x["events"] == len(keys) * x["passes"] and
          x["passes"] == 1, (x["events"], x["passes"]))
    check(f"{name}: min <= q1 <= median <= q3 <= max",
          q["min"] <= q["q1"] <= q["median"] <= q["q3"] <= q["max"] and q["min"] > 0, q)
    check(f"{name}: iqr = q3 - q1", abs(q["iqr"] - (q["q3"] - q["q1"])) < 1e-3, q)
    check(f"{name}: one time per run", len(q["runs"]) == 3 and
          sorted(q["runs"])[1] == q["median"], q["runs"])
    if name != "exact":
        v = x.get("vs_exact", {})
        check(f"{name}: ratio = median / exact's median",
              abs(v.get("ratio", 0) - q["median"] / res["exact"]["ns_per_event"]["median"]) < 2e-3
              * v.get("ratio", 1), v)
rap = res.get("rap", {})
check("rap: the model counted every event", rap.get("model_events") == len(keys), rap.get("model_events"))
check("rap: the desc it ran, with the field given", rap.get("desc", {}).get("eps") == 0.05
      and "nodes" in rap.get("desc", {}), rap.get("desc"))
ex = res.get("exact", {})
check("exact: distinct keys as Python counts them", ex.get("distinct") == len(count),
      (ex.get("distinct"), len(count)))
check("exact: largest count as Python counts it", ex.get("max_count") == max(count.values()),
      (ex.get("max_count"), max(count.values())))
check("exact: total", ex.get("total") == len(keys), ex.get("total"))

# ---- CSV: one row per target, the same columns --------------------------------
r = run("--keys", keyfile, "rap", "exact", "--csv", *FAST)
rows = list(csv.DictReader(io.StringIO(r.stdout))) if r.returncode == 0 else []
check("csv: a row per target", [x["name"] for x in rows] == ["rap", "exact"], r.stdout[:300])
check("csv: events", all(int(x["events"]) == len(keys) for x in rows), rows)
check("csv: ratio only beside the exact", rows and rows[0]["vs_exact"] != "" and rows[1]["vs_exact"] == "",
      rows)

# ---- pairs as text: strat and the exact pair count ----------------------------
pairs = [(0x400000 + 4 * random.randrange(64), random.randrange(300)) for _ in range(5000)]
tf = write("p.txt", ("# pc value\n" + "\n".join(f"{hex(p)}, {v}" for p, v in pairs) + "\n").encode())
r = run("--text", tf, "strat", "exact", "strat.rate=16", "--json", *FAST)
d = json.loads(r.stdout) if r.returncode == 0 else {"results": []}
res = {x["name"]: x for x in d["results"]}
check("text pairs: strat and exact ran on pairs", sorted(res) == ["exact", "strat"] and
      all(x["stream"] == "pairs" for x in res.values()), r.stderr[-300:])
check("text pairs: strat's desc took the rate", res.get("strat", {}).get("desc", {}).get("rate") == 16,
      res.get("strat", {}).get("desc"))
check("text pairs: distinct pairs as Python counts them",
      res.get("exact", {}).get("distinct") == len(set(pairs)), res.get("exact"))
r = run("--text", tf, "stratified", "exact", "strat.rate=16", *FAST)
check("a header's name for a model: stratified runs strat", r.returncode == 0 and
      re.search(r"^strat\s+pairs", r.stdout, re.M), r.stdout[-300:] + r.stderr[-300:])
check("text pairs: strat counted every pair", res.get("strat", {}).get("model_events") == len(pairs),
      res.get("strat", {}).get("model_events"))

# ---- enum fields by name: the desc a number gives, for every named field ------
trace = path("t.hwpt")
subprocess.run([make_trace, trace, "40000"], check=True)


def desc_of(*sets):
    model = sets[0].split(".")[0]
    stream = ["--trace", trace] if model in ("pm", "core") else ["--events", "2^12"]
    r = run(*stream, *FAST, "--json", model, "noexact", *sets)
    return {x["name"]: x["desc"] for x in json.loads(r.stdout)["results"]} if r.returncode == 0 \
        else r.stderr.strip()


named = {"strat.scheme": ["sampled", "tagged", "assoc"], "strat.sampler": ["periodic", "random", "countdown"],
         "strat.hash": ["paper", "cheap"], "pm.dist": ["uniform", "geometric", "fixed"],
         "pm.unit": ["insn", "slot"], "core.mode": [None, "timing", "caches", "sampled"],
         "core.order": [None, "ooo", "inorder"], "core.bp": [None, "tournament", "gshare", "gselect"]}
for field, names in named.items():
    for value, name in enumerate(names):
        if name is None:
            continue
        # a predictor other than the tournament has no local table
        more = ["core.bp_local=0", "core.bp_local_hist=0"] if field == "core.bp" and value != 1 else []
        by_name, by_number = desc_of(f"{field}={name}", *more), desc_of(f"{field}={value}", *more)
        model, member = field.split(".")
        check(f"{field}={name} runs the desc {field}={value} runs", isinstance(by_name, dict)
              and by_name == by_number and by_name[model][member] == value, (by_name, by_number))

# ---- a trace: decoded before timing, fed to the trace models ------------------
r = run("--trace", trace, "pm", "path", "cp", "rap", "exact", "--json", *FAST)
d = json.loads(r.stdout) if r.returncode == 0 else {"results": [], "input": {}}
res = [(x["name"], x["stream"], x["events"], x.get("model_events")) for x in d["results"]]
check("trace: 40000 records", d["input"].get("trace") == 40000, d["input"])
for name, stream, events, model_events in res:
    if stream == "trace":
        # the path profiler's events are the branches: one in 8 records
        want = 5000 if name == "path" else 40000
        check(f"trace: {name} saw every record", events == 40000 and
              (model_events is None or model_events == want), (name, events, model_events))
check("trace: exact on the trace's PCs and on the keys", sorted((n, s) for n, s, _, _ in res if n == "exact")
      == [("exact", "keys"), ("exact", "trace")], res)

# ---- a generated stream, text output ---------------------------------------------
r = run("--gen", "uniform", "--distinct", "2^10", "--events", "2^14", "rap", "exact", *FAST)
check("text output: header and a row per target", r.returncode == 0 and "machine:" in r.stdout and
      re.search(r"^rap\s+keys\s+16384", r.stdout, re.M) and "desc rap" in r.stdout, r.stdout[:600])
check("generated: distinct keys reported", "(1024 distinct)" in r.stdout, r.stdout[:400])

# ---- the exact peer runs beside any model, unless noexact ----------------------
r = run("--gen", "uniform", "--distinct", "2^10", "--events", "2^14", "rap", *FAST)
check("rap alone: the exact peer runs too", r.returncode == 0 and
      re.search(r"^exact\s+keys\s+16384", r.stdout, re.M) is not None, r.stdout[:600])
r = run("--gen", "uniform", "--distinct", "2^10", "--events", "2^14", "rap", "noexact", *FAST)
check("noexact: no exact peer", r.returncode == 0 and
      re.search(r"^exact\s", r.stdout, re.M) is None and
      re.search(r"^rap\s", r.stdout, re.M) is not None, r.stdout[:600])
r = run("--gen", "uniform", "--distinct", "2^10", "rap", "exact", "noexact", *FAST)
check("exact with noexact refused", r.returncode == 2 and "noexact" in r.stderr, r.stderr)

# ---- --help names every option the parser takes ----------------------------------
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hwprof_bench.c")).read()
opts = set(re.findall(r'!strcmp\(a, "(--[a-z-]+)"\)', src))
h = run("--help")
check("--help exits 0", h.returncode == 0, h.stderr)
check("parser options found", len(opts) >= 15, opts)
for o in sorted(opts):
    check(f"--help lists {o}", re.search(r"(^|\s)" + re.escape(o) + r"\b", h.stdout) is not None, o)
# ... and every name of the path profiler's enum fields, as the header's
# own name tables hold them (a name added there must reach --help).
pp = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                       "hwprof", "pathprof.h")).read()
flat = re.sub(r"\|\s+", "|", h.stdout)
for model, field, names in re.findall(r"hwp__(path|hpt)_(\w+)_names\[\] = \{([^}]*)\}", pp):
    want = f"{model}.{field} " + "|".join(re.findall(r'"(\w+)"', names))
    check(f"--help lists {want}", want in flat, want)
lst = run("--list")
for name in ("rap", "strat", "pm", "path", "cp", "core", "exact", "spacesaving", "countmin"):
    check(f"--list names {name}", re.search(r"^" + name + r"\s", lst.stdout, re.M) is not None, lst.stdout[:200])

print(f"{checks} checks, {fails} failed")
sys.exit(1 if fails else 0)
