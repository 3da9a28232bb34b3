#!/usr/bin/env python3
"""tests/doc_drift.py BUILD_DIR DOC.md... [-j N] [other args, ignored]: the
deterministic figures the docs quote still hold.

A figure opts in with a comment, in one of two forms:

  - above a table, on a line of its own:

        <!-- drift: [column=N] [command=TEXT] NAME NAME ... -->

    one benchmark name per row of the table, in order ("-" for a row
    that is not measured). Each row's figure is the last number of its
    N-th cell (counted from 1; the last cell by default).

  - right after a number in the text: `8.00<!-- drift: NAME -->`.

The command is the last one above the comment that runs
bench/callgrind.sh, in a `code span` (which may wrap) or a code block,
with `build/` standing for BUILD_DIR (with command=TEXT: the last such
command containing TEXT). A FILTER argument spelled NAME stands for each
row's name. Each figure must be within 1% of what callgrind measures for
its name.

Each command runs once, as one callgrind.sh run over the names quoted
with it (FILTER =NAME,NAME...), however many figures quote them; N runs
go at a time (-j, 2 by default): callgrind counts instructions, so runs
side by side measure the same counts as runs alone. A command whose input file
under BUILD_DIR does not exist (a recorded trace) is skipped with a line
saying so. Exit 1 with one line per drifted or missing figure (77,
skipped, without valgrind). Arguments that are not .md files or -j N
(meson test --benchmark's --test-args) are ignored. Registered as a
benchmark."""
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys

TOLERANCE = 0.01
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = os.path.abspath(sys.argv[1])
args = sys.argv[2:]
docs = [a for a in args if a.endswith(".md")]
jobs = int(args[args.index("-j") + 1]) if "-j" in args[:-1] else 2
if not any(os.access(os.path.join(d, "valgrind"), os.X_OK)
           for d in os.environ.get("PATH", "").split(os.pathsep)):
    print("valgrind not found: skipped")
    sys.exit(77)
fails = checks = 0
skipped = set()
MARKER = re.compile(r"<!-- drift: (.*?) -->")
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"


def report(ok, what):
    global fails, checks
    checks += 1
    if not ok:
        fails += 1
        print("DRIFT " + what)


def commands(text):
    """(offset, command) of every bench/callgrind.sh command in text (lines
    of fenced or indented code blocks, and code spans elsewhere, which may
    wrap but not across a blank line), and the text with its code blocks
    blanked."""
    found = []
    prose = []  # text with the code blocks blanked, offsets kept
    fenced = False
    at = 0
    for line in text.split("\n"):
        block = line.lstrip().startswith("```")
        if block:
            fenced = not fenced
        elif fenced or line.startswith("    "):
            block = True
            if "bench/callgrind.sh" in line:
                found.append((at, line.strip()))
        prose.append(" " * len(line) if block else line)
        at += len(line) + 1
    prose = "\n".join(prose)
    for m in re.finditer(r"`([^`\n]+(?:\n[^`\n]+)*)`", prose):
        if "bench/callgrind.sh" in m.group(1):
            found.append((m.start(), " ".join(m.group(1).split())))
    return sorted(found), prose


def parse(cmd):
    """(binary, iters, filter, binary args) of a callgrind.sh command."""
    words = shlex.split(cmd)
    i = next(k for k, w in enumerate(words) if w.endswith("bench/callgrind.sh"))
    words = [re.sub(r"^build/", build + "/", w) for w in words[i + 1:]]
    extra = words[words.index("--") + 1:] if "--" in words else []
    pos = words[:words.index("--")] if "--" in words else words
    return (pos[0], pos[1] if len(pos) > 1 else "200000", pos[2] if len(pos) > 2 else "",
            tuple(extra))


