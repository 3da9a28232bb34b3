#!/usr/bin/env python3
"""Code that is gone, under the Valgrind tool (examples/common/
retire_check.py): the tool sees the client's munmap and folds RAP's
ranges there.

usage: check_vg_retire.py VALGRIND LIBDIR GUEST WORKDIR REPLAY
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import retire_check  # noqa: E402

valgrind, libdir, guest, work, replayer = sys.argv[1:6]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, VALGRIND_LIB=libdir)


def run(mode, opts, record=None):
    js = os.path.join(work, f"retire-{mode}.json")
    opts = [f"--{k}={v}" for k, v in opts.items()]
    if record:
        opts.append("--record=" + record)
    out = subprocess.run([valgrind, "--tool=hwprof", "-q", "--vgdb=no"] + opts +
                         ["--report=/dev/null", "--json=" + js, guest, mode],
                         check=True, capture_output=True, text=True, timeout=300, env=env).stdout
    a, b = (int(x, 16) for x in out.split()[:2])
    rep = json.load(open(js))
    return a, b, rep["session"]["models"]["rap"], rep["stream"].get("unmapped") or None


sys.exit(0 if retire_check.check(run, "valgrind", replayer, work) else 1)
