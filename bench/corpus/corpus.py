#!/usr/bin/env python3
"""The real-program corpus: every model's accuracy on real programs under
the QEMU plugin and the Valgrind tool, one table per model.

  bench/corpus/corpus.py BUILD_DIR [--host qemu|valgrind|both] [--install]
                         [--list] [--commands] [NAME ...]

NAMEs pick a subset of the corpus (default: every member found). Inputs
are generated in BUILD_DIR/corpus with fixed seeds, so two runs see the
same bytes. Each program runs once per host with every model, the exact
profile and the accuracy thresholds' sizes (models=all exact=on rap_kb=8
rap_eps=0.1 hpt=512x4); the report's JSON gives each model's paper metric
against the exact profile, the baseline where the model has one (the
co-processor's buffered sampler: mean +- sd over 4 seeds, at the nearest
of the hosts' periods, with its overhead ratio) and the model's modelled
overhead (cycles charged, as % of instructions). --install runs apt-get
for missing members (gawk, pigz, luajit, g++, nodejs); otherwise a missing member
is listed as missing and skipped. Not part of CI: the whole corpus takes
about 20 minutes on 2 cores (python3, sqlite3 and cc1plus dominate).
--commands runs nothing: it writes the inputs and prints, one line per
member found, its name, its working directory, its environment and its
command line (tab-separated, the last three shell-quoted), so other
benchmarks (bench/qemu/api.sh) run the same programs on the same inputs.
"""
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "examples", "common"))
sys.path.insert(0, os.path.join(root, "examples", "valgrind", "tests"))
from hwx_thresholds import guest_env  # noqa: E402  the hosts' fixed environment
from vg_fixture import text_input  # noqa: E402  the hosts' word salad

MODEL_OPTS = ["models=all", "exact=on", "rap_kb=8", "rap_eps=0.1", "hpt=512x4"]
PY = "/usr/bin/python3.11"


def mixed_input(path, size, seed=7):
    """Compressible text, a little random binary, and repeated records:
    what a compressor meets in a mixed file."""
    r = random.Random(seed)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz")
                     for _ in range(r.randint(2, 9))) for _ in range(800)]
    out = bytearray()
    while len(out) < size:
        k = r.random()
        if k < 0.6:
            out += (" ".join(r.choice(words) for _ in range(12)) + "\n").encode()
        elif k < 0.8:
            out += bytes(r.getrandbits(8) for _ in range(64))
        else:
            out += f"{r.randint(0, 99999):08d},{r.choice(words)},{r.random():.6f}\n".encode()
    with open(path, "wb") as f:
        f.write(bytes(out[:size]))


PY_WORK = """
import collections
words = open(__import__("sys").argv[1]).read().split()
c = collections.Counter(words)
acc = 0
for i in range(20000):
    acc = (acc * 31 + len(words[i % len(words)])) % 1000003
print(len(c), c.most_common(1)[0][1], acc)
"""

SQL_WORK = """
import sqlite3
db = sqlite3.connect(":memory:")
db.execute("create table a (id integer primary key, k integer, s text)")
db.execute("create table b (id integer primary key, k integer, v real)")
for i in range(3000):
    db.execute("insert into a (k, s) values (?, ?)", (i % 97, "s%d" % (i * 7 % 1000)))
    db.execute("insert into b (k, v) values (?, ?)", (i % 89, i * 0.5))
db.commit()
n = 0
for k in range(0, 89, 11):
    n += db.execute("select count(*) from a join b on a.k = b.k where a.k = ?", (k,)).fetchone()[0]
print(n)
"""

BASH_WORK = """
s=""; n=0
for ((i = 0; i < 3000; i++)); do
  n=$(( (n * 31 + i) % 100003 ))
  s="${s:0:40}$((i % 10))"
  case $s in *99*) n=$((n + 1));; esac
done
echo "$n ${#s}"
"""

# The first loop's trace loads only table slots whose sums change, so
# alone it gives a value profile nothing invariant to find: section 5.3.1
# then selects one start-up load of ~1000 executions (3-5 samples at
# 1/256). The second phase is what a JIT's value profile is for: objects
# reached through string keys and a metatable, whose field and method
# loads are invariant in the hot trace.
LUA_WORK = """
local t = {}
for i = 1, 200000 do t[i % 1000 + 1] = (t[i % 1000 + 1] or 0) + i % 7 end
local s = 0
for i = 1, #t do s = s + t[i] end
local Acc = {}
Acc.__index = Acc
function Acc.new(name) return setmetatable({name = name, n = 0, sum = 0}, Acc) end
function Acc:add(v) self.n = self.n + 1; self.sum = self.sum + v end
local names = {"alpha", "beta", "gamma", "delta", "epsilon"}
local accs = {}
for _, n in ipairs(names) do accs[n] = Acc.new(n) end
local words = {}
for i = 1, 4000 do words[i] = names[(i * 7919) % 5 + 1] end
for r = 1, 100 do
  for i = 1, #words do accs[words[i]]:add(i % 13) end
end
for _, n in ipairs(names) do s = s + accs[n].sum end
print(s)
"""

