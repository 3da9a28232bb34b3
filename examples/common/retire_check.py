"""Code that is gone, checked the same way under both hosts (qemu/retire,
host/valgrind_retire): examples/qemu/tests/guest_jit.c writes loops into
page A, runs them, then unmaps A and runs the same loops from page B.
Each host runs it with RAP alone and a tree fine enough to split inside a
page, twice: with "keep" (A stays mapped) RAP holds several ranges inside
A; without it, the host reports the unmapped ranges, RAP's ranges inside
A fold into one (the page's own, with no child inside A), B's are split
as A's were, and the tree still sums to every instruction.

Then twice more: with retire=off nothing folds (A keeps its ranges, as
with "keep"); and recorded (record=), the trace carries a retire item
for each unmapped range, and its replay through hwprof-replay gives the
same RAP tree as the run that recorded it.

A host's wrapper passes run(mode, opts, record=None) -> (a, b, rap,
unmapped): the pages' addresses the guest printed, RAP's JSON report and
the number of unmapped ranges the host reports (None when it reports
none); `opts` is the options, `record` a trace file to write."""
import json
import os
import re
import subprocess
import tempfile

OPTS = {"models": "rap", "rap_kb": "64", "rap_eps": "0.01"}


def inside(rap, lo, hi):
    """For each range inside [lo, hi], whether its parent is inside too
    (the JSON lists the tree in pre-order with each range's depth)."""
    stack, got = [], []
    for r in rap["ranges"]:
        rlo, rhi, d = int(r["lo"], 16), int(r["hi"], 16), r["depth"]
        del stack[d:]
        parent = stack[-1] if stack else None
        stack.append((rlo, rhi))
        if lo <= rlo and rhi <= hi:
            got.append(parent is not None and lo <= parent[0] and parent[1] <= hi)
    return got


def replay(replayer, trace, opts):
    """RAP's JSON report of the trace's replay, and the retire items that
    hwprof-replay --check counts."""
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "replay.json")
        subprocess.run([replayer, trace, "report=/dev/null", "json=" + js] +
                       [f"{k}={v}" for k, v in opts.items()],
                       check=True, capture_output=True, timeout=300)
        rap = json.load(open(js))["models"]["rap"]
    out = subprocess.run([replayer, "--check", trace], check=True, capture_output=True,
                         text=True, timeout=300).stdout
    m = re.search(r", (\d+) retire items", out)
    return rap, int(m.group(1)) if m else 0


def check(run, host, replayer, work):
    fails = 0

    def ok(label, good, value):
        nonlocal fails
        fails += not good
        print(f"{'ok  ' if good else 'FAIL'} {host}: {label}: {value}")

    a, _, rap, _ = run("keep", OPTS)
    kept = inside(rap, a, a + 4095)
    ok("kept: RAP split inside page A", len(kept) > 1, len(kept))
    a, b, rap, unmapped = run("unmap", OPTS)
    gone, new = inside(rap, a, a + 4095), inside(rap, b, b + 4095)
    ok("the host reports the unmapped ranges", unmapped is not None and unmapped >= 1, unmapped)
    ok("unmapped: A is one range, its subtree folded", len(gone) == 1 and not any(gone), gone)
    ok("B split as A was", len(new) > 1, len(new))
    ok("the tree still sums to every instruction",
       sum(r["count"] for r in rap["ranges"]) == rap["stats"]["n"], rap["stats"]["n"])
    a, _, rap, _ = run("unmap", dict(OPTS, retire="off"))
    kept = inside(rap, a, a + 4095)
    ok("retire=off: A keeps its ranges", len(kept) > 1, len(kept))
    trace = os.path.join(work, "retire.hwpt")
    _, _, rap, unmapped = run("unmap", OPTS, record=trace)
    replayed, items = replay(replayer, trace, OPTS)
    ok("recorded: a retire item per unmapped range", unmapped is not None and items == unmapped,
       (items, unmapped))
    ok("recorded: the replay gives the run's RAP tree",
       replayed["ranges"] == rap["ranges"] and replayed["stats"] == rap["stats"],
       f'{len(replayed["ranges"])} ranges against {len(rap["ranges"])}')
    return fails == 0
