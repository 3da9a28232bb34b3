#!/usr/bin/env python3
"""bench/plot_cliff.py: bench/cliff.sh's table rows and its SVG (python3
standard library only).

  plot_cliff.py row JSON LOG2 [CALLGRIND_TXT DUMP...]
      one CSV row per target of a hwprof-bench --json run; instructions per
      event from hwprof-bench --callgrind's "callgrind NAME events N" lines
      and callgrind's per-target dumps (their trigger names NAME)
  plot_cliff.py instr CALLGRIND_TXT DUMP...
      instructions per event of each target of one hwprof-bench --callgrind
      run (its stdout, then callgrind's dumps: OUT.1, OUT.2, ...)
  plot_cliff.py plot CSV OUT.svg
      two panels against log2 of the distinct keys: ns/event (median, the
      quartiles as a band) and instructions/event, log-scaled; vertical
      lines where the exact table (2 slots of 16 bytes a key) outgrows
      each data cache of this machine."""
import csv
import glob
import json
import math
import sys

COLORS = {"rap": "#d62728", "strat": "#9467bd", "exact": "#1f77b4",
          "spacesaving": "#2ca02c", "countmin": "#ff7f0e", "exact (pairs)": "#17becf"}


def color(name):
    return COLORS.get(name, COLORS.get(name.split()[0], "#333"))


def instr_per_event(txt, dumps):
    """NAME/STREAM -> instructions per event, from hwprof-bench
    --callgrind's stdout and callgrind's per-target dumps."""
    events, ir = {}, {}
    for line in open(txt):
        f = line.split()
        if len(f) == 4 and f[0] == "callgrind" and f[2] == "events":
            events[f[1]] = int(f[3])
    for dump in dumps:
        name = total = None
        for line in open(dump):
            if line.startswith("desc: Trigger: Client Request:"):
                name = line.split(":", 2)[2].strip().split()[-1]
            elif line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
        if name in events and total is not None and events[name]:
            ir[name] = total / events[name]
    return ir


def instr(args):
    for name, v in sorted(instr_per_event(args[0], args[1:]).items()):
        print(f"{name:<20} {v:10.2f} instructions/event")


def row(args):
    d = json.load(open(args[0]))
    log2 = args[1]
    ir = instr_per_event(args[2], args[3:]) if len(args) > 2 else {}
    for r in d["results"]:
        q = r["ns_per_event"]
        key = f'{r["name"]}/{r["stream"]}'
        v = f"{ir[key]:.2f}" if key in ir else ""
        print(f'{log2},{r["name"]},{r["stream"]},{r["events"]},{q["median"]},{q["q1"]},'
              f'{q["q3"]},{q["min"]},{q["max"]},{v}')


def caches():
    """(label, bytes) of this machine's data caches, from sysfs."""
    out = []
    for path in sorted(glob.glob("/sys/devices/system/cpu/cpu0/cache/index*")):
        try:
            kind = open(path + "/type").read().strip()
            level = open(path + "/level").read().strip()
            size = open(path + "/size").read().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        mult = {"K": 1024, "M": 1 << 20}.get(size[-1], 1)
        out.append((f"L{level}", int(size.rstrip("KM")) * mult))
    return out


