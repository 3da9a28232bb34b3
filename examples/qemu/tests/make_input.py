#!/usr/bin/env python3
"""Deterministic, text-like input for the compressors the tests and the demo
run: words from a fixed vocabulary drawn with a seeded LCG, so gzip and
bzip2 see realistic redundancy. usage: make_input.py OUT BYTES"""
import sys

out, size = sys.argv[1], int(sys.argv[2])
words = ("the of and to in is that for it as was with be by on not he this "
         "are or his from at which but have an they you were her she there "
         "profile branch path range sample value load store cache miss hot "
         "table counter interrupt hardware software program phase").split()
state, parts, n = 12345, [], 0
while n < size:
    state = (state * 6364136223846793005 + 1442695040888963407) % 2**64
    w = words[(state >> 33) % len(words)]
    if (state >> 20) % 13 == 0:
        w += ".\n"
    parts.append(w)
    n += len(w) + 1
open(out, "w").write(" ".join(parts)[:size])
