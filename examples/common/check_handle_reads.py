#!/usr/bin/env python3
"""No code outside include/ and tests/ reads or writes a member of a model
handle (the contract: every member of hwp_X is private, exposed only so
callers can allocate it statically). Uses clang's AST: each host source is
compiled with -Xclang -ast-dump=json and every MemberExpr whose base
expression has a model handle type, written in a file outside include/
(macros defined in include/, such as hwp_why(), are the library's own), is
listed as FILE:LINE:COL handle.member.

usage: check_handle_reads.py [--root DIR] [FILE.c ...]
  default files: every .c under examples/ and bench/ (tests/ is exempt)
exit 0 when none is found, 1 otherwise (the list is printed), 2 on error.
"""
import json
import glob
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests"))
import components  # noqa: E402  (the component list, HWP_COMPONENTS)

# Every component's handle (HWP_COMPONENTS) and the cost shim's.
HANDLES = {"hwp_" + c for c, _, _ in components.rows()} | {"hwp_cost"}
# hwp_why(x) is (x)->head.why: the status head is the one documented member.
ALLOWED_MEMBERS = {"head"}

args = sys.argv[1:]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if args[:1] == ["--root"]:
    root, args = os.path.abspath(args[1]), args[2:]
inc = os.path.join(root, "include") + os.sep


def sources():
    for top in ("examples", "bench"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith(".c"):
                    continue
                if os.path.basename(d) == "lua" and not lua_src():
                    print("skipped examples/lua/%s: Lua's source is not fetched "
                          "(examples/lua/build.sh)" % f, file=sys.stderr)
                    continue
                yield os.path.join(d, f)


def lua_src():
    """Lua's headers, where examples/lua/build.sh fetched them ([] if not)."""
    cache = os.environ.get("HWPROF_CACHE", os.path.expanduser("~/.cache/hwprof"))
    return sorted(glob.glob(os.path.join(cache, "lua5.4", "lua5.4-5.4.*", "src")))[:1]


def multiarch_dir():
    """Debian's luaconf.h includes a header its build writes; so do we."""
    d = os.path.join(tempfile.gettempdir(), "hwprof-check-lua")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "lua5.4-deb-multiarch.h"), "w") as f:
        f.write('#define DEB_HOST_MULTIARCH "x86_64-linux-gnu"\n')
    return d


def flags(path):
    rel = os.path.relpath(path, root)
    f = ["-fsyntax-only", "-std=gnu11", "-w", "-I" + os.path.join(root, "include"),
         "-I" + os.path.join(root, "examples", "common"), "-I" + os.path.join(root, "tests"),
         "-I" + os.path.join(root, "examples", "qemu"),
         "-I" + os.path.dirname(path), "-I" + os.path.join(os.path.dirname(path), ".."),
         "-DMINIVM_SRC=\"\"", "-D_GNU_SOURCE"]
    if rel.startswith(os.path.join("examples", "lua")):
        f += ["-I" + d for d in lua_src()] + ["-I" + multiarch_dir()]
    if rel.startswith(os.path.join("examples", "valgrind")) and "tests" not in rel:
        f += ["-I/usr/include/valgrind", "-DVGA_amd64=1", "-DVGO_linux=1",
              "-DVGP_amd64_linux=1", "-DVGPV_amd64_linux_vanilla=1"]
    return f


def base_type(qual):
    t = re.sub(r"\b(const|volatile|struct)\b", " ", qual)
    t = t.replace("*", " ").strip()
    return t.split()[0] if t.split() else ""


class Walker:
    def __init__(self):
        self.file = ""
        self.line = 0
        self.found = []

    # clang prints a location's file and line only when they differ from
    # the previous location's: follow them in output order.
    def bare(self, loc):
        if "file" in loc:
            self.file = loc["file"]
        if "line" in loc:
            self.line = loc["line"]
        return (self.file, self.line, loc.get("col"))

    def location(self, loc):
        """Returns (expansion (file, line, col), spelling file)."""
        if not isinstance(loc, dict) or not loc:
            return None, None
        if "spellingLoc" in loc or "expansionLoc" in loc:
            sp = self.bare(loc["spellingLoc"]) if "spellingLoc" in loc else None
            ex = self.bare(loc["expansionLoc"]) if "expansionLoc" in loc else sp
            return ex, sp[0] if sp else ex[0]
        b = self.bare(loc)
        return b, b[0]

    def node(self, n, line_hint):
        where = None
        spelled = None
        for k, v in n.items():
            if k == "loc":
                self.location(v)
            elif k == "range":
                where, spelled = self.location(v.get("begin", {}))
                self.location(v.get("end", {}))
            elif k == "inner":
                if n.get("kind") == "MemberExpr" and v:
                    self.member(n, v[0], where, spelled)
                for c in v:
                    if isinstance(c, dict):
                        self.node(c, line_hint)

    def member(self, n, base, where, spelled):
        t = base_type(base.get("type", {}).get("qualType", ""))
        if t not in HANDLES or n.get("name") in ALLOWED_MEMBERS or not where:
            return
        f = os.path.abspath(where[0]) if where[0] else ""
        if not f or f.startswith(inc) or (spelled and os.path.abspath(spelled).startswith(inc)):
            return
        self.found.append(f"{os.path.relpath(f, root)}:{where[1]}:{where[2]} {t}.{n.get('name')}")


FILE_RE = re.compile(r'"file": "((?:[^"\\]|\\.)*)"')
LINE_RE = re.compile(r'"line": (\d+)')
INCLUDED_RE = re.compile(r'"includedFrom": \{[^}]*\}')


def check(path):
    p = subprocess.run(["clang", "-Xclang", "-ast-dump=json"] + flags(path) + [path],
                       capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout:
        return None, p.stderr.strip().splitlines()[:3]
    w = Walker()
    # The top-level declarations one at a time (clang prints each inner
    # element of the translation unit at four spaces): those that only
    # mention files in include/ or system headers, or hold no MemberExpr,
    # just move the current-file state (clang prints a location's file
    # only when it differs from the previous location's).
    lines = p.stdout.split("\n")
    chunks, cur = [], []
    for ln in lines[1:]:
        if ln.startswith("    {"):
            cur = [ln]
        elif cur:
            cur.append(ln)
            if ln.startswith("    }"):
                chunks.append("\n".join(cur).rstrip(","))
                cur = []
    for ch in chunks:
        # "includedFrom" names the includer, not the location's file.
        files = FILE_RE.findall(INCLUDED_RE.sub("", ch))
        start = w.file
        touches = any(not os.path.abspath(f).startswith(inc) and not f.startswith("/usr/")
                      for f in [start] + files if f)
        if '"MemberExpr"' in ch and touches:
            w.node(json.loads(ch), None)
        else:
            if files:
                w.file = json.loads('"' + files[-1] + '"')
            lines_ = LINE_RE.findall(ch)
            if lines_:
                w.line = int(lines_[-1])
    return w.found, None


files = args or list(sources())
total, errors = [], 0
for f in files:
    found, err = check(os.path.abspath(f))
    if found is None:
        errors += 1
        print(f"error: {os.path.relpath(f, root)}: {' / '.join(err)}", file=sys.stderr)
        continue
    total += found
for line in total:
    print(line)
print(f"{len(total)} handle member accesses outside include/ and tests/ "
      f"in {len(files)} files ({errors} not compiled)", file=sys.stderr)
sys.exit(2 if errors else 1 if total else 0)
