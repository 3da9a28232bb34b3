#!/usr/bin/env bash
# bench/core/equiv.sh REV TRACE...
#
# core.h's results on recorded traces, byte for byte, between the core.h
# of git revision REV and the working tree's: tests/core/test_core_equiv.c
# is built twice (once with REV's core.h in place of the tree's) and its
# --trace digests (every instruction's core output, every finished record
# with its wasted slots, the JSON report; in timing, caches and sampled
# mode) compared. Traces: bench/core/cg_compare.sh leaves gzip's, bzip2's
# and python3.11's in BUILD/cg/*.hwpt. Exit status 1 on any difference.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rev=${1:?usage: bench/core/equiv.sh REV TRACE...}; shift
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp -r "$root/include" "$work/old"
git -C "$root" show "$rev:include/hwprof/core.h" > "$work/old/hwprof/core.h"
src=("$root/tests/core/test_core_equiv.c" "$root/examples/common/hwx_trace.c")
flags=(-O2 -std=c99 -I"$root/tests" -I"$root/examples/common")
cc "${flags[@]}" -I"$work/old" "${src[@]}" -o "$work/old.bin"
cc "${flags[@]}" -I"$root/include" "${src[@]}" -o "$work/new.bin"
status=0
for t in "$@"; do
  "$work/old.bin" --trace "$t" > "$work/old.txt"
  "$work/new.bin" --trace "$t" > "$work/new.txt"
  cat "$work/new.txt"
  if cmp -s "$work/old.txt" "$work/new.txt"; then echo "$t: identical to $rev"
  else echo "$t: DIFFERS from $rev"; diff "$work/old.txt" "$work/new.txt" || true; status=1; fi
done
exit $status
