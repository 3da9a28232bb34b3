#!/usr/bin/env bash
# bench/lua/luajit_compare.sh LUADIR [SCRIPT...]
# Where LuaJIT starts its root traces (luajit -jv: "[TRACE n file:line loop]"
# and function traces) against the loops and functions lua-hwprof's models
# would compile (HWPROF=layer=session,models=rap, RAP over branch and call targets) and
# those of the exact profile, by source line. Prints per script how many
# of LuaJIT's loop traces start at a line the models call hot (recall) and
# how many of the models' hot loops LuaJIT traced (precision).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: bench/lua/luajit_compare.sh LUADIR [SCRIPT...]}
shift
scripts=("$@")
[ ${#scripts[@]} -gt 0 ] || scripts=(binary_trees fannkuch json nbody sort spectral_norm strings)
command -v luajit >/dev/null || { echo "luajit not found (apt-get install luajit)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '%-14s %6s %6s %6s %9s %9s\n' script luajit model both recall precision
for s in "${scripts[@]}"; do
  (cd "$here" && luajit -jv "$s.lua" 2>&1 >/dev/null) |
    sed -nE 's/^\[TRACE +[0-9]+ ([^ (]+):([0-9]+) loop\]$/\1:\2/p' | sort -u > "$tmp/jit"
  (cd "$here" && HWPROF="layer=session,models=rap,exact=on,report=$tmp/r.txt" "$dir/lua-hwprof" "$s.lua" >/dev/null)
  awk '$1 == "loop" && ($2 == "both" || $2 == "model") { print $3 }' "$tmp/r.txt" | sort -u > "$tmp/model"
  j=$(wc -l < "$tmp/jit"); m=$(wc -l < "$tmp/model"); b=$(comm -12 "$tmp/jit" "$tmp/model" | wc -l)
  awk -v s="$s" -v j="$j" -v m="$m" -v b="$b" 'BEGIN {
    printf "%-14s %6d %6d %6d %9.2f %9.2f\n", s, j, m, b, j ? b / j : 1, m ? b / m : 1 }'
done
echo "(loops: LuaJIT's root loop traces vs lua-hwprof's RAP-hot loops at 1% of calls + back edges)"
