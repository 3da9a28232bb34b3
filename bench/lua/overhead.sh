#!/usr/bin/env bash
# bench/lua/overhead.sh LUADIR [--vm] [--big] [--time|--wall] [SCRIPT...]
# What hwprof costs inside Lua 5.4: for each benchmark script and each
# configuration, the extra instructions lua-hwprof executes over the
# unpatched lua built from the same source (callgrind, deterministic), and
# with --time the extra wall time (hyperfine, medians, both binaries in
# the same run; --wall: only those). LUADIR is examples/lua/build.sh's
# output directory. Inputs: input() below.
# Configurations (the HWPROF variable of docs/lua.md):
#   hooks     lua-hwprof with HWPROF unset: the patch's own cost (floor)
#   pm        ProfileMe, one decrement per bytecode
#   coproc    co-processor load-value profiling on table reads
#   rap       RAP on calls and loop back edges
#   path      path profiler on conditional jumps and back edges
#   strat     stratified type/value profiles of operands
#   all       all of the above
#   floor:M   the hooks model M (or all) takes, each returning at once
#             (HWPROF=layer=session,models=M,floor=on): what those hook sites cost before
#             any model work, the floor under M's figure. ProfileMe's
#             floor is `hooks`: its decrement per bytecode is in the patch.
# --vm: instead, the layer=vm path (hwprof/vm.h at its default bursts):
#   hooks     as above: layer=vm compiled in but off
#   vm:floor  HWPROF=layer=vm,models=all,floor=on: the same hooks in front
#             of a zeroed hwp_vm, the layer doing nothing
#   vm:M      HWPROF=layer=vm,models=M, M one of the models above or all
# --big: callgrind on the wall-time inputs (about 10 times the small
# ones), where start-up costs weigh less.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: bench/lua/overhead.sh LUADIR [--vm] [--big] [--time|--wall] [SCRIPT...]}
shift
time_too=0 instr_too=1
configs=(hooks pm coproc rap path strat all floor:coproc floor:rap floor:path floor:strat floor:all)
if [ "${1:-}" = --vm ]; then
  configs=(hooks vm:floor vm:pm vm:coproc vm:rap vm:path vm:strat vm:all)
  shift
fi
size=small
if [ "${1:-}" = --big ]; then size=wall; shift; fi
case ${1:-} in
  --time) time_too=1; shift ;;
  --wall) time_too=1; instr_too=0; shift ;;
esac
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(binary_trees fannkuch json nbody sort spectral_norm strings)
[ -x "$dir/lua" ] && [ -x "$dir/lua-hwprof" ] || { echo "no lua and lua-hwprof in $dir (run examples/lua/build.sh)" >&2; exit 1; }

# Each script's two inputs: small enough for callgrind (about 50x slower
# than native), and for wall time one that runs 0.03-0.1 s in lua (on the
# small ones, 3-60 ms, a session's start-up and the process's own
# dominate). input small|wall SCRIPT
input() {
  local col=2; [ "$1" = wall ] && col=3
  awk -v s="$2" -v c=$col '$1 == s { print $c }' <<'EOF'
binary_trees  9     10
fannkuch      7     8
json          300   1000
nbody         5000  15000
sort          5000  10000
spectral_norm 60    100
strings       3000  30000
EOF
}
hwprof_of() {
  case $1 in
    hooks) echo "" ;; floor:*) echo "layer=session,models=${1#floor:},floor=on" ;;
    vm:floor) echo "layer=vm,models=all,floor=on" ;; vm:*) echo "layer=vm,models=${1#vm:}" ;;
    *) echo "layer=session,models=$1" ;;
  esac
}
instr() { # env-value, binary, script, arg
  local out
  out=$(cd "$here" && HWPROF="$1" valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        "$2" "$3.lua" $4 2>&1 >/dev/null | awk '/Collected :/{print $4}')
  echo "${out:-0}"
}

if [ $instr_too -eq 1 ]; then
printf '%-14s %14s' script lua
for c in "${configs[@]}"; do printf ' %12s' "$c"; done
printf '\n'
for s in "${scripts[@]}"; do
  a=$(input $size "$s")
  base=$(instr "" "$dir/lua" "$s" "$a")
  printf '%-14s %14s' "$s" "$base"
  for c in "${configs[@]}"; do
    n=$(instr "$(hwprof_of "$c")" "$dir/lua-hwprof" "$s" "$a")
    awk -v n="$n" -v b="$base" 'BEGIN { printf " %+11.1f%%", (n / b - 1) * 100 }'
  done
  printf '\n'
done
echo "(extra instructions over lua, callgrind; arguments: bench/lua/overhead.sh's input $size)"
fi

if [ $time_too -eq 1 ]; then
  command -v hyperfine >/dev/null || { echo "hyperfine not found" >&2; exit 1; }
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  printf '%-14s %9s' script lua
  for c in "${configs[@]}"; do printf ' %12s' "$c"; done
  printf '\n'
  for s in "${scripts[@]}"; do
    a=$(input wall "$s")
    args=()
    for c in "${configs[@]}"; do
      # env -u: the hooks-only run has no HWPROF at all
      if [ "$c" = hooks ]; then args+=(-n "$c" "env -u HWPROF $dir/lua-hwprof $s.lua $a")
      else args+=(-n "$c" "env HWPROF=$(hwprof_of "$c"),report=/dev/null $dir/lua-hwprof $s.lua $a"); fi
    done
    if ! (cd "$here" && hyperfine -N -w 1 -r 5 --export-json "$tmp/$s.json" \
          -n lua "$dir/lua $s.lua $a" "${args[@]}" >"$tmp/log" 2>&1); then
      echo "$s: hyperfine failed: $(tail -1 "$tmp/log")" >&2; exit 1
    fi
    python3 - "$s" "$tmp/$s.json" <<'PY'
import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[2]))["results"]}
base = r.pop("lua")
print("%-14s %8.3fs" % (sys.argv[1], base) +
      "".join(" %+11.1f%%" % ((v / base - 1) * 100) for v in r.values()))
PY
  done
  echo "(extra wall time over lua, arguments: bench/lua/overhead.sh's input wall; medians of 5 runs after 1 warm-up, hyperfine -N, every configuration in the same run)"
fi
