#!/usr/bin/env python3
"""Real programs under the hwprof Valgrind tool, made repeatable: the
generated inputs and the run recipe shared by the real-program tests
(check_vg_program.py), the build's real-trace fixture ("the test
suite's real-trace fixtures come from this tool") and bench/real_trace.sh.

  vg_fixture.py input FILE BYTES [SEED]
      word salad from a fixed seed: compressible like text, the same
      bytes on every machine (Python's random is specified to repeat).
  vg_fixture.py run VALGRIND LIBDIR WORKDIR [--tool-option ...] -- PROG ARGS
      PROG under the tool as pid 2 of a fresh user + PID namespace (when
      unshare(1) allows it), in the fixed environment of guest_env(), with
      the working directory and VALGRIND_LIB of guest_dir(); PROG's output
      goes to WORKDIR/<PROG's basename>.out, its exit status is the
      script's.
  vg_fixture.py fixture VALGRIND LIBDIR OUTDIR
      the Meson fixture: gzip -n -6 of FIXTURE_BYTES (128 KiB) of text,
      recorded (record=) in the same run that makes the live text and JSON
      reports with every model and exact=on (MODEL_OPTS): OUTDIR/
      gzip-fixture.{in,hwpt,txt,json} (the input is a copy: gzip reads it
      from guest_dir()). check_vg_replay.py replays it.
"""
import hashlib
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "common"))
from hwx_thresholds import guest_env  # noqa: E402  shared with the QEMU tests

# 128 KiB, as in the gzip test: 17.5 M records, 70 MB of trace, about
# 3 s under the tool with exact=on on this machine. At 64 KiB ProfileMe's
# envelope fraction sits at the 0.80 limit (0.786 to 0.814 as the
# size of the environment shifts the stream by a few instructions); at
# 128 KiB it was 0.741-0.744 under the same shifts, and is 0.759 in the
# fixed environment of guest_env() and guest_dir().
FIXTURE_BYTES = 131072
# Every model with exact ground truth, at the sizes the accuracy
# thresholds are stated for; the real-program tests (check_vg_program.py)
# and the fixture both run with these.
MODEL_OPTS = ["models=all", "exact=on", "rap_kb=8", "rap_eps=0.1", "hpt=512x4"]


def text_input(path, size, seed=9):
    r = random.Random(seed)
    words = ["".join(r.choice("abcdefghijklmnopqrstuvwxyz")
                     for _ in range(r.randint(2, 9))) for _ in range(600)]
    out, n = [], 0
    while n < size:
        w = r.choice(words) + (" " if r.random() < 0.9 else "\n")
        out.append(w)
        n += len(w)
    with open(path, "w") as f:
        f.write("".join(out)[:size])


def guest_dir(libdir):
    """/tmp/hwvg-<12 hex digits of the launcher dir's path>, holding `lib`
    (a symlink to the launcher dir), `cwd` (an empty working directory:
    python3 -c lists its cwd on import) and the generated inputs. The
    paths a guest sees (VALGRIND_LIB, hence LD_PRELOAD; its cwd; its
    input's name) then have the same length in every build directory:
    with the launcher dir's own path, python3.11's ProfileMe envelope
    fraction was 0.761 from a 36-byte path and 0.811 from a 15-byte one.
    One directory per launcher dir, so concurrent builds do not share it;
    runs of one build may (every file in it is written atomically)."""
    real = os.path.realpath(libdir)
    d = "/tmp/hwvg-" + hashlib.sha1(real.encode()).hexdigest()[:12]
    os.makedirs(os.path.join(d, "cwd"), exist_ok=True)
    link = os.path.join(d, "lib")
    if not (os.path.islink(link) and os.readlink(link) == real):
        tmp = f"{link}.{os.getpid()}"
        os.symlink(real, tmp)
        os.replace(tmp, link)
    return d


def guest_input(libdir, name, size):
    """NAME.in, SIZE bytes of text_input(), in guest_dir(libdir)."""
    path = os.path.join(guest_dir(libdir), name + ".in")
    text_input(f"{path}.{os.getpid()}", size)
    os.replace(f"{path}.{os.getpid()}", path)
    return path


def pid_namespace():
    """The command prefix that runs a program as pid 2 of a new user + PID
    namespace (glibc caches the pid and loads it), or [] where unshare is
    not allowed."""
    pidns = ["unshare", "-U", "-r", "--pid", "--fork", "sh", "-c", '"$@"; exit $?', "sh"]
    if subprocess.run(pidns + ["true"], capture_output=True).returncode != 0:
        return []
    return pidns


def run_native(libdir, prog, timeout=60):
    """PROG without the tool, where run_tool runs it; its stdout."""
    return subprocess.run(prog, stdin=subprocess.DEVNULL, capture_output=True,
                          env=guest_env(), cwd=os.path.join(guest_dir(libdir), "cwd"),
                          timeout=timeout).stdout


def run_tool(valgrind, libdir, tool_opts, prog, timeout=600):
    """PROG under the tool (see `run` above); returns the CompletedProcess."""
    d = guest_dir(libdir)
    # --vgdb=no: no gdbserver FIFOs, which are named after the pid; every
    # run here is pid 2, and concurrent runs would share the names.
    cmd = pid_namespace() + [valgrind, "--tool=hwprof", "-q", "--vgdb=no"] + tool_opts + prog
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                          env=guest_env(VALGRIND_LIB=os.path.join(d, "lib")),
                          cwd=os.path.join(d, "cwd"), timeout=timeout)


def fixture(valgrind, libdir, out):
    os.makedirs(out, exist_ok=True)
    base = os.path.join(os.path.abspath(out), "gzip-fixture")
    inp = guest_input(libdir, "gzip-fixture", FIXTURE_BYTES)
    shutil.copyfile(inp, base + ".in")
    opts = ["--" + o for o in MODEL_OPTS] + [
        f"--record={base}.hwpt", f"--report={base}.txt", f"--json={base}.json"]
    r = run_tool(valgrind, libdir, opts, ["/usr/bin/gzip", "-n", "-c", "-6", inp])
    if r.returncode != 0:
        sys.exit(f"gzip fixture: the tool failed ({r.returncode}): {r.stderr.decode()[-800:]}")


def main(argv):
    if len(argv) >= 3 and argv[0] == "input":
        text_input(argv[1], int(argv[2]), int(argv[3]) if len(argv) > 3 else 9)
    elif len(argv) >= 5 and argv[0] == "run" and "--" in argv:
        dd = argv.index("--")
        r = run_tool(argv[1], argv[2], argv[4:dd], argv[dd + 1:])
        os.makedirs(argv[3], exist_ok=True)
        with open(os.path.join(argv[3], os.path.basename(argv[dd + 1]) + ".out"), "wb") as f:
            f.write(r.stdout)
        sys.stderr.write(r.stderr.decode())
        return r.returncode
    elif len(argv) == 4 and argv[0] == "fixture":
        fixture(*argv[1:])
    else:
        sys.exit(__doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