JS_WORK = """
// Code a JIT writes, rewrites and drops: functions generated at run time
// (compiled, then garbage), a call site that deoptimises when its argument
// changes type, and object and string work between them.
function gen(i) {
  return new Function('a', 'b',
    'let s = 0; for (let k = 0; k < a; k++) s = (s + k * ' + i + ' + b) % 1000003; return s;');
}
function add(x, y) { return x + y; }
let t = 0;
for (let r = 0; r < 30; r++) {
  const f = gen(r % 13 + 1);
  for (let j = 0; j < 40; j++) t = (t + f(2000, j)) % 1000003;
  const o = {};
  for (let j = 0; j < 3000; j++) {
    const k = 'k' + ((j * 7919 + r) % 997);
    o[k] = (o[k] || 0) + j;
  }
  t = (t + Object.keys(o).length) % 1000003;
  // numbers for 20 rounds, then strings: add() is deoptimised and recompiled
  for (let j = 0; j < 2000; j++) t = (t + (r < 20 ? add(j, r) : add('' + j, r).length)) % 1000003;
}
console.log(t);
"""


def cpp_input(path, seed=5):
    r = random.Random(seed)
    lines = ["#include <vector>", "#include <map>", "template <class T> T f0(T x) { return x; }"]
    for i in range(1, 60):
        lines.append(f"template <class T> T f{i}(T x) {{ std::vector<T> v(x, T({r.randint(1, 9)})); "
                     f"std::map<int, T> m; m[{i}] = f{i - 1}(x); return v.size() + m[{i}]; }}")
    lines.append("int main() { return f59<int>(3) + (int)f59<long>(2); }")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def cc1plus():
    for d in sorted(os.listdir("/usr/lib/gcc/x86_64-linux-gnu"), reverse=True) \
            if os.path.isdir("/usr/lib/gcc/x86_64-linux-gnu") else []:
        p = os.path.join("/usr/lib/gcc/x86_64-linux-gnu", d, "cc1plus")
        if os.access(p, os.X_OK):
            return p
    return None


def members(w):
    """name -> (binary, argv after it, apt package)"""
    return {
        "python3": (PY, ["-S", f"{w}/work.py", f"{w}/text.txt"], "python3.11"),
        "gzip": ("/usr/bin/gzip", ["-9", "-c", f"{w}/mixed.bin"], "gzip"),
        "bzip2": ("/usr/bin/bzip2", ["-9", "-c", f"{w}/mixed.bin"], "bzip2"),
        "gawk": ("/usr/bin/gawk", ["{for (i = 1; i <= NF; i++) c[$i]++} "
                                   "END {for (w in c) n++; print n}", f"{w}/text.txt"], "gawk"),
        "bash": ("/usr/bin/bash", [f"{w}/loop.sh"], "bash"),
        "sqlite3": (PY, ["-S", f"{w}/sql.py"], "python3.11"),
        "cc1plus": (cc1plus() or "/usr/lib/gcc/cc1plus",
                    # run without the driver, cc1plus needs the multiarch
                    # include directory the driver would pass (bits/c++config.h)
                    ["-quiet", "-imultiarch", "x86_64-linux-gnu", "-O1", f"{w}/gen.cpp",
                     "-o", "/dev/null"], "g++"),
        "pigz": ("/usr/bin/pigz", ["-p", "2", "-9", "-c", f"{w}/mixed.bin"], "pigz"),
        "luajit": ("/usr/bin/luajit", [f"{w}/loop.lua"], "luajit"),
        # V8 on one thread with a fixed seed: its JIT compiles on the main
        # thread, so the stream (and the code's addresses) repeat run to run
        "node": ("/usr/bin/node", ["--single-threaded", "--random-seed=1", f"{w}/loop.js"],
                 "nodejs"),
    }


def make_inputs(w):
    os.makedirs(w, exist_ok=True)
    mixed_input(f"{w}/mixed.bin", 262144)
    text_input(f"{w}/text.txt", 200000)
    for name, body in (("work.py", PY_WORK), ("sql.py", SQL_WORK), ("loop.sh", BASH_WORK),
                       ("loop.lua", LUA_WORK), ("loop.js", JS_WORK)):
        with open(f"{w}/{name}", "w") as f:
            f.write(body.lstrip())
    cpp_input(f"{w}/gen.cpp")


