#!/usr/bin/env bash
# bench/lua/overhead.sh LUADIR [--time] [SCRIPT...]
# What hwprof costs inside Lua 5.4: for each benchmark script and each
# configuration, the extra instructions lua-hwprof executes over the
# unpatched lua built from the same source (callgrind, deterministic), and
# with --time the extra wall time (hyperfine, medians, both binaries in
# the same run). LUADIR is examples/lua/build.sh's output directory.
# Configurations (the HWPROF variable of docs/lua.md):
#   hooks     lua-hwprof with HWPROF unset: the patch's own cost (floor)
#   pm        ProfileMe, one decrement per bytecode
#   coproc    co-processor load-value profiling on table reads
#   rap       RAP on calls and loop back edges
#   path      path profiler on conditional jumps and back edges
#   strat     stratified type/value profiles of operands
#   all       all of the above
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: bench/lua/overhead.sh LUADIR [--time] [SCRIPT...]}
shift
time_too=0
if [ "${1:-}" = "--time" ]; then time_too=1; shift; fi
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(binary_trees fannkuch json nbody sort spectral_norm strings)
[ -x "$dir/lua" ] && [ -x "$dir/lua-hwprof" ] || { echo "no lua and lua-hwprof in $dir (run examples/lua/build.sh)" >&2; exit 1; }

# Arguments small enough for callgrind (about 50x slower than native).
small() {
  case $1 in
    binary_trees) echo 9 ;; fannkuch) echo 7 ;; json) echo 300 ;;
    nbody) echo 5000 ;; sort) echo 5000 ;; spectral_norm) echo 60 ;;
    strings) echo 3000 ;; *) echo "" ;;
  esac
}
configs=(hooks pm coproc rap path strat all)
hwprof_of() {
  case $1 in
    hooks) echo "" ;; all) echo "models=all" ;; *) echo "models=$1" ;;
  esac
}
instr() { # env-value, binary, script, arg
  local out
  out=$(cd "$here" && HWPROF="$1" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$2" "$3.lua" $4 2>&1 >/dev/null | awk '/Collected :/{print $4}')
  echo "${out:-0}"
}

printf '%-14s %14s' script lua
for c in "${configs[@]}"; do printf ' %9s' "$c"; done
printf '\n'
for s in "${scripts[@]}"; do
  a=$(small "$s")
  base=$(instr "" "$dir/lua" "$s" "$a")
  printf '%-14s %14s' "$s" "$base"
  for c in "${configs[@]}"; do
    n=$(instr "$(hwprof_of "$c")" "$dir/lua-hwprof" "$s" "$a")
    awk -v n="$n" -v b="$base" 'BEGIN { printf " %+8.1f%%", (n / b - 1) * 100 }'
  done
  printf '\n'
done
echo "(extra instructions over lua, callgrind; arguments: bench/lua/overhead.sh's small())"

if [ $time_too -eq 1 ]; then
  command -v hyperfine >/dev/null || { echo "hyperfine not found" >&2; exit 1; }
  for s in "${scripts[@]}"; do
    args=()
    for c in "${configs[@]}"; do
      args+=(-n "$c" "env HWPROF=$(hwprof_of "$c") $dir/lua-hwprof $s.lua")
    done
    (cd "$here" && hyperfine -N -w 1 -r 5 --export-json "/tmp/hwlua-$s.json" \
       -n lua "$dir/lua $s.lua" "${args[@]}" >/dev/null 2>&1) || true
    python3 - "$s" "/tmp/hwlua-$s.json" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[2]))["results"]}
base = r.pop("lua")
print("%-14s lua %.3fs  " % (sys.argv[1], base) +
      "  ".join("%s %+.1f%%" % (k, (v / base - 1) * 100) for k, v in r.items()))
PY
  done
  echo "(wall time, medians of 5 runs, hyperfine -N; same run for every configuration)"
fi
