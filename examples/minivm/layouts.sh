#!/usr/bin/env bash
# Throughput over several code layouts. An interpreter's time follows where
# the compiler put its dispatch as much as the instructions it runs (two
# builds of the same "off" loop differed by 40 % here), so one build's
# off / ProfileMe / all ratio says little. This builds minivm from each
# source tree at six -falign-functions / -falign-jumps settings (the same
# flags for every tree and mode), runs bench.sh ROUNDS=N on each layout
# (interleaved, shuffled, median user time) and prints, per workload and
# tree, the median over layouts of bytecodes per second and of each
# mode's change against "off" of the same binary.
#   examples/minivm/layouts.sh [ROOT...]     (default: this checkout)
# A ROOT holds examples/minivm/ and include/ (e.g. a `git archive` of an
# older commit); ROUNDS (default 5) and OUT (default /tmp/minivm-layouts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
roots=("$@")
[ ${#roots[@]} -gt 0 ] || roots=("$(cd "$here/../.." && pwd)")
out=${OUT:-/tmp/minivm-layouts}
log=$out/runs.txt
mkdir -p "$out"
: > "$log"
for v in 16:1 32:1 64:1 16:16 32:32 64:64; do
  f=${v%:*} j=${v#*:}
  dirs=()
  for r in "${!roots[@]}"; do
    s=${roots[$r]}/examples/minivm
    d=$out/t$r-$f-$j
    mkdir -p "$d/examples/minivm"
    cc -std=c99 -O2 -fPIC -D_FILE_OFFSET_BITS=64 -falign-functions="$f" -falign-jumps="$j" \
      -I"$s" -I"${roots[$r]}/include" -o "$d/examples/minivm/minivm" \
      "$s/main.c" "$s/mv_asm.c" "$s/mv_vm.c" "$s/prof.c" "$s/exact.c" "$s/tier.c" -lm
    dirs+=("$d")
  done
  for d in "${dirs[@]}"; do
    ROUNDS=${ROUNDS:-5} bash "$here/bench.sh" "$d" >> "$log"
  done
done
python3 - "$log" "${#roots[@]}" <<'PY'
import collections, re, statistics, sys
ms = collections.defaultdict(list)  # (tree, program, mode) -> M/s per layout
for l in open(sys.argv[1]):
    m = re.search(r'/t(\d+)-\d+-\d+/\S+ --prof=(\w+) .*/(\w+)\.mvs +median user \S+ s +([\d.]+) M/s', l)
    if m:
        ms[(int(m.group(1)), m.group(3), m.group(2))].append(float(m.group(4)))
print("median over 6 layouts: M/s (change against off of the same binary; per layout)")
for prog in ("fib", "sieve", "shapes"):
    for t in range(int(sys.argv[2])):
        off = ms[(t, prog, "off")]
        line = "  %-6s tree %d: off %4.0f" % (prog, t, statistics.median(off))
        for mode in ("profileme", "all"):
            x = ms[(t, prog, mode)]
            r = [a / o - 1 for a, o in zip(x, off)]
            line += "  %s %4.0f (%+.0f %%; %s)" % (mode, statistics.median(x),
                    100 * statistics.median(r), " ".join("%+.0f" % (100 * y) for y in r))
        print(line)
PY
