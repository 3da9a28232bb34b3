"""Code that is gone, checked the same way under both hosts (qemu/retire,
host/valgrind_retire): examples/qemu/tests/guest_jit.c writes loops into
page A, runs them, then unmaps A and runs the same loops from page B.
Each host runs it with RAP alone and a tree fine enough to split inside a
page, twice: with "keep" (A stays mapped) RAP holds several ranges inside
A; without it, the host reports the unmapped ranges, RAP's ranges inside
A fold into one (the page's own, with no child inside A), B's are split
as A's were, and the tree still sums to every instruction.

A host's wrapper passes run(mode) -> (a, b, rap, unmapped): the pages'
addresses the guest printed, RAP's JSON report and the number of
unmapped ranges the host reports (None when it reports none)."""

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


def check(run, host):
    fails = 0

    def ok(label, good, value):
        nonlocal fails
        fails += not good
        print(f"{'ok  ' if good else 'FAIL'} {host}: {label}: {value}")

    a, _, rap, _ = run("keep")
    kept = inside(rap, a, a + 4095)
    ok("kept: RAP split inside page A", len(kept) > 1, len(kept))
    a, b, rap, unmapped = run("unmap")
    gone, new = inside(rap, a, a + 4095), inside(rap, b, b + 4095)
    ok("the host reports the unmapped ranges", unmapped is not None and unmapped >= 1, unmapped)
    ok("unmapped: A is one range, its subtree folded", len(gone) == 1 and not any(gone), gone)
    ok("B split as A was", len(new) > 1, len(new))
    ok("the tree still sums to every instruction",
       sum(r["count"] for r in rap["ranges"]) == rap["stats"]["n"], rap["stats"]["n"])
    return fails == 0
