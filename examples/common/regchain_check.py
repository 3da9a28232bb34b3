"""The register check both hosts run on examples/valgrind/tests/regchain.c:
with core=on the host hands the core each instruction's source and
destination registers and its op class, so a chain of N dependent
multiplies takes at least N x the 21264's multiply latency (7 cycles,
core.h's lat_mul default), while the same multiplies without the chain,
or the chain with the host's registers switched off, run at the issue
rate (under 2 cycles an iteration of 3 or 4 instructions). The "block"
chain puts four multiplies in one basic block, so three of every four
read a register written earlier in the same block: a host that sees the
block's instructions together (VEX optimises a superblock as one) must
still hand the core that dependence. The report names where the
registers came from.

check(run, source): run(mode, regs) runs the guest ("chain", "block" or "indep")
with registers on (True) or off and returns its text report, or None if
the host failed (after printing why); source is the name the report's
core section gives ("VEX IR", "the x86 decoder"). Returns the failures.
"""
import re

N = 1000000        # regchain.c's iterations
LAT_MUL = 7        # the Alpha 21264's integer multiply latency


def core_cycles(text):
    """The cycles line of a text report's core section (0 if absent)."""
    core = text[text.find("-- modelled core"):]
    m = re.search(r"^  cycles +(\d+)", core, re.M)
    return int(m.group(1)) if m else 0


def check(run, source):
    fails = 0

    def ok(name, cond, detail=""):
        nonlocal fails
        print(("ok   " if cond else "FAIL ") + name + ("" if cond else f": {detail}"))
        fails += 0 if cond else 1

    def cycles(mode, regs):
        text = run(mode, regs)
        if text is None:
            ok(f"{mode} regs={regs}: runs", False)
            return 0, ""
        return core_cycles(text), text[text.find("-- modelled core"):]

    cyc, core = cycles("chain", True)
    ok(f"chain: registers from {source}",
       f"(registers from {source}: timing with dependences)" in core, core[-300:])
    ok(f"chain: {cyc} cycles >= N x lat_mul = {N * LAT_MUL}", cyc >= N * LAT_MUL)
    cyc, core = cycles("block", True)
    ok(f"chain within a block: {cyc} cycles >= N x lat_mul = {N * LAT_MUL}",
       cyc >= N * LAT_MUL)
    cyc, core = cycles("indep", True)
    ok(f"independent: {cyc} cycles < 2 N", 0 < cyc < 2 * N)
    cyc, core = cycles("chain", False)
    ok("chain, registers off: says no registers",
       "(no registers from this host: timing without dependences)" in core, core[-300:])
    ok(f"chain, registers off: {cyc} cycles < 2 N", 0 < cyc < 2 * N)
    return fails
