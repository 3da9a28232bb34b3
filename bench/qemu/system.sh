#!/usr/bin/env bash
# System mode's cost: examples/qemu/system.sh's boot (Debian 12's kernel,
# busybox, one gzip -6 per vCPU, power off) under qemu-system-x86_64 10
# with the API 4 plugin (QEMU=11.1: QEMU 11.1 from install-qemu11.sh with
# the API 7 one), once per configuration and round, against the same boot
# without a plugin in the same round. Prints a markdown table
# of the median user+system CPU seconds and the ratio to the plain boot.
#
#   bash bench/qemu/system.sh [BUILD_DIR [ROUNDS]]      (default: build 3)
#   CONFIGS  space-separated plugin option sets, "," inside one
#            (default: models=none models=rap models=all
#             models=all,burst_period=32768)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-3}
configs=(${CONFIGS:-models=none models=rap models=all models=all,burst_period=32768})
plugin=$build/examples/qemu/libhwprof-tcg-v4.so
if [ "${QEMU:-10.0}" = 11.1 ]; then
  plugin=$build/examples/qemu/libhwprof-tcg-v7.so
  HWPROF_QEMU_SYSTEM=$(bash "$root/examples/qemu/install-qemu11.sh")
else
  bash "$root/examples/qemu/install-qemu10.sh" >/dev/null
  HWPROF_QEMU_SYSTEM=$(command -v qemu-system-x86_64)
fi
export HWPROF_QEMU_SYSTEM
[ -f "$plugin" ] || { echo "build first: ninja -C $build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cpu() { # CONFIG: the boot's user+system CPU seconds
  local p=$plugin
  [ "$1" != plain ] || p=none
  HWPROF_PLUGIN=$p /usr/bin/time -f '%U %S' -o "$tmp/t" \
    bash "$root/examples/qemu/system.sh" "$tmp/out" "$1" > "$tmp/log" 2>&1 ||
    { cat "$tmp/log" >&2; exit 1; }
  awk '{printf "%.2f\n", $1 + $2}' "$tmp/t"
}

for ((r = 1; r <= rounds; r++)); do
  for c in plain "${configs[@]}"; do
    echo "$c $(cpu "$c")" >> "$tmp/all"
    echo "round $r: $c: $(tail -1 "$tmp/all" | cut -d' ' -f2) s" >&2
  done
done
python3 - "$tmp/all" "$("$HWPROF_QEMU_SYSTEM" --version | head -1)" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    c, t = line.split()
    runs.setdefault(c, []).append(float(t))
plain = statistics.median(runs["plain"])
n = len(runs["plain"])
print(f"{sys.argv[2]}; CPU seconds (user + system), the median of {n} boot{'s' if n > 1 else ''}")
print()
print("| configuration | CPU s | over the plain boot |")
print("| --- | ---: | ---: |")
for c, ts in runs.items():
    m = statistics.median(ts)
    print(f"| {'no plugin' if c == 'plain' else '`' + c + '`'} | {m:.1f} | {m / plain:.2f}x |")
PY
