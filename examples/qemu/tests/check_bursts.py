#!/usr/bin/env python3
"""burst_period=: the stratified compressors, the path profiler and the
co-processor fed in bursts (docs/qemu.md, "Burst sampling"). Run alone,
or with every model (ProfileMe then sees its selections whole, RAP each
TB's count), the plugin only counts the TBs between bursts
(hwx_session_quiet); with bbv=, which needs every TB, it builds every
TB's records and the session's gate leaves them out. Both must feed the
models the same instructions: the path profiler's report, ProfileMe's
table, RAP's event count and the loads the stratified compressor and the
co-processor took must agree (what they did with them is not compared:
a few loaded values, such as pointers, differ from one run of a program
to the next under QEMU, and the compressor's strata and the
co-processor's masks follow the values), and the share the bursts saw
must be near burst_len / burst_period. With exact=on, in
bursts, the stratified compressor (its rate raised by period / len) and
the hot path table must still meet the accuracy tests' thresholds
(weighted invariance error <= 5%, overlap >= 80%); every figure is
printed beside the full run's.

usage: check_bursts.py QEMU PLUGIN WORKDIR NAME -- PROGRAM ARGS..."""
import json
import os
import re
import shutil
import subprocess
import sys

import hwtrace
import hwx_thresholds

qemu, plugin, work, name = sys.argv[1:5]
prog = sys.argv[sys.argv.index("--") + 1:]
hwtrace.print_qemu(qemu, plugin)
os.makedirs(work, exist_ok=True)
check = hwx_thresholds.Checks(name + ": ")
PERIOD, LEN = 4096, 256
GATED = "models=strat+path+coproc"
BURSTS = f"burst_period={PERIOD},burst_len={LEN}"


# The runs compared go without address randomisation. Under QEMU 10
# two runs still do not take the same paths everywhere (the same
# instruction count and bursts, a few hot path table evictions apart;
# qemu/counts sees the same), so there the tables are compared and
# reported, and asserted only under 7.2.
norand = ["setarch", "x86_64", "-R"] if shutil.which("setarch") else []
strict = hwtrace.qemu_major(qemu) < 10
LOOSE = ("path profiler: its report", "ProfileMe: its table")


def run(tag, opts):
    base = os.path.join(work, f"{name}-bursts-{tag}")
    r = subprocess.run(norand + [qemu, "-plugin", f"{plugin},{opts},report={base}.txt,json={base}.json"]
                       + prog, env=hwx_thresholds.guest_env(), stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
    if r.returncode != 0:
        sys.exit(f"{name}: program failed ({r.returncode}): {r.stderr.decode()[-500:]}")
    return json.load(open(base + ".json")), open(base + ".txt").read()


GATED_SAME = (("path profiler: its report", lambda r: r["models"]["pathprof"]),
              ("stratified: the loads it took",
               lambda r: r["models"]["stratified"]["compressor"]["stats"]["events"]),
              ("co-processor: the instructions and loads it took",
               lambda r: [r["models"]["coproc"]["stats"][k] for k in ("events", "class_passed")]))
ALL_SAME = GATED_SAME + (("ProfileMe: its table", lambda r: r["models"]["profileme"]["table"]),
                         ("RAP: the instructions it counted",
                          lambda r: r["models"]["rap"]["stats"]["events"]))
PM_SAME = GATED_SAME + ALL_SAME[3:4]  # ProfileMe beside them, no RAP
for models, same in ((GATED, GATED_SAME), ("models=all", ALL_SAME),
                     ("models=profileme+strat+path+coproc", PM_SAME)):
    tag = models.split("=")[1].replace("+", "-")
    quiet, qtxt = run(f"{tag}-quiet", f"{models},{BURSTS}")
    full, _ = run(f"{tag}-full", f"{models},{BURSTS},bbv={work}/{name}-{tag}.bbv")
    check(f"{tag}: the quiet path ran", "between bursts the TBs were counted" in qtxt)
    if re.search(r"-v[0-9]+\.so$", plugin):
        # API 4 and 7: no callback for a TB between bursts (hwq_quiet_*),
        # the same instructions fed as counting them in a callback
        check(f"{tag}: counted inline", "counted inline with no callback" in qtxt)
        cb, cbtxt = run(f"{tag}-cb", f"{models},{BURSTS},inline=off")
        check(f"{tag}: inline=off: counted in a callback", "counted inline" not in cbtxt)
        check(f"{tag}: inline=off: the bursts fed the same instructions",
              (cb["instructions"], cb["bursts"]) == (quiet["instructions"], quiet["bursts"]),
              f"{cb['bursts']} {quiet['bursts']}")
    check(f"{tag}: instructions agree", quiet["instructions"] == full["instructions"],
          f"{quiet['instructions']} {full['instructions']}")
    check(f"{tag}: the bursts fed the same instructions", quiet["bursts"] == full["bursts"],
          f"{quiet['bursts']} {full['bursts']}")
    share = quiet["bursts"]["fed"] / quiet["instructions"]
    check(f"{tag}: share in bursts near {LEN}/{PERIOD}", abs(share * PERIOD / LEN - 1) < 0.2,
          f"{share:.4f}")
    if "profileme" in quiet["models"]:
        # Under every QEMU: a skip that passed over a selection leaves
        # ProfileMe selecting a fraction as often (seen: 829 against
        # 10,900 on python3 under QEMU 10).
        sq, sf = (r["models"]["profileme"]["sampler"]["stats"]["selected"] for r in (quiet, full))
        check(f"{tag}: ProfileMe selections within 5% either way", abs(sq - sf) <= 0.05 * sf,
              f"{sq} {sf}")
    for what, get in same:
        if strict or what not in LOOSE:
            check(f"{tag}: {what}, the same either way", get(quiet) == get(full),
                  str(get(quiet))[:200])
        else:
            print(f"note {tag}: {what}: {'the same' if get(quiet) == get(full) else 'differs'} "
                  f"either way (not asserted: two runs under QEMU 10 differ)")
# Accuracy with and without bursts (exact=on: every TB's records built).
lines = {}
for tag, opts in (("exact", f"{GATED},exact=on"), ("exact-bursts", f"{GATED},exact=on,{BURSTS}")):
    rep, txt = run(tag, opts)
    acc = {k: v["value"] for k, v in rep.get("accuracy", {}).items()}
    check(f"{tag}: stratified weighted invariance error <= 5%",
          acc.get("strat_inv_err_pct", 99.0) <= 5.0, acc.get("strat_inv_err_pct"))
    check(f"{tag}: HPT 512x4 overlap >= {hwx_thresholds.HPT_ABS_PCT:g}%",
          acc.get("hpt_overlap_pct", 0.0) >= hwx_thresholds.HPT_ABS_PCT, acc.get("hpt_overlap_pct"))
    lines[tag] = [ln.strip() for ln in txt.splitlines()
                  if re.search(r"invariance error|HPT complete overlap|co-processor weighted", ln)]
    check(f"{tag}: the accuracy section", len(lines[tag]) == 3, lines[tag])
for full_ln, burst_ln in zip(lines["exact"], lines["exact-bursts"]):
    print(f"{name}: {full_ln}  |  in bursts: {burst_ln.split(':', 1)[-1].strip()}")
check.exit()
