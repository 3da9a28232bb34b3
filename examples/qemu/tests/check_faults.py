#!/usr/bin/env python3
"""Bad input and exit paths of the QEMU plugin, each checked against what
the run must show (not against the plugin's own output):
  - guest_exit in mode "exit" (8 threads and main each call exit(), several
    inside exit() at once): 10 runs, each must leave exactly one complete
    text report and a JSON file that parses, with the same instruction
    count in both, no more than the same guest run to the end by joining
    (a session merged twice would count more);
  - an option valid alone but impossible for its model (coproc_slots=3), a
    report= in a missing directory, a json= in an unwritable place: refused
    before the guest runs (it prints "guest ran" first), non-zero exit;
  - report=/dev/full: non-zero exit;
  - strat=on with a wrong guest_base (API 1, which reads values from guest
    memory): no crash, the unreadable values counted;
  - a guest killed by a signal (guest_exit's segv, abort, kill9 modes, and
    "wait" sent SIGTERM from outside): the run ends by that signal and
    leaves a complete text report and JSON (same instruction count, at
    least the instructions of the loop it ran) where the plugin can see the
    exit: SIGKILL sent by the guest to itself on every API, the rest only
    where QEMU runs the exit callback on a fatal signal (QEMU >= 9, the API 4
    plugin); elsewhere no report and no half-written file.
usage: check_faults.py QEMU PLUGIN GUEST WORKDIR"""
import json
import os
import re
import subprocess
import sys

import hwtrace

qemu, plugin, guest, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
hwtrace.print_qemu(qemu, plugin)
fails = 0


def check(name, ok, detail=""):
    global fails
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")


def run(opts, mode="join", iters="20000"):
    arg = plugin + ("," + opts if opts else "")
    return subprocess.run([qemu, "-plugin", arg, guest, mode, iters],
                          capture_output=True, text=True, timeout=300)


def insns(text):
    m = re.findall(r"^instructions\s+(\d+)", text, re.M)
    return [int(x) for x in m]


rep, js = os.path.join(work, "exit.txt"), os.path.join(work, "exit.json")
r = run(f"models=all,report={rep},json={js}", "join", "100000")
joined = insns(open(rep).read())[0] if r.returncode == 0 else 0
check("join run", r.returncode == 0 and joined > 0, f"rc {r.returncode}, {joined} instructions")
bad = []
for i in range(10):
    for f in (rep, js):
        if os.path.exists(f):
            os.unlink(f)
    r = run(f"models=all,report={rep},json={js}", "exit", "100000")
    text = open(rep).read() if os.path.exists(rep) else ""
    counts = insns(text)
    try:
        jn = json.load(open(js))["instructions"]
    except (OSError, ValueError, KeyError) as e:
        jn = f"bad JSON ({e.__class__.__name__})"
    if r.returncode != 0 or len(counts) != 1 or counts[0] != jn or not 0 < counts[0] <= joined:
        bad.append(f"run {i}: rc {r.returncode}, text counts {counts}, json {jn}")
check("exit() from 9 threads: one complete report per run, 10 runs", not bad, "; ".join(bad))

for opts, what in [("coproc_slots=3", "impossible coproc_slots"),
                   (f"report={work}/missing/dir/r.txt", "report in a missing directory"),
                   ("json=/proc/hwprof.json", "json where no file can be made")]:
    r = run("models=all," + opts)
    check(f"{what} refused before the guest", r.returncode != 0 and "guest ran" not in r.stdout
          and "hwprof:" in r.stderr, f"rc {r.returncode}, {r.stderr.strip().splitlines()[:1]}")

r = run("models=all,report=/dev/full")
check("report=/dev/full fails", r.returncode != 0 and "/dev/full" in r.stderr,
      f"rc {r.returncode}, {r.stderr.strip().splitlines()[-1:]}")

r = run(f"strat=on,guest_base=0x7fff00000000,report={rep}", "join", "1000")
text = open(rep).read() if os.path.exists(rep) else ""
api1 = "plugin API 1" in text
check("wrong guest_base: no crash", r.returncode == 0, f"rc {r.returncode} {r.stderr[-200:]}")
if api1:
    check("wrong guest_base: unreadable values counted", "not readable" in text)

# A guest killed by a signal. Each loop iteration costs at least 3
# instructions, so a complete report counts at least 3 * iterations.
iters = 100000
for mode, sig in [("segv", 11), ("abort", 6), ("kill9", 9), ("wait", 15)]:
    for f in os.listdir(work):
        if f.startswith("sig."):
            os.unlink(os.path.join(work, f))
    rep, js = os.path.join(work, "sig.txt"), os.path.join(work, "sig.json")
    arg = f"{plugin},models=all,report={rep},json={js}"
    p = subprocess.Popen([qemu, "-plugin", arg, guest, mode, str(iters)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if mode == "wait":
        for line in p.stdout:
            if "guest waits" in line:
                p.send_signal(15)
                break
    p.communicate(timeout=120)
    text = open(rep).read() if os.path.exists(rep) else ""
    counts = insns(text)
    try:
        jn = json.load(open(js))["instructions"]
    except (OSError, ValueError, KeyError):
        jn = None
    expect = sig == 9 or "-v4" in os.path.basename(plugin)
    left = sorted(f for f in os.listdir(work) if f.startswith("sig."))
    what = (f"rc {p.returncode}, text counts {counts}, json {jn}, files {left}")
    if expect:
        check(f"guest killed by signal {sig} ({mode}): complete report",
              p.returncode == -sig and len(counts) == 1 and counts[0] == jn
              and counts[0] >= 3 * iters, what)
    else:
        check(f"guest killed by signal {sig} ({mode}): no exit callback on this QEMU, "
              "no half-written report", p.returncode == -sig and not left, what)

print(f"{'FAIL' if fails else 'PASS'}: {fails} failed")
sys.exit(1 if fails else 0)
