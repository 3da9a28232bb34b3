#!/usr/bin/env python3
"""examples/report/tests/split_trace.py TRACE K OUT_PREFIX

Splits a recorded trace (docs/trace-format.md) into K traces of
consecutive chunks, OUT_PREFIX.0000.trc ... : every chunk decodes on its
own (its delta state starts at 0), so a piece is the header, its chunks
byte for byte and an end marker with its record count. Replaying the
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
    """(start, end, records) of every chunk."""
    if b[:8] != b"HWPTRACE" or struct.unpack_from("<II", b, 8) != (1, 0):
        sys.exit("split_trace: not a version 1 hwprof trace")
    at, out = 16, []
    while b[at] == 0x43:  # 'C'
        start = at
        _, at = varint(b, at + 1)
        nrec, at = varint(b, at)
        nbytes, at = varint(b, at)
        at += 4 + nbytes
        out.append((start, at, nrec))
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
