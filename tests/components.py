#!/usr/bin/env python3
"""tests/components.py: the component list of include/hwprof/cost.h
(HWP_COMPONENTS) for the build and the scripts, which cannot read C.

  components.py --headers      the headers, once each, in the list's order
  components.py --components   the C prefixes
  components.py --models       the models' prefixes (MODEL rows), whose
                               host adapters are examples/common/hwx_<c>.c
  components.py --fuzz         the fuzz targets: name|defines: sources
                               (tests/fuzz/build.sh's table, and Meson's
                               replay tests)
  components.py --check        every component has what the list implies
                               (the test compile/components): the umbrella
                               includes its header, the header writes its
                               envelope, it has a page, a mention in
                               docs/ARCHITECTURE.md, a conformance file,
                               fuzz targets with their sources and seeds,
                               and each model its host adapter

The C consumers (cost.h's models, the hosts' adapter registry, the report
tool's loader, hwprof-bench, the conformance driver, tests/doc_fields.c,
tests/fuzz/make_corpus.c) expand HWP_COMPONENTS themselves, and
examples/common/check_handle_reads.py imports rows() from here.

A component's fuzz targets follow from the list: "<c>", the shared engine
on its conformance row (tests/fuzz/fuzz_<c>.c with
tests/conformance/<header>.c), and "json_<c>", its readers on raw input
(tests/<header>/fuzz_<c>_json.c if the component has its own, else
tests/fuzz/fuzz_json.c on the conformance row). The VM layer builds its
descs from the input itself: no conformance row, no json_ target.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def full_rows():
    """(c, header, envelope, kind, model) per row."""
    src = open(os.path.join(ROOT, "include", "hwprof", "cost.h")).read()
    m = re.search(r"#define HWP_COMPONENTS\(X\)((?:[^\n]*\\\n)*[^\n]*)", src)
    if not m:
        sys.exit("components.py: no HWP_COMPONENTS in include/hwprof/cost.h")
    out = re.findall(r'X\((\w+),\s*(\w+),\s*"(\w+)",\s*(MODEL|PART|LAYER),\s*(\w+)\)',
                     m.group(1))
    if not out:
        sys.exit("components.py: HWP_COMPONENTS has no rows")
    return out


def rows():
    """(c, header, envelope) per row."""
    return [r[:3] for r in full_rows()]


def models():
    return [r[0] for r in full_rows() if r[3] == "MODEL"]


def headers():
    seen = []
    for _, h, _ in rows():
        if h not in seen:
            seen.append(h)
    return seen


def fuzz_targets():
    conf = "tests/conformance"
    out = []
    for c, h, _ in rows():
        if c == "vm":
            out.append(f"{c}|: tests/fuzz/fuzz_{c}.c")
            continue
        out.append(f"{c}|: tests/fuzz/fuzz_{c}.c {conf}/{h}.c")
        own = f"tests/{h}/fuzz_{c}_json.c"
        if os.path.exists(os.path.join(ROOT, own)):
            out.append(f"json_{c}|: {own}")
        else:
            out.append(f"json_{c}|-DFZ_LIST=hwp_conf_{h} -DFZ_NAME={c}: "
                       f"tests/fuzz/fuzz_json.c {conf}/{h}.c")
    return out


def read(path):
    with open(os.path.join(ROOT, path)) as f:
        return f.read()


def check():
    """Each consumer names every component; returns the failures."""
    bad = []
    umbrella = read("include/hwprof/hwprof.h")
    arch = read("docs/ARCHITECTURE.md")
    for h in headers():
        if f'#include "{h}.h"' not in umbrella:
            bad.append(f"hwprof.h does not include {h}.h")
        if not os.path.exists(os.path.join(ROOT, "docs", h + ".md")):
            bad.append(f"no docs/{h}.md")
        if f"{h}.h" not in arch:
            bad.append(f"docs/ARCHITECTURE.md does not mention {h}.h")
        if h != "vm" and not os.path.exists(os.path.join(ROOT, "tests/conformance", h + ".c")):
            bad.append(f"no tests/conformance/{h}.c")
    for t in fuzz_targets():
        name = t.split("|")[0]
        for src in t.split(":", 1)[1].split():
            if not os.path.exists(os.path.join(ROOT, src)):
                bad.append(f"fuzz target {name}: no {src}")
        seeds = os.path.join(ROOT, "tests/fuzz/corpus", name)
        if not (os.path.isdir(seeds) and os.listdir(seeds)):
            bad.append(f"fuzz target {name}: no seeds in tests/fuzz/corpus/{name} "
                       "(tests/fuzz/make_corpus.sh)")
    for c in models():
        adapter = f"examples/common/hwx_{c}.c"
        if not os.path.exists(os.path.join(ROOT, adapter)) or \
                f"hwx_adapter hwx__adapter_{c} =" not in read(adapter):
            bad.append(f"model {c}: no hwx__adapter_{c} in {adapter}")
    for c, h, env in rows():
        if not re.search(rf'hwp_put_json_envelope\(w, "{env}"', read(f"include/hwprof/{h}.h")):
            bad.append(f"{h}.h writes no \"{env}\" envelope for {c}")
    return bad


def main(argv):
    if argv == ["--headers"]:
        print("\n".join(headers()))
    elif argv == ["--components"]:
        print("\n".join(c for c, _, _ in rows()))
    elif argv == ["--models"]:
        print("\n".join(models()))
    elif argv == ["--fuzz"]:
        print("\n".join(fuzz_targets()))
    elif argv == ["--check"]:
        bad = check()
        for b in bad:
            print("FAIL", b)
        print(f"{len(rows())} components, {len(bad)} gaps")
        return 1 if bad else 0
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
