#!/usr/bin/env python3
"""examples/report/tests/check_host_bbv.py HWPROF_REPORT GUEST PLUGIN VALGRIND_LIB WORKDIR

The hosts' basic-block vectors (bbv=FILE) of a real run equal
hwprof-report --bbv of the same run's recorded trace (record=FILE): GUEST
runs twice under the QEMU plugin (user mode) and twice under the Valgrind
tool (either may be "" when not built), once recording, once writing
vectors. The QEMU run that writes vectors feeds whole TBs (block mode), so
this checks that a TB that does not end in a branch continues its block
and that interval cuts inside a TB land where the instruction-by-
instruction writer puts them. Both runs are deterministic (QEMU user mode
loads the same way; the Valgrind tool fixes AT_RANDOM, the clock and
rdtsc). A file of a bad path is refused before the guest runs.
"""
import os
import shutil
import subprocess
import sys

from rp_check import Checks

tool, guest, plugin, vglib, work = sys.argv[1:6]
check = Checks(work)
p = check.path
guest = os.path.realpath(guest)
I = 10007  # a prime: intervals cut inside blocks and TBs


def same(host, run):
    r = run(f"record={p(host + '.trc')}")
    check(r.returncode == 0, f"{host} record=: {r.stderr[-300:]}")
    r = run(f"bbv={p(host + '.bbv')}", f"bbv_interval={I}")
    check(r.returncode == 0, f"{host} bbv=: {r.stderr[-300:]}")
    r = subprocess.run([tool, "--bbv", p(host + ".ref.bbv"), "--trace", p(host + ".trc"),
                        "--interval", str(I)], capture_output=True, text=True)
    check(r.returncode == 0, f"{host}: hwprof-report --bbv: {r.stderr}")
    got = open(p(host + ".bbv")).read() if os.path.exists(p(host + ".bbv")) else ""
    want = open(p(host + ".ref.bbv")).read() if os.path.exists(p(host + ".ref.bbv")) else ""
    check(got == want and want.count("\n") > 100,
          f"{host}: bbv= equals hwprof-report --bbv of the recorded run "
          f"({got.count(chr(10))} and {want.count(chr(10))} lines)")
    r = run(f"bbv={p('no/such/dir/x.bbv')}")
    check(r.returncode != 0 and "bbv" in r.stderr, f"{host}: an unwritable bbv= refused: "
          f"{r.stderr[-200:]}")


ran = 0
if plugin and shutil.which("qemu-x86_64"):
    os.makedirs(p("q"), exist_ok=True)

    def qemu(*opts):
        return subprocess.run(["qemu-x86_64", "-plugin", ",".join([os.path.abspath(plugin)] +
                                                                  list(opts)), guest, p("q")],
                              capture_output=True, text=True, cwd=work)
    same("qemu", qemu)
    ran += 1
if vglib and shutil.which("valgrind"):
    env = dict(os.environ, VALGRIND_LIB=os.path.abspath(vglib))
    os.makedirs(p("v"), exist_ok=True)

    def vg(*opts):
        return subprocess.run(["valgrind", "--tool=hwprof"] + ["--" + o for o in opts] +
                              [guest, p("v")], capture_output=True, text=True, env=env, cwd=work)
    same("valgrind", vg)
    ran += 1
check.done("" if ran else "; no host built: skipped", skipped=not ran)
