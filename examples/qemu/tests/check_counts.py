#!/usr/bin/env python3
"""Event-stream correctness of the QEMU plugin against counts known in
closed form: runs guest_counts under qemu-x86_64 with the plugin recording
a trace, decodes it with the independent reader hwtrace.py and compares the
kernel region's retired instructions, conditional branches (taken and not
taken) and load values with what N implies, and the rep-string and
page-crossing kernels' counts (a rep's first iteration at the end
of a TB retires; a cut page-crossing copy does not) (see guest_counts.c).

usage: check_counts.py QEMU PLUGIN GUEST WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

import hwtrace

qemu, plugin, guest, work = sys.argv[1:5]
hwtrace.print_qemu(qemu, plugin)
per_iteration = hwtrace.qemu_major(qemu) < 10
# Fixed guest addresses (QEMU 10 places guest mmaps at random like the
# host): the runs compared below must see the same library PCs.
norand = ["setarch", "x86_64", "-R"] if shutil.which("setarch") else []
N = 5001
os.makedirs(work, exist_ok=True)
trace, js = os.path.join(work, "counts.hwpt"), os.path.join(work, "counts.json")
out = subprocess.run(
    norand + [qemu, "-plugin", f"{plugin},exact=on,record={trace},json={js},"
     f"report={os.path.join(work, 'counts.txt')}", guest, str(N)],
    check=False, capture_output=True, text=True, timeout=120)
if out.returncode != 0:
    sys.exit(f"guest failed: {out.returncode} {out.stderr}")
line1, line2 = out.stdout.splitlines()[:2]
begin, end, kload, table, n = line1.split()
begin, end, kload, table = (int(x, 16) for x in (begin, end, kload, table))
assert int(n) == N
rbegin, rend, rmovs, rstos, rsrc, rdst, pbegin, pend = (int(x, 16) for x in line2.split())
R, PCALLS = 64, 100                # guest_counts.c: rep_kernel(64), 100 page calls

fails = 0


def check(name, got, want):
    global fails
    ok = got == want
    fails += not ok
    print(f"{'ok  ' if ok else 'FAIL'} {name}: got {got}, want {want}")


insns = brc = taken = nottaken = 0
values = {}
total = bad_addr = 0
classes = [0] * 8
rinsns = rbrc = rtaken = movs = movs_loads = movs_first = stos = stos_stores = 0
movs_values = {}
pinsns = 0
for vcpu, pc, nxt, addr, value, cls, ev in hwtrace.records(open(trace, "rb").read()):
    total += 1
    classes[cls] += 1
    if rbegin <= pc < rend:
        rinsns += 1
        rbrc += cls == 3
        rtaken += cls == 3 and bool(ev & hwtrace.EV_TAKEN)
        if pc == rmovs:
            movs += 1
            if cls == 1:
                movs_loads += 1
                movs_first += addr == rsrc
                movs_values[value] = movs_values.get(value, 0) + 1
        if pc == rstos:
            stos += 1
            stos_stores += cls == 2 and rdst <= addr < rdst + 88
    if pbegin <= pc < pend:
        pinsns += 1
    if begin <= pc < end:
        insns += 1
        if cls == 3:
            brc += 1
            if ev & hwtrace.EV_TAKEN:
                taken += 1
            else:
                nottaken += 1
        if pc == kload:
            bad_addr += not table <= addr < table + 8 * N
            values[value] = values.get(value, 0) + 1

# Closed forms (guest_counts.c): rcx runs N-1 .. 0.
odd = N // 2                      # odd values of rcx: the nop runs
check("kernel instructions", insns, 1 + 7 * N + odd)
check("conditional branches", brc, 2 * N)
check("taken", taken, (N + 1) // 2 + (N - 1))     # jz on even rcx, jnz loops
check("not taken", nottaken, N // 2 + 1)
check("load addresses outside the table", bad_addr, 0)
check("load value histogram", values, {v: len(range(v, N, 7)) for v in range(7)})

# rep kernel: r8 = R..1; per pass 3 + r8 (movsb, count r8 - 1) + 2 + 4
# (stosq, count 3) + 2 instructions; a rep of count K retires K + 1 times
# (Valgrind's convention, examples/valgrind/hw_main.c), its first K with
# an access. The first iteration of each rep ends a multi-instruction TB.
# QEMU 10 runs a rep string op's iterations inside one TB (no TB boundary
# per iteration, so a plugin sees the instruction once per execution, with
# its first access); QEMU 7.2 ends the TB after each iteration.
if per_iteration:
    check("rep kernel instructions", rinsns, 1 + 11 * R + R * (R + 1) // 2)
    check("rep movsb passes", movs, R * (R + 1) // 2)
    check("rep movsb loads", movs_loads, R * (R - 1) // 2)
    check("rep movsb load values", movs_values, {3 * j + 1: R - 1 - j for j in range(R - 1)})
    check("rep stosq passes", stos, 4 * R)
    check("rep stosq stores into dst", stos_stores, 3 * R)
else:
    check("rep kernel instructions (one per rep)", rinsns, 1 + 9 * R)
    check("rep movsb executions", movs, R)
    check("rep movsb loads", movs_loads, R - 1)
    check("rep movsb load values (first iteration)", movs_values, {1: R - 1})
    check("rep stosq executions", stos, R)
    check("rep stosq stores into dst", stos_stores, R)
check("rep kernel conditional branches", rbrc, R)
check("rep kernel taken", rtaken, R - 1)
check("rep movsb first-iteration loads (src[0])", movs_first, R - 1)
# Page kernel: the movabs crosses a page end and its cut copy ends a TB.
check("page-crossing kernel instructions", pinsns, 5 * PCALLS)

rep = json.load(open(js))
check("session instructions == trace records", rep["instructions"], total)
check("session conditional branches == trace", rep["classes"]["conditional branch"], classes[3])
check("session loads == trace", rep["loads"], classes[1])


# Block mode (no exact, no record: one hwx_session_block per TB, the
# plugin's fast path) against per-instruction mode (record= forces it) on
# the same guest: the control-flow models and the stream counts must not
# see a difference (strat=on only makes the plugin follow memory). Value
# models are not compared: the guest's loaded values include per-run
# randomness such as the stack canary.
def run(mode, extra, models="pm=on,path=on,strat=on"):
    js = os.path.join(work, f"counts-{mode}.json")
    o = subprocess.run(norand + [qemu, "-plugin", f"{plugin},{models},json={js},"
                        f"report={os.path.join(work, f'counts-{mode}.txt')}{extra}",
                        guest, str(N)], check=False, capture_output=True, text=True,
                       timeout=120)
    if o.returncode != 0:
        sys.exit(f"guest failed ({mode}): {o.returncode} {o.stderr}")
    return json.load(open(js))


blk = run("block", "")
ins = run("insn", f",record={os.path.join(work, 'counts-insn.hwpt')}")
# burst_period= with a gated model alone: a recording still takes every
# TB (without one, the TBs between bursts are only counted).
bt = os.path.join(work, "counts-bursts.hwpt")
run("bursts", f",burst_period=4096,record={bt}", "strat=on")
check("trace records with burst_period= == exact run's instructions",
      sum(1 for _ in hwtrace.records(open(bt, "rb").read())), rep["instructions"])
for k in ("instructions", "loads", "stores", "branches", "taken", "classes"):
    check(f"block mode {k} == exact run", blk[k], rep[k])
for k in ("profileme", "pathprof"):
    check(f"block mode models.{k} == per-instruction mode", blk["models"][k] == ins["models"][k], True)

# ProfileMe alone: the plugin keeps the fetch countdown (API 4: inline on a
# scoreboard with a conditional callback; API 1: a TB callback that only
# subtracts) and the session sees only the selected instructions. Its
# report must be the per-instruction path's (record= forces that path),
# at the default interval, at a short one (a selection every few TBs:
# last instructions of TBs, cut page-crossing copies, rep ops) and paired.
# Two runs of this guest do not always execute the same PCs (under QEMU
# 10: same instruction count, a few sampled PCs elsewhere; two per-TB runs
# differed from each other in 2 of 3 tries; under 7.2 the count moves by
# a few), so a comparison that differs is run again, up to 3 times; a
# countdown that selects wrongly differs every time. Under QEMU 10 even
# three tries were seen to differ, so the tables are compared there and
# reported, and asserted only under 7.2.
for name, extra in (("default", ""), ("short", ",pm_interval=37"), ("paired", ",pm_paired=1")):
    for attempt in range(1, 4):
        cd = run(f"cd-{name}", extra, "pm=on")
        pi = run(f"pi-{name}", f"{extra},record={os.path.join(work, 'counts-pi.hwpt')}", "pm=on")
        same = cd["models"]["profileme"] == pi["models"]["profileme"]
        if same:
            break
    txt = open(os.path.join(work, f"counts-cd-{name}.txt")).read()
    check(f"countdown ran ({name})", "countdown ran in the plugin" in txt, True)
    check(f"countdown instructions == per-instruction ({name})", cd["instructions"], pi["instructions"])
    sel = cd["models"]["profileme"]["sampler"]["stats"]["selected"]
    check(f"countdown selections ({name}) > 0", sel > 0, True)
    if per_iteration:
        check(f"countdown models.profileme == per-instruction mode ({name}, {sel} selected, "
              f"attempt {attempt})", same, True)
    else:  # QEMU 10 places the guest's mmaps at random: two runs differ
        print(f"note countdown vs per-instruction tables ({name}): "
              f"{'equal' if same else 'differ'} after {attempt} runs (not asserted: "
              f"QEMU 10 runs of this guest are not reproducible)")

# The core alone or with ProfileMe takes each TB through its translation
# of it (hwq_emit_core), going one instruction at a time where ProfileMe
# selects or a TB's accesses differ from its first run's; blocks=off
# feeds it every instruction. The core's stats and ProfileMe's table must
# be the same both ways: caches only, and sampled with ProfileMe at a
# short interval (windows in most TBs) and at its default. Asserted under
# 7.2 as the countdown's are.
for name, models in (("caches", "core=on,core_mode=caches"),
                     ("sampled-short", "pm=on,core=on,core_mode=sampled,pm_interval=37"),
                     ("sampled", "pm=on,core=on,core_mode=sampled,pm_paired=1")):
    for attempt in range(1, 4):
        cb = run(f"cb-{name}", "", models)
        ci = run(f"ci-{name}", ",blocks=off", models)
        same = all(cb["models"].get(k) == ci["models"].get(k) for k in ("core", "profileme"))
        if same:
            break
    check(f"core blocks instructions == one at a time ({name})", cb["instructions"], ci["instructions"])
    check(f"core blocks timed instructions > 0 ({name})",
          name == "caches" or cb["models"]["core"]["stats"]["timed"] > 0, True)
    if per_iteration:
        check(f"core blocks models.core, .profileme == one at a time ({name}, attempt {attempt})",
              same, True)
    else:
        print(f"note core blocks vs one at a time ({name}): "
              f"{'equal' if same else 'differ'} after {attempt} runs (not asserted)")
sys.exit(1 if fails else 0)
