#!/usr/bin/env python3
"""The replayer refuses bad options and unwritable reports before it reads
the trace, exits non-zero when a report cannot be written completely, and
never leaves a partial report (or basic-block vectors) behind.

usage: check_replay_errors.py REPLAY MAKE_TRACE WORKDIR
"""
import os
import resource
import signal
import subprocess
import sys

replay, make_trace, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
trace = os.path.join(work, "small.hwpt")
subprocess.run([make_trace, trace, "200000"], check=True)
fails = 0


def check(name, ok, detail=""):
    global fails
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    fails += 0 if ok else 1


def run(*opts, limit=None):
    def pre():
        if limit is not None:  # writes past `limit` bytes fail with EFBIG
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return subprocess.run([replay, trace] + list(opts), capture_output=True,
                          timeout=120, preexec_fn=pre)


def leftovers(path):
    d, base = os.path.split(path)
    return [f for f in os.listdir(d) if f.startswith(base)]


# Refused before the trace is read: exit 2, the option named.
for opts, want in ((["json=" + os.path.join(work, "no-such-dir", "r.json")], b"json="),
                   (["report=" + os.path.join(work, "no-such-dir", "r.txt")], b"report="),
                   (["report=" + work], b"is a directory"),
                   (["models=coproc", "coproc_slots=3"], b"slots"),
                   (["exact=on", "exact_mb=65536"], b"exact_mb"),
                   (["models="], b"models"),
                   (["rap_kb=abc"], b"rap_kb: expected an integer"),
                   (["top=10x"], b"top: expected an integer")):
    r = run(*opts)
    check(f"{' '.join(opts)}: refused at start", r.returncode == 2 and want in r.stderr
          and r.stdout == b"", (r.returncode, r.stderr[-300:]))

# Zero keeps the default.
r = run("models=rap+path", "rap_kb=0", "hpt=0x0")
check("rap_kb=0 hpt=0x0 run", r.returncode == 0, r.stderr[-300:])

# A device that refuses writes: an error, not exit 0.
for opt in ("report=/dev/full", "json=/dev/full"):
    r = run("models=all", opt)
    check(f"{opt}: non-zero exit, reason given", r.returncode == 3 and b"/dev/full" in r.stderr
          and b"No space left" in r.stderr, (r.returncode, r.stderr[-300:]))

# A report is complete or absent: with file writes capped at 4 KiB the
# JSON (larger) fails, and neither it nor a temporary file is left.
js = os.path.join(work, "capped.json")
txt = os.path.join(work, "capped.txt")
for p in (js, txt):
    if os.path.exists(p):
        os.unlink(p)
r = run("models=all", "json=" + js, "report=" + txt, limit=4096)
check("capped JSON: non-zero exit", r.returncode == 3, (r.returncode, r.stderr[-300:]))
check("capped JSON: no partial file, no temporary", leftovers(js) == [], leftovers(js))

# A good run: reports complete, the timing line on stderr, not in a report.
r = run("models=all", "json=" + js, "report=" + txt)
check("good run exits 0", r.returncode == 0, r.stderr[-300:])
text = open(txt, "rb").read() if os.path.exists(txt) else b""
check("text report holds no timing line", text.startswith(b"== hwprof report ==")
      and b"ns/record" not in text, text[-200:])
check("timing line on stderr", b"ns/record" in r.stderr, r.stderr[-200:])
check("JSON report complete", open(js, "rb").read().endswith(b"}\n") if os.path.exists(js)
      else False)
check("no temporary files left", sorted(leftovers(js) + leftovers(txt)) ==
      sorted([os.path.basename(js), os.path.basename(txt)]), leftovers(js) + leftovers(txt))
# bbv=: a vCPU's vectors in FILE.n, each complete; an exit after the first
# vCPU opened its vectors (the second beyond the replayer's 256) leaves
# neither the vectors nor their temporary FILE.tmp.PID.
bbv = os.path.join(work, "two.bbv")
for v, rc, names in ((1, 0, ["two.bbv", "two.bbv.1"]), (256, 1, [])):
    two = os.path.join(work, f"two{v}.hwpt")
    subprocess.run([make_trace, "--vcpu2", str(v), two, "20000"], check=True)
    for f in leftovers(bbv):
        os.unlink(os.path.join(work, f))
    r = subprocess.run([replay, two, "models=rap", "bbv=" + bbv, "bbv_interval=1000"],
                       capture_output=True, timeout=120)
    check(f"bbv= with vCPUs 0 and {v}: exit {rc}", r.returncode == rc and
          (rc == 0 or b"vCPU 256 beyond 256" in r.stderr), (r.returncode, r.stderr[-300:]))
    check(f"bbv= with vCPUs 0 and {v}: files {names}", sorted(leftovers(bbv)) == names,
          leftovers(bbv))
print(f"{fails} failed")
sys.exit(1 if fails else 0)
