#!/usr/bin/python3
"""Reference phases from exact basic-block vectors, clustered the way
SimPoint 3.0 does (Hamerly, Perelman, Lau and Calder, "SimPoint 3.0:
Faster and More Flexible Program Phase Analysis", JILP 2005).

  /usr/bin/python3 bench/pathprof/simpoint.py BBV_FILE OUT_IDS [--seed S]

BBV_FILE is in Valgrind exp-bbv's format (one line per interval,
"T:id:count :id:count ..."), as `hwprof-report --bbv` writes it. Steps,
with SimPoint 3.0's defaults:
  1. each interval's vector is normalised to sum 1 (SimPoint's frequency
     vectors), the last interval too (it is usually short: SimPoint
     weights it less, we keep it, it is one row of hundreds);
  2. a random linear projection to 15 dimensions (matrix entries uniform
     in [-1, 1]);
  3. k-means for k = 1..10, 5 random initialisations each (k samples
     drawn from the rows), at most 100 iterations, the run with the
     smallest distortion kept;
  4. the BIC of each k's clustering (Pelleg and Moore's X-means
     formula: a spherical Gaussian per cluster with one shared variance),
     and the smallest k whose BIC reaches 90% of the way from the
     smallest to the largest BIC.
OUT_IDS receives one phase id (the cluster) per interval, one per line.
A summary (intervals, the chosen k, each k's BIC) goes to stdout.
Needs numpy (Debian: python3-numpy); not part of the library or CI.
"""
import math
import sys

import numpy as np

DIMS, KMAX, INITS, ITERS, BIC_FRAC = 15, 10, 5, 100, 0.9


def read_bbv(path):
    rows, width = [], 0
    with open(path) as f:
        for no, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            if not line.startswith("T"):
                sys.exit(f"simpoint.py: {path}:{no}: a line must start with T")
            row = {}
            for cell in line[1:].split():
                parts = cell.split(":")
                if len(parts) != 3 or parts[0] != "":
                    sys.exit(f"simpoint.py: {path}:{no}: expected :id:count, got {cell!r}")
                bid, cnt = int(parts[1]), int(parts[2])
                if bid < 1 or cnt < 0:
                    sys.exit(f"simpoint.py: {path}:{no}: block id from 1, count >= 0")
                row[bid - 1] = row.get(bid - 1, 0) + cnt
                width = max(width, bid)
            rows.append(row)
    if not rows:
        sys.exit(f"simpoint.py: {path}: no intervals")
    return rows, width


def project(rows, width, rng):
    """Each row normalised to sum 1, times a width x 15 matrix of uniform
    [-1, 1] entries; rows stay sparse (a compiler has ~10^5 blocks)."""
    proj = rng.uniform(-1.0, 1.0, size=(width, DIMS))
    y = np.zeros((len(rows), DIMS))
    for i, row in enumerate(rows):
        if not row:
            continue
        ids = np.fromiter(row.keys(), dtype=np.int64)
        cnt = np.fromiter(row.values(), dtype=np.float64)
        y[i] = (cnt / cnt.sum()) @ proj[ids]
    return y


def kmeans(x, k, rng):
    best = None
    for _ in range(INITS):
        c = x[rng.choice(len(x), size=k, replace=False)].copy()
        for _ in range(ITERS):
            d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
            lab = d.argmin(axis=1)
            nc = np.array([x[lab == j].mean(axis=0) if (lab == j).any() else c[j]
                           for j in range(k)])
            if np.allclose(nc, c):
                break
            c = nc
        d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
        lab = d.argmin(axis=1)
        dist = d[np.arange(len(x)), lab].sum()
        if best is None or dist < best[0]:
            best = (dist, lab, c)
    return best[1], best[2]


def bic(x, lab, c):
    """Pelleg and Moore, "X-means" (ICML 2000), as SimPoint scores a
    clustering: log-likelihood of identical spherical Gaussians minus
    (parameters / 2) log R."""
    r, m = x.shape
    k = len(c)
    sse = ((x - c[lab]) ** 2).sum()
    var = sse / (r - k) if r > k else 0.0
    var = max(var, 1e-300)
    ll = 0.0
    for j in range(k):
        rn = int((lab == j).sum())
        if rn == 0:
            continue
        ll += (rn * math.log(rn) - rn * math.log(r) - rn / 2 * math.log(2 * math.pi)
               - rn * m / 2 * math.log(var) - (rn - k) / 2)
    params = (k - 1) + m * k + 1
    return ll - params / 2 * math.log(r)


def main():
    a = sys.argv[1:]
    seed = 1
    if "--seed" in a:
        i = a.index("--seed")
        seed = int(a[i + 1])
        del a[i:i + 2]
    if len(a) != 2:
        sys.exit(__doc__)
    rows, width = read_bbv(a[0])
    rng = np.random.default_rng(seed)
    y = project(rows, width, rng)
    runs = []
    for k in range(1, min(KMAX, len(y)) + 1):
        lab, c = kmeans(y, k, rng)
        runs.append((k, bic(y, lab, c), lab))
    lo, hi = min(r[1] for r in runs), max(r[1] for r in runs)
    pick = next(r for r in runs if r[1] >= lo + BIC_FRAC * (hi - lo))
    # ids in order of first appearance, so two runs are easy to compare
    first = {}
    ids = [first.setdefault(int(v), len(first)) for v in pick[2]]
    with open(a[1], "w") as f:
        f.write("".join(f"{v}\n" for v in ids))
    print(f"intervals {len(ids)}, k {pick[0]}, BIC " +
          " ".join(f"{k}:{b:.1f}" for k, b, _ in runs))


if __name__ == "__main__":
    main()
