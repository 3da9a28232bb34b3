#!/usr/bin/env bash
# bench/qemu/callgrind.sh [BUILD_DIR] [INPUT_BYTES]
#
# Deterministic counterpart of hyperfine.sh: instructions executed (valgrind
# callgrind, whole qemu-x86_64 process) for gzip -6 of a small generated
# input under each configuration, and the instructions each adds over plain
# QEMU per executed TB (the TB count comes from the peer's floor=inline
# counters). Instruction counts do not see cache misses (the peer's big
# (pc, value) table pays those): use hyperfine.sh for time.
# BASELINE=OLD.so adds an earlier build of the plugin (old-*).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
bytes=${2:-50000}
bench_setup "${1:-$root/build}" "$bytes" callgrind-input.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ir() { # NAME PLUGIN-ARGS (empty: plain)
  local p=()
  [ -n "$2" ] && p=(-plugin "$2")
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" qemu-x86_64 "${p[@]}" \
    /bin/gzip -c -6 "$in" > /dev/null 2> "$tmp/log"
  sed -n 's/.*Collected : //p' "$tmp/log"
}
qemu-x86_64 -plugin "$peer,floor=inline,out=$tmp/tbs" /bin/gzip -c -6 "$in" > /dev/null
tbs=$(sed -n 's/^TB executions (inline counters): //p' "$tmp/tbs")
base=$(ir plain "")
echo "gzip -6 of $bytes bytes: $tbs TBs executed, plain QEMU $base instructions"
echo "| configuration | instructions | over plain per TB |"
echo "| --- | --- | --- |"
row() {
  local n
  n=$(ir "$1" "$2")
  echo "| $1 | $n | $(( (n - base) / tbs )) |"
}
row floor-tb "$peer,floor=tb,out=/dev/null"
row floor-mem "$peer,floor=mem,out=/dev/null"
row peer-cf "$peer,out=/dev/null"
row peer-exact "$peer,values=on,out=/dev/null"
row hwprof-none "$plugin,report=/dev/null"
row hwprof-cf "$plugin,pm=on,rap=on,path=on,report=/dev/null"
row hwprof-values "$plugin,models=all,report=/dev/null"
row hwprof-values-cheap "$plugin,models=all,strat_hash=cheap,report=/dev/null"
if [ -n "${BASELINE:-}" ]; then
  row old-none "$BASELINE,report=/dev/null"
  row old-cf "$BASELINE,pm=on,rap=on,path=on,report=/dev/null"
  row old-values "$BASELINE,models=all,report=/dev/null"
fi