def plot(args):
    rows = list(csv.DictReader(open(args[0])))
    series = {}
    for r in rows:
        name = r["target"] if r["target"] != "exact" else f'exact ({r["stream"]})'
        series.setdefault(name, []).append(r)
    xs = sorted({int(r["log2_distinct"]) for r in rows})
    W, H, L, R, T, B = 980, 420, 70, 170, 40, 50
    pw = (W - L - R - 60) / 2
    ph = H - T - B
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>']

    def panel(x0, title, key, band):
        vals = [float(r[key]) for r in rows if r[key]]
        if band:
            vals += [float(r["q1_ns"]) for r in rows] + [float(r["q3_ns"]) for r in rows]
        if not vals:
            svg.append(f'<text x="{x0 + pw / 2}" y="{T + ph / 2}" text-anchor="middle">'
                       f'{title}: not measured</text>')
            return
        lo = 10 ** math.floor(math.log10(max(min(vals), 1e-3)))
        hi = 10 ** math.ceil(math.log10(max(vals)))
        X = lambda k: x0 + (k - xs[0]) / max(xs[-1] - xs[0], 1) * pw
        Y = lambda v: T + ph - (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * ph
        svg.append(f'<text x="{x0 + pw / 2}" y="{T - 15}" text-anchor="middle" font-weight="bold">{title}</text>')
        svg.append(f'<rect x="{x0}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
        d = lo
        while d <= hi * 1.001:
            for m in (1, 2, 5):
                v = d * m
                if v > hi * 1.001:
                    break
                y = Y(v)
                svg.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + pw}" y2="{y:.1f}" stroke="#eee"/>')
                svg.append(f'<text x="{x0 - 5}" y="{y + 4:.1f}" text-anchor="end">{v:g}</text>')
            d *= 10
        for k in xs:
            svg.append(f'<text x="{X(k):.1f}" y="{T + ph + 16}" text-anchor="middle">2^{k}</text>')
        svg.append(f'<text x="{x0 + pw / 2}" y="{T + ph + 36}" text-anchor="middle">distinct keys</text>')
        for label, size in caches():
            k = math.log2(size / 32)  # the exact table's 2 x 16 bytes a key
            if xs[0] <= k <= xs[-1]:
                svg.append(f'<line x1="{X(k):.1f}" y1="{T}" x2="{X(k):.1f}" y2="{T + ph}" '
                           f'stroke="#999" stroke-dasharray="4,3"/>')
                svg.append(f'<text x="{X(k) + 3:.1f}" y="{T + 12}" fill="#666">{label}</text>')
        for name, rs in series.items():
            col = color(name)
            pts = [(int(r["log2_distinct"]), float(r[key])) for r in rs if r[key]]
            if band:
                up = [(int(r["log2_distinct"]), float(r["q3_ns"])) for r in rs]
                dn = [(int(r["log2_distinct"]), float(r["q1_ns"])) for r in rs][::-1]
                poly = " ".join(f"{X(k):.1f},{Y(v):.1f}" for k, v in up + dn)
                svg.append(f'<polygon points="{poly}" fill="{col}" opacity="0.15"/>')
            if pts:
                path = " ".join(f"{X(k):.1f},{Y(v):.1f}" for k, v in pts)
                dash = ' stroke-dasharray="6,3"' if name.startswith("exact") else ""
                svg.append(f'<polyline points="{path}" fill="none" stroke="{col}" stroke-width="2"{dash}/>')
                for k, v in pts:
                    svg.append(f'<circle cx="{X(k):.1f}" cy="{Y(v):.1f}" r="2.5" fill="{col}"/>')

    panel(L, "ns / event (median, IQR band)", "median_ns", True)
    panel(L + pw + 60, "instructions / event (callgrind)", "instr_per_event", False)
    y = T
    for name in series:
        col = color(name)
        dash = ' stroke-dasharray="6,3"' if name.startswith("exact") else ""
        svg.append(f'<line x1="{W - R + 15}" y1="{y + 6}" x2="{W - R + 40}" y2="{y + 6}" '
                   f'stroke="{col}" stroke-width="2"{dash}/>')
        svg.append(f'<text x="{W - R + 45}" y="{y + 10}">{name}</text>')
        y += 18
    svg.append(f'<text x="{W - R + 15}" y="{y + 14}" fill="#666">dashed grey: exact</text>')
    svg.append(f'<text x="{W - R + 15}" y="{y + 28}" fill="#666">table = cache</text>')
    svg.append("</svg>")
    with open(args[1], "w") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    modes = {"row": row, "instr": instr, "plot": plot}
    if len(sys.argv) < 3 or sys.argv[1] not in modes:
        sys.exit(__doc__)
    modes[sys.argv[1]](sys.argv[2:])
