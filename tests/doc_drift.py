#!/usr/bin/env python3
"""tests/doc_drift.py BUILD_DIR DOC.md... [other args, ignored]: the deterministic
figures the docs quote still hold.

A table of callgrind instructions per event opts in with a comment right
above it:

    <!-- drift: NAME NAME ... -->

one benchmark name per row of the table, in order ("-" for a row that is
not measured by the command). The command is the last line before the
comment that runs bench/callgrind.sh (with `build/` standing for
BUILD_DIR); the test runs it once, and each row's last number must be
within 1% of what callgrind measures for its name. Exit 1 with one line
per drifted or missing figure (77, skipped, without valgrind). Arguments
that are not .md files (meson test --benchmark's --test-args) are
ignored. Registered as a benchmark: it takes a minute or two."""
import os
import re
import shlex
import subprocess
import sys

TOLERANCE = 0.01
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1])
docs = [a for a in sys.argv[2:] if a.endswith(".md")]
if not any(os.access(os.path.join(d, "valgrind"), os.X_OK)
           for d in os.environ.get("PATH", "").split(os.pathsep)):
    print("valgrind not found: skipped")
    sys.exit(77)
fails = checks = 0


def report(ok, what):
    global fails, checks
    checks += 1
    if not ok:
        fails += 1
        print("DRIFT " + what)


def measure(cmd):
    """name -> instructions/event from one bench/callgrind.sh run."""
    words = shlex.split(cmd)
    words = [re.sub(r"^build/", build + "/", w) for w in words]
    i = next(k for k, w in enumerate(words) if w.endswith("bench/callgrind.sh"))
    words = ["bash", os.path.join(root, "bench/callgrind.sh")] + words[i + 1:]
    out = subprocess.run(words, capture_output=True, text=True, cwd=root, timeout=1800)
    got = {}
    for line in out.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) == 4:
            try:
                got[f[0]] = float(f[3])
            except ValueError:
                pass
    if out.returncode != 0 or not got:
        print(f"DRIFT {cmd}: the command failed: {out.stderr.strip()[-300:]}")
    return got


for doc in docs:
    lines = open(doc).read().splitlines()
    cmd = None
    for n, line in enumerate(lines):
        if "bench/callgrind.sh" in line and not line.lstrip().startswith("<!--"):
            cmd = line.strip().strip("`")
            cmd = cmd[cmd.index("bash") if "bash" in cmd else 0:]
        m = re.match(r"\s*<!-- drift: (.*) -->\s*$", line)
        if not m:
            continue
        names = m.group(1).split()
        where = f"{os.path.basename(doc)}:{n + 1}"
        if not cmd:
            report(False, f"{where}: no bench/callgrind.sh command above the table")
            continue
        rows = []
        for row in lines[n + 1:]:
            if not row.startswith("|"):
                if rows:
                    break
                continue
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if set("".join(cells)) <= set("-: "):
                continue  # the separator row
            rows.append(cells)
        rows = rows[1:]  # the header
        report(len(rows) == len(names), f"{where}: {len(names)} names for {len(rows)} rows")
        got = measure(cmd)
        for name, cells in zip(names, rows):
            if name == "-":
                continue
            nums = re.findall(r"[0-9]+(?:\.[0-9]+)?", cells[-1].replace(",", ""))
            if not nums:
                report(False, f"{where}: {name}: no number in \"{cells[-1]}\"")
                continue
            quoted = float(nums[-1])
            if name not in got:
                report(False, f"{where}: {name}: not measured by `{cmd}`")
                continue
            drift = abs(got[name] - quoted) / max(quoted, 1e-9)
            report(drift <= TOLERANCE, f"{where}: {name}: the doc says {quoted}, `{cmd}` "
                   f"measures {got[name]:.2f} ({100 * drift:+.1f}%)")
print(f"{checks} figures checked, {fails} drifted")
sys.exit(1 if fails or not checks else 0)
