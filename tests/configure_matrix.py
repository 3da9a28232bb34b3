#!/usr/bin/env python3
"""tests/configure_matrix.py MESON SOURCE_ROOT WORKDIR

Every build option (meson_options.txt) alone and in the combinations a
user reaches for: each configures, and the build it describes holds what
the option promises, read from `meson introspect`:

  -Dtests=false     no test registered anywhere (hosts' and benchmarks' too)
  -Dbench=false     no benchmark, no hwprof-bench
  -Dexamples=false  no host; hwprof-bench still built (it needs only the
                    hosts' shared code, examples/common)
  qemu_plugin / valgrind_tool disabled: no plugin, no tool

Two configurations also build: the demo's (-Dtests=false -Dbench=false)
hwprof-replay and hwprof-report, and -Dexamples=false's hwprof-bench, so a dependency the configure step
cannot see (a variable defined in a directory that was skipped) still
fails here. About a minute on an idle 2-core machine, mostly the builds."""
import json
import os
import shutil
import subprocess
import sys

meson, root, work = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
fails = 0


def fail(what, detail):
    global fails
    fails += 1
    print(f"FAIL {what}: {detail}")


def introspect(build, what):
    r = subprocess.run([meson, "introspect", build, what], capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


# name -> (options, expectations): targets that must and must not be
# defined, and whether any test / benchmark is registered.
matrix = {
    "no-tests": (["-Dtests=false"], {"tests": False, "has": ["hwprof-bench", "hwprof-report"]}),
    "no-bench": (["-Dbench=false"], {"benchmarks": False, "lacks": ["hwprof-bench"],
                                     "has": ["hwprof-report"]}),
    "no-examples": (["-Dexamples=false"], {"has": ["hwprof-bench"],
                                           "lacks": ["hwprof-report", "hwprof-replay", "minivm"]}),
    "no-qemu": (["-Dqemu_plugin=disabled"], {"lacks": ["hwprof-tcg", "hwprof-tcg-v4"]}),
    "no-valgrind": (["-Dvalgrind_tool=disabled"], {"lacks": ["hwprof-amd64-linux"]}),
    "demo": (["-Dtests=false", "-Dbench=false"],
             {"tests": False, "benchmarks": False, "has": ["hwprof-replay", "hwprof-report"],
              "build": ["hwprof-replay", "hwprof-report"]}),
    "bench-only": (["-Dtests=false", "-Dexamples=false"],
                   {"tests": False, "has": ["hwprof-bench"], "lacks": ["hwprof-report"],
                    "build": ["hwprof-bench"]}),
    "tests-only": (["-Dbench=false", "-Dexamples=false"],
                   {"benchmarks": False, "lacks": ["hwprof-bench", "hwprof-report", "hwx"]}),
    "library-only": (["-Dtests=false", "-Dbench=false", "-Dexamples=false"],
                     {"tests": False, "benchmarks": False, "lacks": ["hwx", "hwprof-bench"]}),
    "no-hosts-no-tests": (["-Dqemu_plugin=disabled", "-Dvalgrind_tool=disabled", "-Dtests=false"],
                          {"tests": False, "lacks": ["hwprof-tcg", "hwprof-amd64-linux"]}),
}

for name, (opts, want) in matrix.items():
    before = fails
    build = os.path.join(work, name)
    r = subprocess.run([meson, "setup", build, root] + opts, capture_output=True, text=True)
    if r.returncode != 0:
        err = [l for l in (r.stdout + r.stderr).splitlines() if "ERROR" in l]
        fail(f"{name} {' '.join(opts)}: configure", err[-1] if err else f"exit {r.returncode}")
        continue
    # name -> its output, relative to the build dir (ninja's target name)
    targets = {t["name"]: os.path.relpath(t["filename"][0], build)
               for t in introspect(build, "--targets") or []}
    for t in want.get("has", []):
        if t not in targets:
            fail(f"{name}: target {t}", "missing")
    for t in want.get("lacks", []):
        if t in targets:
            fail(f"{name}: target {t}", "defined, but its option is off")
    for kind in ("tests", "benchmarks"):
        if want.get(kind, True) is False:
            listed = introspect(build, "--" + kind)
            if listed is None or listed:
                fail(f"{name}: {kind}", f"{len(listed or [])} registered (want none)")
    for t in want.get("build", []):
        if t not in targets:
            continue
        r = subprocess.run(["ninja", "-C", build, "-j", "2", targets[t]],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{name}: ninja {t}", (r.stdout + r.stderr).strip().splitlines()[-1])
    print(f"{'FAIL' if fails > before else 'ok  '} {name} {' '.join(opts)}")

shutil.rmtree(work, ignore_errors=True)
print(f"{len(matrix)} configurations, {fails} failures")
sys.exit(1 if fails else 0)
