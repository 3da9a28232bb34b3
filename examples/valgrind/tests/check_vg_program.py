#!/usr/bin/env python3
"""A real program under the hwprof Valgrind tool, run twice with every
model and exact=on:
  determinism: the text and JSON reports of the two runs are
    byte-identical (--exact-reports), or without that flag the instruction
    counts agree within 0.5%. Both runs (and the native one) go through
    vg_fixture.py: a fresh PID namespace when unshare(1) allows it, so
    glibc's cached pid (a loaded value) is the same too, and a fixed
    environment, working directory and input path (guest_env, guest_dir),
    so the figures do not move with the build directory or the runner;
  accuracy: the thresholds (examples/common/hwx_thresholds.py)
    on the session's JSON;
  the program's output equals its native output, and VEX and the byte
    decoder agree on every branch but jumps to the next instruction.

usage: check_vg_program.py VALGRIND LIBDIR WORKDIR NAME [--exact-reports]
       [--input BYTES] [--wide-paths] [--coproc-compare] -- PROGRAM ARGS...   ('@INPUT@' in ARGS is replaced
       by a generated text file of BYTES bytes; --wide-paths: the HPT rule for
    a program whose path working set no 512-entry table holds, see
    hwx_thresholds.py)"""
import json
import os
import sys

from hwx_thresholds import Checks, check_report  # examples/common, on PYTHONPATH
from vg_fixture import MODEL_OPTS, guest_input, pid_namespace, run_native, run_tool

valgrind, libdir, work, name = sys.argv[1:5]
dd = sys.argv.index("--")
flags = sys.argv[5:dd]
prog = sys.argv[dd + 1:]
exact_reports = "--exact-reports" in flags
size = int(flags[flags.index("--input") + 1]) if "--input" in flags else 0
os.makedirs(work, exist_ok=True)

if size:
    inp = guest_input(libdir, name, size)
    prog = [inp if a == "@INPUT@" else a for a in prog]

if not pid_namespace():
    print(f"{name}: no PID namespace here; pid-derived values may differ")
native = run_native(libdir, prog)
reps = []
for run in (1, 2):
    txt = os.path.join(work, f"{name}-{run}.txt")
    js = os.path.join(work, f"{name}-{run}.json")
    opts = ["--" + o for o in MODEL_OPTS] + [f"--report={txt}", f"--json={js}"]
    r = run_tool(valgrind, libdir, opts, prog)
    if r.returncode != 0:
        sys.exit(f"{name}: failed ({r.returncode}): {r.stderr.decode()[-800:]}")
    reps.append((open(txt, "rb").read(), open(js, "rb").read(), r.stdout))

check = Checks(name + ": ")


rep = json.loads(reps[0][1])
sess = rep["session"]
print(f"{name}: {rep['stream']['instructions']} instructions")
check("output equals the native run's", reps[0][2] == native and reps[1][2] == native)
if exact_reports:
    check("text reports byte-identical", reps[0][0] == reps[1][0])
    check("JSON reports byte-identical", reps[0][1] == reps[1][1])
else:
    a = rep["stream"]["instructions"]
    b = json.loads(reps[1][1])["stream"]["instructions"]
    check("instruction counts within 0.5%", abs(a - b) <= a * 5e-3, (a, b))
# The thresholds are shared with the QEMU plugin's tests.
check_report(sess, check, wide_paths="--wide-paths" in flags,
             coproc_compare="--coproc-compare" in flags)
check("VEX and byte classes agree but for jmp-to-next",
      all(d["vex"] == "other" and d["bytes"] == "jump"
          for d in rep["class_check"]["disagree"]), rep["class_check"]["disagree"])
check.exit()
