#!/usr/bin/env python3
"""examples/report/tests/check_host_names.py HWPROF_REPORT GUEST PLUGIN VALGRIND_LIB WORKDIR

Names from real host reports: GUEST (a position-independent program with
a symbol table) runs under the QEMU plugin (PLUGIN, user mode) and the
Valgrind tool (VALGRIND_LIB; either may be "" when not built). Each JSON
report must name the guest's file in its "modules" member, and
hwprof-report --functions must put ProfileMe's samples on functions of
the guest: names readelf lists as the guest's FUNC symbols.
"""
import json
import os
import shutil
import subprocess
import sys

from rp_check import Checks

tool, guest, plugin, vglib, work = sys.argv[1:6]
check = Checks(work)
p = check.path
guest = os.path.realpath(guest)
tool = os.path.abspath(tool)
plugin = os.path.abspath(plugin) if plugin else ""
vglib = os.path.abspath(vglib) if vglib else ""
syms = subprocess.run(["readelf", "-Ws", guest], capture_output=True, text=True).stdout
funcs = {l.split()[7] for l in syms.splitlines() if len(l.split()) >= 8 and l.split()[3] == "FUNC"}
check(len(funcs) > 5, f"readelf lists the guest's functions ({len(funcs)})")


def named(report, host):
    if not os.path.exists(report):
        check(False, f"{host}: wrote no report")
        return
    data = json.load(open(report))
    mods = [m["path"] for m in data.get("modules", [])]
    check(guest in mods, f"{host}: the report's modules name the guest: {mods[:4]}")
    r = subprocess.run([tool, "--functions", "--top", "1000", "--table", "pm_table", report],
                       capture_output=True, text=True)
    rows = [l.split() for l in r.stdout.splitlines()[2:] if l.strip()]
    mine = sum(int(x[1]) for x in rows if x[0] in funcs)
    total = sum(int(x[1]) for x in rows if len(x) > 1 and x[1].isdigit())
    check(r.returncode == 0 and mine > 0,
          f"{host}: samples on the guest's functions ({mine} of {total}): {r.stderr[-300:]}")


ran = 0
if plugin and shutil.which("qemu-x86_64"):
    os.makedirs(p("q"), exist_ok=True)
    r = subprocess.run(["qemu-x86_64", "-plugin", f"{plugin},models=pm,json={p('qemu.json')}",
                        guest, p("q")], capture_output=True, text=True, cwd=work)
    check(r.returncode == 0, f"qemu: {r.stderr[-300:]}")
    named(p("qemu.json"), "qemu")
    ran += 1
if vglib and shutil.which("valgrind"):
    env = dict(os.environ, VALGRIND_LIB=vglib)
    os.makedirs(p("v"), exist_ok=True)
    r = subprocess.run(["valgrind", "--tool=hwprof", "--models=pm", "--json=" + p("vg.json"),
                        guest, p("v")], capture_output=True, text=True, env=env, cwd=work)
    check(r.returncode == 0, f"valgrind: {r.stderr[-300:]}")
    named(p("vg.json"), "valgrind")
    ran += 1
check.done("" if ran else "; no host built: skipped", skipped=not ran)
