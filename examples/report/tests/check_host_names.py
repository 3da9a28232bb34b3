#!/usr/bin/env python3
"""examples/report/tests/check_host_names.py HWPROF_REPORT GUEST PLUGIN VALGRIND_LIB WORKDIR

Names from real host reports: GUEST (a position-independent program with
a symbol table) runs under the QEMU plugin (PLUGIN, user mode) and the
Valgrind tool (VALGRIND_LIB; either may be "" when not built). Each JSON
report must name the guest's file in its "modules" member, and
hwprof-report --functions must put ProfileMe's samples on functions of
the guest: names readelf lists as the guest's FUNC symbols.

Hot paths decoded by the hosts ("hot_blocks"), against the guest's own
code as objdump disassembles it (not the host's block map): in each of
the ten hottest decoded paths inside the guest, a block's first branch
(objdump's jumps, calls and returns) must lead to the next block, by its
direct target or its fall-through (a call: the callee, or the return
address a Ball-Larus path steps over to).
"""
import re
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
# the guest's instructions: address -> (mnemonic, direct target or None, next address)
insns, order = {}, []
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", guest], capture_output=True,
                     text=True).stdout.splitlines()
for k, l in enumerate(dis):
    m = re.match(r"\s*([0-9a-f]+):\t(.*)", l)
    if m:
        op = m.group(2).split()
        op = [o for o in op if o not in ("bnd", "notrack", "rep", "repz", "repnz", "lock")]
        tgt = re.match(r"([0-9a-f]+) <", " ".join(op[1:2] + op[2:3])) if len(op) > 1 else None
        order.append(int(m.group(1), 16))
        insns[order[-1]] = (op[0] if op else "", int(tgt.group(1), 16) if tgt else None)
order.sort()
nxt = {a: b for a, b in zip(order, order[1:])}
exec_vaddr = min(int(l.split()[2], 16) for l in subprocess.run(
    ["readelf", "-lW", guest], capture_output=True, text=True).stdout.splitlines()
    if l.split()[:1] == ["LOAD"] and "E" in l.split()[6:])


def is_branch(mn):
    return mn.startswith("j") or mn.startswith("call") or mn.startswith("ret") or \
        mn.startswith("loop")


def paths_true(data, host):
    """The ten hottest decoded paths inside the guest follow its code."""
    mod = [m for m in data.get("modules", []) if m["path"] == guest]
    hb = data.get("models", data.get("session", {}).get("models", {})).get("pathprof", {}) \
        .get("hot_blocks")
    if not hb and "session" in data:
        hb = data["session"]["models"].get("pathprof", {}).get("hot_blocks")
    check(hb is not None and mod, f"{host}: the report has hot_blocks and the guest's module")
    if not hb or not mod:
        return
    bias = int(mod[0].get("bias", "0x0"), 16) if "bias" in mod[0] else \
        int(mod[0]["lo"], 16) - exec_vaddr
    done = [e for e in hb["paths"] if "blocks" in e]
    check(len(done) >= 0.9 * len(hb["paths"]),
          f"{host}: {len(done)} of {len(hb['paths'])} hot paths decoded")
    seen, bad = 0, []
    for e in done:  # the JSON lists the HPT's paths hottest first
        blocks = [int(b, 16) - bias for b in e["blocks"]]
        if seen == 10 or not all(b in insns for b in blocks):
            continue
        seen += 1
        for a, b in zip(blocks, blocks[1:]):
            pc = a
            while pc in nxt and not is_branch(insns[pc][0]):
                pc = nxt[pc]
            mn, tgt = insns.get(pc, ("", None))
            if b not in (tgt, nxt.get(pc)):
                bad.append(f"{e['start']}: block 0x{a:x} ends at 0x{pc:x} {mn}, not to 0x{b:x}")
    check(seen == 10 and not bad, f"{host}: hottest decoded paths follow the guest's code "
          f"({seen} checked): {bad[:3]}")


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
    paths_true(data, host)


ran = 0
if plugin and shutil.which("qemu-x86_64"):
    os.makedirs(p("q"), exist_ok=True)
    r = subprocess.run(["qemu-x86_64", "-plugin", f"{plugin},models=pm+path,json={p('qemu.json')}",
                        guest, p("q")], capture_output=True, text=True, cwd=work)
    check(r.returncode == 0, f"qemu: {r.stderr[-300:]}")
    named(p("qemu.json"), "qemu")
    ran += 1
if vglib and shutil.which("valgrind"):
    env = dict(os.environ, VALGRIND_LIB=vglib)
    os.makedirs(p("v"), exist_ok=True)
    r = subprocess.run(["valgrind", "--tool=hwprof", "--models=pm+path", "--json=" + p("vg.json"),
                        guest, p("v")], capture_output=True, text=True, env=env, cwd=work)
    check(r.returncode == 0, f"valgrind: {r.stderr[-300:]}")
    named(p("vg.json"), "valgrind")
    ran += 1
check.done("" if ran else "; no host built: skipped", skipped=not ran)
