#!/usr/bin/env python3
"""The two online phase detectors compared at an equal false-positive
rate: the fair form of Vaswani et al.'s comparison (sec. 8.3, Fig. 19
sweeps the path detector's threshold; each detector has its own best
threshold, so a single shared threshold compares two operating points).

  bench/pathprof/phase_sweep.py BUILD INTERVAL NAME...

For each program (BUILD/corpus/NAME.trace, with the reference phase ids
BUILD/corpus/NAME.INTERVAL.ref that bench/pathprof/corpus_phase.sh
writes) phase_score replays the trace once with both detectors (equal
hardware budget) at every threshold of SWEEP (% of the interval). Each
detector's (false positives, sensitivity) points, made monotone (the
best sensitivity reached at or below a false-positive rate), give its
sensitivity at the false-positive rates of FP_AT. Prints one Markdown
row per program and detector.
"""
import os
import re
import subprocess
import sys

SWEEP = [5, 10, 15, 20, 30, 40, 50, 60, 80, 100, 130, 160, 200]
FP_AT = [5, 10, 20, 30]


def best_at(points, fp):
    """The highest sensitivity among thresholds whose false-positive rate
    is at most fp (None if every threshold flags more)."""
    s = [sens for f, sens in points if f <= fp]
    return max(s) if s else None


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    build, interval, names = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    tool = os.path.join(build, "bench", "pathprof", "phase_score")
    cells = " | ".join(f"sensitivity at <= {f}% false pos" for f in FP_AT)
    print(f"| program | detector | {cells} |")
    print("| --- " * (2 + len(FP_AT)) + "|")
    for name in names:
        w = os.path.join(build, "corpus")
        out = subprocess.run([tool, f"{w}/{name}.trace", interval, f"{w}/{name}.{interval}.ref",
                              ",".join(map(str, SWEEP))], check=True, capture_output=True,
                             text=True).stdout
        pts = {"path": [], "bbv": []}
        for m in re.finditer(r"^(path|bbv) .*?sensitivity\s+([\d.]+)\s+false pos\s+([\d.]+)",
                             out, re.M):
            pts[m.group(1)].append((float(m.group(3)), float(m.group(2))))
        if len(pts["path"]) != len(SWEEP) or len(pts["bbv"]) != len(SWEEP):
            raise RuntimeError(f"{name}: phase_score printed {out[-300:]}")
        for det in ("path", "bbv"):
            row = [best_at(pts[det], f) for f in FP_AT]
            txt = " | ".join("-" if v is None else f"{v:.1f}" for v in row)
            print(f"| {name} | {det} | {txt} |", flush=True)


if __name__ == "__main__":
    main()
