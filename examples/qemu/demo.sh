#!/usr/bin/env bash
# examples/qemu/demo.sh [BUILD_DIR]
#
# The main demo: builds hwprof with Meson if needed, then runs real Debian
# programs under qemu-x86_64 with the hwprof TCG plugin and every model on,
# with exact ground truth, and prints the readable report:
#   1. gzip compressing a text file the demo generates (~1 MB)
#   2. python3 running a short script
# Reports (text and JSON) are left in BUILD_DIR/demo/.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
command -v qemu-x86_64 >/dev/null || { echo "demo: needs qemu-x86_64 (apt install qemu-user)" >&2; exit 1; }
if [ ! -f "$build/build.ninja" ]; then # only the plugin is built here
  meson setup "$build" "$root" -Dtests=false -Dbench=false >/dev/null
fi
meson compile -C "$build" examples/qemu/hwprof-tcg >/dev/null
plugin=$build/examples/qemu/libhwprof-tcg.so
out=$build/demo
mkdir -p "$out"
python3 "$here/tests/make_input.py" "$out/input.txt" "${DEMO_BYTES:-1000000}"
opts="models=all,exact=on,rap_kb=8,rap_eps=0.1,hpt=512x4,top=8"

# gzip also runs the processor core (docs/core.md) in its sampled mode, so
# ProfileMe's table shows real stage latencies and D-cache misses.
echo "== gzip -c $out/input.txt under qemu-x86_64 with hwprof and the core model (this takes a minute) =="
qemu-x86_64 -plugin "$plugin,$opts,core=on,core_mode=sampled,report=$out/gzip.txt,json=$out/gzip.json" \
  /bin/gzip -c "$out/input.txt" > "$out/input.txt.gz"
cat "$out/gzip.txt"

cat > "$out/script.py" <<'PY'
import collections, json
words = open(__import__("sys").argv[1]).read().split()[:20000]
top = collections.Counter(words).most_common(5)
print(json.dumps(top))
PY
echo
echo "== python3 script.py under qemu-x86_64 with hwprof =="
# qemu-x86_64 needs the ELF binary itself, not a wrapper script (pyenv).
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3)
# python3 loads ~5.7 M distinct (pc, value) pairs: exact=on needs ~1 GB
# of tables (exact_mb) to keep them all, or its ground truth is partial.
qemu-x86_64 -plugin "$plugin,$opts,exact_mb=1024,report=$out/python3.txt,json=$out/python3.json" \
  "$(readlink -f "$py")" -S "$out/script.py" "$out/input.txt"
cat "$out/python3.txt"
echo
echo "reports: $out/{gzip,python3}.{txt,json}"
