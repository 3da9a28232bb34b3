#!/usr/bin/env python3
"""Names in shared libraries from a QEMU plugin report.

GUEST's hot loop is hwq_lib_spin in its own shared library; the guest
prints where the loader put every image (dl_iterate_phdr's dlpi_addr, the
load bias, as the guest itself sees it). The plugin's JSON report must list
each of those images (the library, libc, ld.so) in its "modules" member at
that bias, and hwprof-report --functions must put ProfileMe's samples
mostly on hwq_lib_spin, a name only the library's symbol table has.
Runs under each QEMU given as QEMU=PLUGIN (the API 1 plugin under 7.2;
QEMU "qemu10" / "qemu11": the qemu-x86_64 10.0 / 11.1 of build-qemu.sh,
where with_qemu.sh finds it, skipped when it is not built).
usage: check_lib_names.py HWPROF_REPORT GUEST WORKDIR QEMU=PLUGIN..."""
import json
import os
import subprocess
import sys

import hwtrace

tool, guest, work = sys.argv[1:4]
runs = [a.split("=", 1) for a in sys.argv[4:]]
os.makedirs(work, exist_ok=True)
fails = 0


def check(name, ok, detail=""):
    global fails
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")


# label: (version, environment variable for the binary, for its cache, cache)
BUILT = {"qemu10": ("10.0", "HWPROF_QEMU10_USER", "HWPROF_QEMU_CACHE", "qemu"),
         "qemu11": ("11.1", "HWPROF_QEMU11_USER", "HWPROF_QEMU11_CACHE", "qemu-11.1")}
for qemu, plugin in runs:
    built = BUILT.get(qemu)
    if built:
        ver, env_bin, env_cache, cache = built
        qemu = os.environ.get(env_bin) or os.path.join(
            os.environ.get(env_cache) or os.path.expanduser("~/.cache/hwprof/" + cache),
            "bin", "qemu-x86_64")
    if not os.access(qemu, os.X_OK):
        print(f"SKIP {qemu}: not built (bash examples/qemu/build-qemu.sh {built[0] if built else ''})")
        continue
    hwtrace.print_qemu(qemu, plugin)
    js = os.path.join(work, f"lib_names.{os.path.basename(plugin)}.json")
    r = subprocess.run([qemu, "-plugin", f"{plugin},models=pm,json={js}", guest, "300000"],
                       capture_output=True, text=True, timeout=120)
    check("guest ran", r.returncode == 0, f"rc {r.returncode} {r.stderr.strip()[-200:]}")
    if r.returncode:
        continue
    # the guest's own view: realpath -> load bias
    want = {os.path.realpath(l.split()[1]): int(l.split()[2], 16)
            for l in r.stdout.splitlines() if l.startswith("image /")}
    lib = [p for p in want if p.endswith("libhwq_lib.so")]
    check("the guest saw its library, libc and ld.so", len(want) >= 3 and len(lib) == 1,
          ", ".join(sorted(want)))
    mods = {}
    for m in json.load(open(js)).get("modules", []):
        if "bias" in m:
            mods.setdefault(m["path"], set()).add(int(m["bias"], 16))
    for path, bias in sorted(want.items()):
        check(f"module {os.path.basename(path)} at the guest's load bias 0x{bias:x}",
              mods.get(path) == {bias}, f"report: {sorted(hex(b) for b in mods.get(path, []))}")
    out = subprocess.run([tool, "--functions", js], capture_output=True, text=True)
    rows = [l.split() for l in out.stdout.splitlines()
            if len(l.split()) > 2 and l.split()[1].isdigit()]
    total = sum(int(x[1]) for x in rows)
    top = rows[0] if rows else ["-", "0"]
    check("hwprof-report names the library's hot function first, with most samples",
          top[0] == "hwq_lib_spin" and int(top[1]) > total / 2,
          f"top {top[0]} {top[1]} of {total} samples")
print("FAILED" if fails else "PASSED")
sys.exit(1 if fails else 0)
