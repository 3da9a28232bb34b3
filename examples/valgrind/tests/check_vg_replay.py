#!/usr/bin/env python3
"""The build's real-trace fixture (vg_fixture.py: gzip -n -6 of 128 KiB,
recorded by the Valgrind tool in the same run that wrote its live reports)
through hwprof-replay:

  (a) replaying the trace with the live run's options (MODEL_OPTS) gives
      the live report byte for byte: the text report is the tool's own
      section followed by exactly the replay's report, and the JSON's
      "session" object is exactly the replay's JSON. What differs, and
      why: the tool's section (VEX/bytes cross-check, determinism
      counters, loads with no value view) describes translation and
      syscalls, which a trace does not hold; the replayer's last line is
      its own timing;
  (b) the accuracy thresholds (hwx_thresholds.check_report) on
      the replayed JSON;
  (c) the fixture cut at several offsets (inside the header, a chunk
      header, a checksum, a payload, at a chunk boundary, inside and
      before the end marker) is rejected: `--check` exits 1 and names the
      cut as the offset (the first byte that is missing) and the records
      of the whole chunks before it as delivered;
  (d) `--dump pc|value|addr` writes one little-endian uint64 per record
      of the right classes: as many as the live run counted, and the
      first chunk's keys equal those the independent Python reader
      (examples/qemu/tests/hwtrace.py) decodes.

usage: check_vg_replay.py REPLAY FIXTURE_BASE WORKDIR
  (FIXTURE_BASE.hwpt/.txt/.json from vg_fixture.py)"""
import itertools
import json
import os
import re
import shutil
import struct
import subprocess
import sys

from hwx_thresholds import Checks, check_report  # examples/common, on PYTHONPATH
from vg_fixture import MODEL_OPTS

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "qemu", "tests"))
import hwtrace  # noqa: E402  the reader written from docs/trace-format.md

replay, base, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
trace = base + ".hwpt"
live_txt = open(base + ".txt", "rb").read()
live_json = open(base + ".json", "rb").read()
live = json.loads(live_json)
check = Checks()


# (a) the same stream gives the same report.
rep_json_path = os.path.join(work, "replay.json")
r = subprocess.run([replay, trace] + MODEL_OPTS + [f"json={rep_json_path}"],
                   capture_output=True, timeout=300)
check("replay exits 0", r.returncode == 0, r.stderr.decode()[-400:])
body = r.stdout
timing = r.stderr.rstrip(b"\n").rpartition(b"\n")[2]
n = live["stream"]["instructions"]
check("replayer's timing line goes to stderr, over every record",
      re.fullmatch(rb"replay: (\d+) records in [0-9.]+ s CPU \([0-9.]+ ns/record\)", timing)
      is not None and int(timing.split()[1]) == n, timing.decode())
host_part = live_txt[:len(live_txt) - len(body)]
check("live text report = tool section + the replay's report, byte for byte",
      live_txt.endswith(body) and host_part.startswith(b"== hwprof: Valgrind host ==\n")
      and b"== hwprof report ==" not in host_part, (len(live_txt), len(body)))
rep_json = open(rep_json_path, "rb").read()
check("live JSON's session object = the replay's JSON, byte for byte",
      live_json.endswith(b',"session":' + rep_json.rstrip(b"\n") + b"\n}\n"),
      (len(live_json), len(rep_json)))

# (b) the accuracy thresholds hold on the replayed stream.
check_report(json.loads(rep_json), check)

# (c) truncations. Chunk boundaries come from reading the headers here
# (docs/trace-format.md), not from the reader under test.
data = open(trace, "rb").read()
chunks = []  # (start, payload start, end, records)
off = 16
while data[off] in b"CR":
    start = off
    _, off = hwtrace._varint(data, off + 1, len(data))
    if data[start] == ord("R"):  # a retire item (the run unmapped code)
        _, off = hwtrace._varint(data, off, len(data))
        _, off = hwtrace._varint(data, off, len(data))
        continue
    nrec, off = hwtrace._varint(data, off, len(data))
    nbytes, off = hwtrace._varint(data, off, len(data))
    chunks.append((start, off + 4, off + 4 + nbytes, nrec))
    off += 4 + nbytes
end_at = off  # the 'E' marker
check("fixture has several chunks and ends with the end marker",
      len(chunks) > 2 and data[end_at] == ord("E"), len(chunks))
c0, c1 = chunks[0], chunks[len(chunks) // 2]
cuts = sorted({0, 10, 16, c0[0] + 1, c0[1] - 2, (c0[1] + c0[2]) // 2, c0[2],
               (c1[1] + c1[2]) // 2, end_at, len(data) - 1}, reverse=True)
cut_file = os.path.join(work, "cut.hwpt")
shutil.copyfile(trace, cut_file)
for cut in cuts:  # shrinking one copy: no rewrite of 70 MB per cut
    os.truncate(cut_file, cut)
    whole = sum(c[3] for c in chunks if c[2] <= cut)
    r = subprocess.run([replay, "--check", cut_file], capture_output=True, timeout=60)
    out = r.stdout.decode().strip()
    m = re.match(r"offset (\d+): (.*?)(?: \(after (\d+) records\))?$", out)
    check(f"cut at {cut}: rejected at offset {cut} after {whole} records",
          r.returncode == 1 and m is not None and int(m.group(1)) == cut
          and re.search("truncated|shorter than", m.group(2)) is not None
          and int(m.group(3) or 0) == whole, out)
os.unlink(cut_file)

# (d) --dump for bench_rap --keys.
first = list(itertools.islice(hwtrace.records(data), chunks[0][3]))
recs = live["stream"]["records"]
for key, classes, field in (("pc", None, 1), ("value", ("load",), 4),
                            ("addr", ("load", "store"), 3)):
    out = os.path.join(work, key + ".keys")
    r = subprocess.run([replay, "--dump", key, trace, out], capture_output=True, timeout=120)
    size = os.path.getsize(out) if os.path.exists(out) else -1
    want = n if classes is None else sum(recs[c] for c in classes)
    check(f"--dump {key}: one uint64 per record of its classes", r.returncode == 0 and
          size == 8 * want, (size // 8, want))
    expect = [rec[field] for rec in first
              if classes is None or hwtrace.CLS[rec[5]] in classes]
    with open(out, "rb") as f:
        got = list(struct.unpack(f"<{len(expect)}Q", f.read(8 * len(expect))))
    check(f"--dump {key}: first chunk's keys as the Python reader decodes them",
          got == expect and len(expect) > 0, len(expect))
    os.unlink(out)
check.exit()
