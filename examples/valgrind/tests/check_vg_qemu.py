#!/usr/bin/env python3
"""Cross-check of the two hosts: the Valgrind tool and the QEMU
plugin on the same program (probe.c) with N and 2N loop iterations.

Whole-program counts differ a little between the hosts for reasons
outside the probed code (Valgrind's preload library, the CPU each host
reports to glibc's ifunc resolvers, QEMU's TB-refetch artefact), so the
check is differential: the change in each exact count between the N and
2N runs comes from probe_loop alone, and both hosts must report exactly
the change this script computes from the loop's code and data:
  instructions  7 N + (odd elements among the extra N)
  loads         N          stores        N
  branches      2 N        taken         (even elements) + N
The Valgrind tool must hit these exactly. QEMU gets 0.5% of slack: its
runs are not made deterministic (AT_RANDOM, clocks) and a TB may end in a
truncated copy of an instruction that runs again (TB refetch), which
moves a few records between runs; the figures are printed either way.
It also prints the whole-program counts side by side, and the models'
accuracy from the 2N runs when exact=on gives one.

usage: check_vg_qemu.py VALGRIND LIBDIR QEMU PLUGIN PROBE WORKDIR"""
import json
import os
import subprocess
import sys

valgrind, libdir, qemu, plugin, probe, work = sys.argv[1:7]
os.makedirs(work, exist_ok=True)
N = 20000  # N and 2N with the same number of digits (strtoull, argv)
MASK = (1 << 64) - 1


def mix(x):  # hwp_mix64 / probe.c's mix
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def run(host, n):
    js = os.path.join(work, f"xc-{host}-{n}.json")
    opts = ["models=all", "exact=on", f"json={js}", "report=/dev/null"]
    if host == "valgrind":
        cmd = [valgrind, "--tool=hwprof", "-q"] + ["--" + o for o in opts]
    else:
        cmd = [qemu, "-plugin", plugin + "," + ",".join(opts)]
    env = dict(os.environ, VALGRIND_LIB=libdir)
    r = subprocess.run(cmd + [probe, str(n)], stdin=subprocess.DEVNULL,
                       capture_output=True, env=env, timeout=300)
    if r.returncode != 0:
        sys.exit(f"{host} {n}: failed: {r.stderr.decode()[-600:]}")
    rep = json.load(open(js))
    return rep["session"] if host == "valgrind" else rep


extra = range(N, 2 * N)  # the elements the 2N run adds (arr[i] = mix(i+1))
odd = sum(mix(i + 1) & 1 for i in extra)
want = {"instructions": 7 * N + odd, "loads": N, "stores": N,
        "branches": 2 * N, "taken": (N - odd) + N}
fails = 0
res = {}
for host in ("valgrind", "qemu"):
    a, b = run(host, N), run(host, 2 * N)
    res[host] = b
    for k, w in want.items():
        got = b[k] - a[k]
        ok = got == w if host == "valgrind" else abs(got - w) <= w * 5e-3
        fails += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {host}: delta {k} {got} (want {w})")
print("whole program (2N):  key valgrind qemu")
for k in want:
    print(f"  {k:13s} {res['valgrind'][k]:10d} {res['qemu'][k]:10d}")
for k in sorted(set(res["valgrind"].get("accuracy", {})) | set(res["qemu"].get("accuracy", {}))):
    v = res["valgrind"].get("accuracy", {}).get(k, {}).get("value")
    q = res["qemu"].get("accuracy", {}).get(k, {}).get("value")
    print(f"  accuracy {k:20s} {v} {q}")
sys.exit(1 if fails else 0)
