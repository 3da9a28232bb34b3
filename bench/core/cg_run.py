#!/usr/bin/env python3
"""bench/core/cg_run.py VALGRIND LIBDIR TOOL [OPTION...] -- PROG ARGS

PROG under Valgrind's TOOL (cachegrind, callgrind) exactly as the hwprof
tool runs it in vg_fixture.py: pid 2 of a fresh user + PID namespace, the
fixed environment, working directory and VALGRIND_LIB of guest_dir(), so
that the guest's addresses match the recorded trace's."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "examples", "valgrind", "tests"))
import vg_fixture  # noqa: E402


def main(argv):
    valgrind, libdir, tool = argv[0], argv[1], argv[2]
    dd = argv.index("--")
    d = vg_fixture.guest_dir(libdir)
    cmd = (vg_fixture.pid_namespace() +
           [valgrind, "--tool=" + tool, "-q", "--vgdb=no"] + argv[3:dd] + argv[dd + 1:])
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE,
                       env=vg_fixture.guest_env(VALGRIND_LIB=os.path.join(d, "lib")),
                       cwd=os.path.join(d, "cwd"))
    if r.returncode != 0:
        sys.exit(f"cg_run: {tool} failed ({r.returncode}): {r.stderr.decode()[-800:]}")


if __name__ == "__main__":
    main(sys.argv[1:])
