#!/usr/bin/env python3
"""tests/suite_targets.py BUILDDIR SUITE...: the ninja targets that the
tests of the given suites need (their executables and declared depends),
one per line, so a pass that runs only those suites builds only them."""
import json, os, subprocess, sys


def introspect(builddir, what):
    out = subprocess.check_output(["meson", "introspect", "--" + what, builddir])
    return json.loads(out)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: suite_targets.py BUILDDIR SUITE...")
    builddir, suites = sys.argv[1], set(sys.argv[2:])
    files = {t["id"]: t["filename"] for t in introspect(builddir, "targets")}
    wanted = set()
    for test in introspect(builddir, "tests"):
        # meson names a suite "project:suite"; match on the part after ':'
        if suites & {s.split(":")[-1] for s in test["suite"]}:
            for dep in test["depends"]:
                for f in files.get(dep, []):
                    wanted.add(os.path.relpath(f, builddir))
    print("\n".join(sorted(wanted)))


if __name__ == "__main__":
    main()