def measure(key, names):
    """name -> instructions per event from one callgrind.sh run over names,
    or a string: why the run failed."""
    binary, iters, extra = key
    out = subprocess.run(["bash", os.path.join(root, "bench/callgrind.sh"), binary, iters,
                          "=" + ",".join(sorted(names)), "--"] + list(extra),
                         capture_output=True, text=True, cwd=root, timeout=1800)
    if out.returncode != 0:
        return f"the command failed: {out.stderr.strip()[-300:]}"
    got = {}
    for line in out.stdout.splitlines()[1:]:
        f = line.split()
        got[" ".join(f[:-3])] = float(f[-1])
    return got


# The figures: (where, command, name, quoted value).
figures = []
for doc in docs:
    text = open(doc).read()
    cmds, prose = commands(text)
    for m in MARKER.finditer(prose):  # not the examples in code blocks
        where = f"{os.path.basename(doc)}:{text.count(chr(10), 0, m.start()) + 1}"
        words = m.group(1).split()
        opts = dict(w.split("=", 1) for w in words if re.match(r"(column|command)=", w))
        names = [w for w in words if not re.match(r"(column|command)=", w)]
        above = [c for at, c in cmds if at < m.start() and opts.get("command", "") in c]
        if not above:
            report(False, f"{where}: no bench/callgrind.sh command above the figure")
            continue
        cmd = above[-1]
        line_start = text.rfind("\n", 0, m.start()) + 1
        if text[line_start:m.start()].strip():  # inline: the number before it
            num = re.search(NUMBER + r"$", text[line_start:m.start()])
            if num and len(names) == 1:
                figures.append((where, cmd, names[0], num.group(0)))
            else:
                report(False, f"{where}: an inline marker names one figure right after a number")
            continue
        rows = []
        for row in text[m.end():].split("\n")[1:]:
            if not row.startswith("|"):
                if rows:
                    break
                continue
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if set("".join(cells)) <= set("-: "):
                continue  # the separator row
            rows.append(cells)
        rows = rows[1:]  # the header
        if len(rows) != len(names):
            report(False, f"{where}: {len(names)} names for {len(rows)} rows")
        col = int(opts.get("column", 0)) - 1
        for name, cells in zip(names, rows):
            if name == "-":
                continue
            cell = cells[col] if -1 <= col < len(cells) else ""
            nums = re.findall(NUMBER, cell)
            if not nums:
                report(False, f"{where}: {name}: no number in \"{cell}\"")
                continue
            figures.append((where, cmd, name, nums[-1]))

# One callgrind.sh run per (binary, iters, args) for all the names quoted
# with it, jobs at a time.
wanted = {}
for where, cmd, name, quoted in figures:
    binary, iters, filt, extra = parse(cmd)
    missing = [w for w in extra if w.startswith(build + "/") and not os.path.exists(w)]
    if missing:
        skipped.add(f"SKIP `{cmd}`: {missing[0]} does not exist")
        continue
    if filt not in ("NAME", "") and filt not in name:
        report(False, f"{where}: {name}: not measured by `{cmd}` (filter {filt})")
        continue
    wanted.setdefault((binary, iters, extra), []).append((where, cmd, name, quoted))
with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
    runs = {k: pool.submit(measure, k, {f[2] for f in figs}) for k, figs in wanted.items()}
    got = {k: r.result() for k, r in runs.items()}
for key, figs in wanted.items():
    for where, cmd, name, quoted in figs:
        if isinstance(got[key], str) or name not in got[key]:
            why = got[key] if isinstance(got[key], str) else "no such benchmark"
            report(False, f"{where}: {name}: not measured by `{cmd}`: {why}")
            continue
        q = float(quoted.replace(",", ""))
        drift = abs(got[key][name] - q) / max(q, 1e-9)
        report(drift <= TOLERANCE, f"{where}: {name}: the doc says {quoted}, `{cmd}` "
               f"measures {got[key][name]:.2f} ({100 * drift:+.1f}%)")
for s in sorted(skipped):
    print(s)
print(f"{checks} figures checked, {fails} drifted, {len(wanted)} callgrind runs"
      + (f", {len(skipped)} commands skipped" if skipped else ""))
sys.exit(1 if fails or not checks else 0)
