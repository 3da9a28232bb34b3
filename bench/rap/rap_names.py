#!/usr/bin/env python3
"""rap_names.py KEYS BINARY REPORT: which functions of BINARY the hot code
ranges of a rap_report --keys REPORT hold, for the reading of the picture
in docs/rap.md. KEYS is the PC file rap_report read (little-endian
uint64); functions are BINARY's symbols with sizes (nm -S, the dynamic
table when the binary is stripped); PCs inside no listed symbol count as
"(no symbol)": static functions of a stripped binary have none."""
import array
import bisect
import collections
import re
import subprocess
import sys


def symbols(binary):
    for dyn in ([], ["-D"]):
        out = subprocess.run(["nm", "--defined-only", "-S"] + dyn + [binary],
                             capture_output=True, text=True).stdout
        syms = sorted((int(p[0], 16), int(p[1], 16), p[3])
                      for p in (line.split() for line in out.splitlines())
                      if len(p) == 4 and p[2] in "Tt")
        if syms:
            return syms
    return []


def main(keys_path, binary, report):
    keys = array.array("Q")
    with open(keys_path, "rb") as f:
        keys.frombytes(f.read())
    if sys.byteorder != "little":
        keys.byteswap()
    counts = collections.Counter(keys)
    syms = symbols(binary)
    starts = [s[0] for s in syms]
    with open(report) as f:
        hot = [(int(m.group(1), 16), int(m.group(2), 16))
               for m in re.finditer(r"^  (0x[0-9a-f]+|0)-(0x[0-9a-f]+|0) depth",
                                    f.read(), re.M)]
    for lo, hi in hot:
        per, total = collections.Counter(), 0
        for k, c in counts.items():
            if lo <= k <= hi:
                total += c
                i = bisect.bisect_right(starts, k) - 1
                inside = i >= 0 and k < syms[i][0] + syms[i][1]
                per[syms[i][2] if inside else "(no symbol)"] += c
        top = ", ".join(f"{name} {100 * c / total:.0f}%"
                        for name, c in per.most_common(4)) if total else "-"
        print(f"{lo:#x}-{hi:#x}: {100 * total / len(keys):.2f}% of the PCs; {top}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
