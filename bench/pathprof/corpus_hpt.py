#!/usr/bin/env python3
"""The Hot Path Table's overlap on the real-program corpus, LFU against
aging (LFUDA) and decay (Misra-Gries per set), beside a perfect table
of as many entries.

  bench/pathprof/corpus_hpt.py BUILD_DIR [NAME ...]

For each corpus member (bench/corpus/corpus.py's programs and inputs;
default: all found) the Valgrind tool records the run's trace once
(--models=none --record), then BUILD_DIR/bench/pathprof/hpt_sim replays
the trace's path stream through 512 x W tables (hpt_sim's `age` mode,
which also checks the library's table holds the simulator's entries).
Prints one Markdown row per program: distinct paths, LFU, aging and
decay at 4, 8 and 16 ways, and the perfect 512-entry table (the exact top 512
paths' share of the flow: no table of 512 entries can do better). These are
the paper's *complete* overlap (Vaswani et al. sec. 8.1: the table enabled
for the whole run). A second table gives its *dynamic* overlap (the table
emptied at each window of W instructions and scored against that window's
exact profile, the mean over whole windows) at 512 x 4 for W = 100M (the
paper's), 10M and 1M, with each window's perfect table.
Traces stay in BUILD_DIR/corpus/*.trace. Not run in CI (minutes per
program under Valgrind).
"""
import os
import random
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(root, "bench", "corpus"))
import corpus  # noqa: E402  the members, their inputs and the guest environment

WAYS = (4, 8, 16)
WINDOWS = (100000000, 10000000, 1000000)


def cc1plus_input(w):
    """A small C++ file for cc1plus (25 nested templates, no headers): the
    corpus's own input (60 templates over <vector> and <map>) makes a
    trace beyond 10 GB under the Valgrind tool; this one about 3 GB."""
    r = random.Random(5)
    lines = ["template <class T> T f0(T x) { return x; }"]
    for i in range(1, 25):
        lines.append(f"template <class T> T f{i}(T x) {{ T s = 0; for (int k = 0; k < "
                     f"{r.randint(2, 9)}; k++) s += f{i - 1}(x + k) * {r.randint(1, 9)}; "
                     "return s > 100 ? s / 3 : s; }")
    lines.append("int main() { return (int)f24<int>(3) + (int)f24<long>(2) + "
                 "(int)f24<double>(1.5); }")
    with open(os.path.join(w, "small.cpp"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return ["-quiet", "-imultiarch", "x86_64-linux-gnu", "-O1", "small.cpp", "-o", "/dev/null"]


def record(build, w, name, prog, args):
    trace = f"{w}/{name}.trace"
    if os.path.exists(trace):
        return trace
    libdir = os.path.join(build, "examples", "valgrind", "lib")
    env = corpus.guest_env(VALGRIND_LIB=libdir)
    r = subprocess.run(["valgrind", "-q", "--tool=hwprof", "--models=none",
                        f"--record={trace}.part", "--report=/dev/null", prog] + args,
                       env=env, cwd=w, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: exit {r.returncode}: {r.stderr.decode()[-300:]}")
    os.rename(f"{trace}.part", trace)
    return trace


def simulate(build, trace):
    out = subprocess.run([os.path.join(build, "bench", "pathprof", "hpt_sim"), trace, "age"],
                         check=True, capture_output=True, text=True).stdout
    m = re.search(r"distinct paths (\d+); perfect 512-entry table ([\d.]+)", out)
    row = {"distinct": int(m.group(1)), "perfect": float(m.group(2))}
    for ways in WAYS:
        m = re.search(rf"512x{ways}\s+LFUDA\s+([\d.]+)\s+LFU\s+([\d.]+)\s+hwp_hpt aging\s+"
                      rf"([\d.]+)\s+hwp_hpt decay\s+([\d.]+)(.*)", out)
        if not m or m.group(5).strip():
            raise RuntimeError(f"{trace}: the library's aging or decay table differs from the "
                               "simulator's")
        row[ways] = (float(m.group(2)), float(m.group(3)), float(m.group(4)))
    for win in WINDOWS:
        m = re.search(rf"dynamic 512x4 window {win}: windows (\d+)\s+LFU\s+([\d.]+)\s+aging\s+"
                      rf"([\d.]+)\s+decay\s+([\d.]+)\s+perfect\s+([\d.]+)", out)
        row[win] = (int(m.group(1)),) + tuple(float(m.group(i)) for i in range(2, 6)) if m else None
    return row


def main():
    a = sys.argv[1:]
    if not a or a[0].startswith("-"):
        sys.exit(__doc__)
    build = os.path.abspath(a[0])
    w = os.path.join(build, "corpus")
    corpus.make_inputs(w)
    mem = corpus.members(w)
    names = a[1:] or list(mem)
    cols = " | ".join(f"LFU 512x{k} | aging 512x{k} | decay 512x{k}" for k in WAYS)
    print(f"| program | distinct paths | {cols} | perfect 512 |")
    print("| --- " * (3 + 3 * len(WAYS)) + "|")
    rows = {}
    for name in names:
        prog, args, _ = mem[name]
        if name == "cc1plus":
            args = cc1plus_input(w)
        if not os.access(prog, os.X_OK):
            print(f"| {name} | missing ({prog}) |")
            continue
        row = rows[name] = simulate(build, record(build, w, name, prog, args))
        cells = " | ".join(f"{row[k][0]:.2f} | {row[k][1]:.2f} | {row[k][2]:.2f}" for k in WAYS)
        print(f"| {name} | {row['distinct']} | {cells} | {row['perfect']:.2f} |", flush=True)
    print()
    print("Dynamic overlap at 512 x 4 (windows; LFU / aging / decay / perfect 512):")
    print()
    print("| program | " + " | ".join(f"{w // 1000000}M windows | LFU | aging | decay | perfect"
                                      for w in WINDOWS) + " |")
    print("| --- " * (1 + 5 * len(WINDOWS)) + "|")
    for name, row in rows.items():
        cells = " | ".join("0 | - | - | - | -" if row[w] is None else
                           f"{row[w][0]} | {row[w][1]:.2f} | {row[w][2]:.2f} | {row[w][3]:.2f} | "
                           f"{row[w][4]:.2f}" for w in WINDOWS)
        print(f"| {name} | {cells} |")


if __name__ == "__main__":
    main()
