#!/usr/bin/env bash
# bench/lua/vm_hpt.sh LUA_OUT VM_HPT [ENTRIES]: the VM layer's hot path
# table (layer=vm, models=path, the layer's default bursts) under each
# policy against the perfect table of as many entries (512, or ENTRIES,
# 4 ways), on each benchmark's own path stream (docs/vm.md, "Results").
# LUA_OUT is examples/lua/build.sh's output, VM_HPT the build's
# bench/pathprof/vm_hpt.
#
# Each script runs four times with ASLR off (setarch -R), so that its
# bytecodes keep their addresses and the four runs see one path stream
# (Lua's hash seed is fixed by build.sh): once with a table of 2^20
# entries and 256 ways (the stream's exact path counts, which vm_hpt
# checks), then with the ENTRIES x 4 table under plain, aging and
# decay. Inputs: overhead.sh's wall-time ones. One line per script, as
# vm_hpt prints it.
set -euo pipefail
out=$(cd "${1:?usage: vm_hpt.sh LUA_OUT VM_HPT}" && pwd)
tool=$(realpath "${2:?usage: vm_hpt.sh LUA_OUT VM_HPT}")
entries=${3:-512}
dir=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A arg=([binary_trees]=10 [fannkuch]=8 [json]=1000 [nbody]=15000 [sort]=10000
                [spectral_norm]=100 [strings]=30000)
for s in binary_trees fannkuch json nbody sort spectral_norm strings; do
  for t in exact plain aging decay; do
    case $t in
      exact) o=path_entries=1048576,path_ways=256,vm_hpt_plain=1 ;;
      plain) o=path_entries=$entries,vm_hpt_plain=1 ;;
      *) o=path_entries=$entries,path_policy=$t ;;
    esac
    (cd "$dir" && HWPROF=layer=vm,models=path,$o,report=/dev/null,json=$tmp/$t.json \
       setarch -R "$out/lua-hwprof" "$s.lua" "${arg[$s]}" >/dev/null)
  done
  "$tool" --entries="$entries" reports "$s" "$tmp/exact.json" "$tmp/plain.json" "$tmp/aging.json" "$tmp/decay.json"
done
