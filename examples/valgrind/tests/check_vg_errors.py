#!/usr/bin/env python3
"""The Valgrind tool refuses bad options, impossible models and
unwritable reports before the client runs (exit 1), and a report that
cannot be written completely is an error (exit 3) that leaves no
partial file.

usage: check_vg_errors.py VALGRIND LIBDIR PROBE WORKDIR
"""
import os
import subprocess
import sys

valgrind, libdir, probe, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
fails = 0
env = dict(os.environ, VALGRIND_LIB=libdir)


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    fails += 0 if ok else 1


def run(*opts):
    return subprocess.run([valgrind, "--tool=hwprof", "-q", "--vgdb=no"] + list(opts) +
                          [probe, "100"], capture_output=True, timeout=300, env=env)


# Refused before the client runs: exit 1, the reason named, no client output.
for opts, want in ((["--hwprof-random-seed=abc"], b"--hwprof-random-seed: expected an integer"),
                   (["--hwprof-random-seed=-1"], b"--hwprof-random-seed: expected an integer"),
                   (["--models=coproc", "--coproc_slots=3"], b"slots"),
                   (["--exact=on", "--exact_mb=65536"], b"exact_mb"),
                   (["--json=" + os.path.join(work, "no-such-dir", "r.json")], b"json="),
                   (["--report=" + work], b"is a directory"),
                   (["--models="], b"models"),
                   (["--rap_kb=abc"], b"rap_kb: expected an integer")):
    r = run(*opts)
    check(f"{' '.join(opts)}: refused at start", r.returncode == 1 and want in r.stderr
          and r.stdout == b"", (r.returncode, r.stderr[-300:]))

r = run("--models=rap+path", "--rap_kb=0", "--hpt=0x0", "--report=/dev/null")
check("rap_kb=0 hpt=0x0 run", r.returncode == 0, r.stderr[-300:])

# A device that refuses writes: exit 3, reason given.
for opt in ("--report=/dev/full", "--json=/dev/full"):
    r = run("--models=rap", opt, "--report=/dev/null" if "json" in opt else "--top=3")
    check(f"{opt}: exit 3, reason given", r.returncode == 3 and b"/dev/full" in r.stderr,
          (r.returncode, r.stderr[-300:]))

# A good run: complete reports, no temporary left.
js, txt = os.path.join(work, "ok.json"), os.path.join(work, "ok.txt")
r = run("--models=all", "--json=" + js, "--report=" + txt)
check("good run exits 0", r.returncode == 0, r.stderr[-300:])
check("reports complete", os.path.exists(js) and open(js, "rb").read().endswith(b"}\n")
      and open(txt, "rb").read().startswith(b"== hwprof: Valgrind host =="))
check("no temporary files", not [f for f in os.listdir(work) if ".tmp." in f], os.listdir(work))
print(f"{fails} failed")
sys.exit(1 if fails else 0)
