#!/usr/bin/env python3
"""bench/rap/check_bench_rap.py BENCH_RAP WORKDIR: bench_rap's --help names
its own --keys option and says how much of a key file it uses; a key file
whose size is not a whole number of keys is refused with its offset; a
good one gets a stderr line saying how many keys are cycled."""
import os
import struct
import subprocess
import sys

bench, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
fails = checks = 0


def check(what, ok, detail=""):
    global fails, checks
    checks += 1
    if not ok:
        fails += 1
        print(f"FAIL {what}: {detail}")


h = subprocess.run([bench, "--help"], capture_output=True, text=True)
check("--help exits 0", h.returncode == 0, (h.returncode, h.stderr))
check("--help names --keys", "--keys FILE" in h.stdout, h.stdout)
check("--help says only the first 2^24 keys are used, cycled",
      "2^24" in h.stdout and "cycled" in h.stdout, h.stdout)

odd = os.path.join(work, "odd.keys")
with open(odd, "wb") as f:
    f.write(b"\0" * (8 * 5000 + 3))
r = subprocess.run([bench, "--keys", odd, "--list"], capture_output=True, text=True)
check("odd-sized key file refused", r.returncode == 2 and odd in r.stderr and
      "offset 40000" in r.stderr and r.stderr.count("\n") == 1, (r.returncode, r.stderr))

good = os.path.join(work, "good.keys")
with open(good, "wb") as f:
    f.write(b"".join(struct.pack("<Q", 0x400000 + 4 * (i % 777)) for i in range(3 * 4096 + 5)))
r = subprocess.run([bench, "--keys", good, "--list"], capture_output=True, text=True)
check("key file accepted", r.returncode == 0 and "rap/trace/eps1" in r.stdout, (r.returncode, r.stderr))
check("stderr says how many keys are cycled", f"the first 12288 of its 12293 keys, cycled" in r.stderr,
      r.stderr)
print(f"{checks} checks, {fails} failed")
sys.exit(1 if fails else 0)
