#!/usr/bin/env bash
# bench/core/host_slowdown.sh BUILD_DIR [RUNS]
#
# The slowdown core.h adds to the two live hosts: hyperfine runs gzip -6
# of 128 KiB of text (bench/core/programs.sh's input) under the Valgrind
# tool and under qemu-x86_64 with the TCG plugin, each host without
# core.h (models=none: the host's own instrumentation, the peer) and with
# core=on in each mode (caches, full, sampled; sampled opens its windows
# around ProfileMe's selections, so it runs with pm=on at the default
# interval, beside pm=on alone), RUNS runs each (default 3) in the same
# hyperfine run as their peer. The figure is CPU time (user + system, the
# mean over the runs) over the peer's: on a shared machine the wall time
# also counts the waits for a core, which the CPU time does not.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: bench/core/host_slowdown.sh BUILD_DIR [RUNS]}" && pwd)
runs=${2:-3}
libdir=$build/examples/valgrind/lib
plugin=$build/examples/qemu/libhwprof-tcg.so
[ -x "$libdir/hwprof-amd64-linux" ] && [ -f "$plugin" ] ||
  { echo "build first: ninja -C $build" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "host_slowdown.sh: hyperfine not found" >&2; exit 1; }
work=$build/slowdown
mkdir -p "$work"
. "$here/programs.sh"
programs_setup "$root" "$work"
prog="/usr/bin/gzip -n -c -6 $work/gzip.in"
modes=("models=none" "models=none,core=on,core_mode=caches"
       "models=none,core=on,core_mode=full" "models=none,pm=on"
       "models=none,pm=on,core=on,core_mode=sampled")
vg=() qe=()
for m in "${modes[@]}"; do
  vg+=("VALGRIND_LIB=$libdir valgrind -q --tool=hwprof --${m//,/ --} --report=/dev/null $prog > /dev/null")
  qe+=("qemu-x86_64 -plugin $plugin,$m,report=/dev/null $prog > /dev/null")
done
# The plugin only: the core fed one instruction at a time (blocks=off)
# beside its translated blocks, and the floor of a TB callback with a
# memory callback per instruction (what the block path cannot go below).
for m in "models=none,core=on,core_mode=caches,blocks=off" \
         "models=none,pm=on,core=on,core_mode=sampled,blocks=off" "models=none,floor=mem"; do
  qe+=("qemu-x86_64 -plugin $plugin,$m,report=/dev/null $prog > /dev/null")
done
for host in vg qe; do
  declare -n cmds=$host
  nice hyperfine --style basic --runs "$runs" --export-json "$work/$host.json" \
    "${cmds[@]}" >/dev/null
  python3 - "$work/$host.json" "$host" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
cpu = [x["user"] + x["system"] for x in r]
name = {"vg": "Valgrind tool", "qe": "QEMU plugin"}[sys.argv[2]]
for x, c in zip(r, cpu):
    cmd = x["command"]
    opts = cmd.split("--tool=hwprof ")[1].split(" --report")[0] if "valgrind" in cmd \
        else cmd.split(".so,")[1].split(",report")[0]
    print(f"{name:14s} {opts:52s} cpu {c:6.2f} s  x{c / cpu[0]:6.2f}"
          f"  (wall median {x['median']:.2f} s)")
PY
done