def run_group(cmd, timeout=1800, **kw):
    """subprocess.run in a process group of its own: on a timeout the
    whole group is killed (the fixture's valgrind and its children too,
    not only the fixture), then TimeoutExpired is raised as before."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, start_new_session=True, **kw)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise
    return subprocess.CompletedProcess(cmd, p.returncode, None, err)


def run_qemu(build, w, name, prog, args):
    plugin = os.path.join(build, "examples", "qemu", "libhwprof-tcg.so")
    js = f"{w}/{name}-qemu.json"
    opts = ",".join(MODEL_OPTS + [f"report={w}/{name}-qemu.txt", f"json={js}"])
    r = run_group([os.environ.get("QEMU", "qemu-x86_64"), "-plugin", f"{plugin},{opts}",
                   prog] + args, env=guest_env(), cwd=w)
    if r.returncode != 0:
        raise RuntimeError(f"exit {r.returncode}: {r.stderr.decode()[-300:]}")
    return json.load(open(js))


def run_valgrind(build, w, name, prog, args):
    js = f"{w}/{name}-vg.json"
    fixture = os.path.join(root, "examples", "valgrind", "tests", "vg_fixture.py")
    libdir = os.path.join(build, "examples", "valgrind", "lib")
    r = run_group([sys.executable, fixture, "run", shutil.which("valgrind") or "valgrind",
                   libdir, w] + ["--" + o for o in MODEL_OPTS] +
                  [f"--report={w}/{name}-vg.txt", f"--json={js}", "--", prog] + args)
    if r.returncode != 0:
        raise RuntimeError(f"exit {r.returncode}: {r.stderr.decode()[-300:]}")
    return json.load(open(js))["session"]


# (title, overhead key, [(column, accuracy key, digits)], baseline columns)
TABLES = [
    ("ProfileMe (Dean et al.): fraction of PCs inside the 1 +- 1/sqrt(k) envelope",
     "profileme", [("envelope", "pm_envelope_frac", 3)]),
    ("Stratified sampling (Sastry et al.): weighted invariance error %",
     "stratified", [("error %", "strat_inv_err_pct", 2)]),
    ("RAP (Mysore et al.): average hot-range error %", "rap", [("error %", "rap_hot_err_pct", 2)]),
    ("Path profiler (Vaswani et al.): HPT overlap % / a perfect table's %",
     "pathprof", [("overlap %", "hpt_overlap_pct", 1), ("perfect %", "hpt_ideal_pct", 1)]),
    ("Co-processor (Zilles & Sohi): weighted RMS invariance error; baseline: buffered "
     "sampler, mean +- sd over 4 seeds, and its overhead / the co-processor's",
     "coproc", [("error", "coproc_inv_err", 3), ("baseline", "coproc_simple_err", 3),
                ("sd", "coproc_simple_sd", 3), ("ovh ratio", "coproc_simple_overhead_ratio", 2)]),
]


def fmt(v, d):
    return "-" if v is None else f"{v:.{d}f}"


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a.pop(0))
    host, install, commands, names = "both", False, False, []
    while a:
        x = a.pop(0)
        if x == "--host":
            host = a.pop(0)
        elif x == "--install":
            install = True
        elif x == "--list":
            print(" ".join(members("W")))
            return
        elif x == "--commands":
            commands = True
        else:
            names.append(x)
    w = os.path.join(build, "corpus")
    m = members(w)
    for n in names:
        if n not in m:
            sys.exit(f"corpus: unknown member {n} (members: {' '.join(m)})")
    names = names or list(m)
    missing = [n for n in names if not os.access(m[n][0], os.X_OK)]
    if missing and install:
        subprocess.run(["apt-get", "install", "-y"] + sorted({m[n][2] for n in missing}))
        missing = [n for n in names if not os.access(m[n][0], os.X_OK)]
    make_inputs(w)
    if commands:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in guest_env().items())
        for n in names:
            if n in missing:
                print(f"corpus: {n} is not installed, skipped", file=sys.stderr)
            else:
                print(f"{n}\t{shlex.quote(w)}\t{env}\t{shlex.join([m[n][0]] + m[n][1])}")
        return
    hosts = ["qemu", "valgrind"] if host == "both" else [host]
    rows = []
    for n in names:
        if n in missing:
            continue
        prog, args, _ = m[n]
        for h in hosts:
            t = time.time()
            try:
                rep = (run_qemu if h == "qemu" else run_valgrind)(build, w, n, prog, args)
            except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
                print(f"{n} under {h}: failed: {e}", file=sys.stderr)
                continue
            print(f"{n} under {h}: {rep['instructions']} instructions, "
                  f"{time.time() - t:.0f} s", file=sys.stderr)
            rows.append((n, h, rep))
    for title, key, cols in TABLES:
        print(f"\n{title}\n")
        print("| program | host | " + " | ".join(c[0] for c in cols) +
              " | overhead cycles | % of instructions |")
        print("| --- | --- |" + " ---: |" * (len(cols) + 2))
        for n, h, rep in rows:
            acc = rep.get("accuracy", {})
            cyc = rep.get("overhead", {}).get("models", {}).get(key)
            pct = 100.0 * cyc / rep["instructions"] if cyc is not None and rep["instructions"] else None
            vals = [fmt(acc.get(k, {}).get("value"), d) for _, k, d in cols]
            print(f"| {n} | {h} | " + " | ".join(vals) + f" | {cyc if cyc is not None else '-'} | "
                  f"{fmt(pct, 3)} |")
    if missing:
        print(f"\nmissing (not installed; --install fetches them): {' '.join(missing)}")


if __name__ == "__main__":
    main()
