#!/usr/bin/env python3
"""examples/report/tests/split_trace.py TRACE K OUT_PREFIX

Splits a recorded trace (docs/trace-format.md) into K traces of
consecutive chunks, OUT_PREFIX.0000.trc ... : every chunk decodes on its
own (its delta state starts at 0), so a piece is the header, its chunks
byte for byte (with the retire items among them, version 2) and an end
marker with its record count. Replaying the
pieces gives K reports of one program, as K runs of its parts would,
whose records add up to the trace's. Prints each piece's record count.
Refuses a trace with fewer chunks than K.
"""
import struct
import sys


def varint(b, at):
    v = shift = 0
    while True:
        c = b[at]
        at += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, at


def put_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def chunks(b):
    """(start, end, records) of every chunk; a retire item goes with the
    chunk before it, as a piece of 0 records if it is first."""
    if b[:8] != b"HWPTRACE" or struct.unpack_from("<II", b, 8) not in ((1, 0), (2, 0)):
        sys.exit("split_trace: not a version 1 or 2 hwprof trace")
    at, out = 16, []
    while b[at] in b"CR":
        start = at
        _, at = varint(b, at + 1)
        first, at = varint(b, at)
        second, at = varint(b, at)
        if b[start] == 0x52:  # 'R': vcpu, lo, span
            if out:
                out[-1] = (out[-1][0], at, out[-1][2])
            else:
                out.append((start, at, 0))
            continue
        at += 4 + second  # 'C': vcpu, nrec, nbytes, checksum, payload
        out.append((start, at, first))
    if b[at] != 0x45:  # 'E'
        sys.exit(f"split_trace: byte {at}: neither a chunk nor the end marker")
    return out


def main():
    path, k, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    b = open(path, "rb").read()
    c = chunks(b)
    if len(c) < k:
        sys.exit(f"split_trace: {path} has {len(c)} chunks, fewer than {k} pieces")
    for j in range(k):
        part = c[j * len(c) // k:(j + 1) * len(c) // k]
        n = sum(r for _, _, r in part)
        with open(f"{prefix}.{j:04d}.trc", "wb") as f:
            f.write(b[:16])
            for s, e, _ in part:
                f.write(b[s:e])
            f.write(b"E" + put_varint(n))
        print(n)


if __name__ == "__main__":
    main()
