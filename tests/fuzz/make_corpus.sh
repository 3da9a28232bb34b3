#!/usr/bin/env bash
# tests/fuzz/make_corpus.sh: regenerates the seed corpus in
# tests/fuzz/corpus/<target>/ (small, checked in; every file < 4 KB):
#  - model targets: operation scripts for the shared engine (fuzz_model.h):
#    each desc mode, then the row's stream, flush, merge both ways, a JSON
#    round trip, reset, and the target's own operations;
#  - JSON readers: reports of fresh and fed instances (make_corpus.c);
#  - trace: a short valid trace (examples/replay/tests/make_trace.c);
#  - minivm_asm: the example programs under 4 KB and the refused ones;
#  - opts: valid option lists.
set -euo pipefail
cd "$(dirname "$0")/../.."
c=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-clang}

# The components with a conformance row: all but the VM layer, whose
# seeds in $c/vm are kept as they are.
rows=$(python3 tests/components.py --components | grep -vx vm)
for t in $rows; do
  mkdir -p "$c/$t"
  # byte 0: desc mode (0 small, 1 zero, 2 patched, 3 bad; +0x80 cost);
  # byte 1: skew; the mode's own bytes; the target's desc bytes (strat:
  # the handler on; path: the sink and the spill callbacks on; phase:
  # the interval callback on); then ops: low 3 bits 0/1 feed (seed, n),
  # 2 flush, 3 merge, 4 reset, 5 round trip (skew), 6/7 the target's
  # own; bit 7 picks instance B.
  python3 - "$c/$t" "$t" <<'PY'
import sys, os
d, t = sys.argv[1], sys.argv[2]
hook = {'strat': [1], 'path': [3], 'phase': [1]}.get(t, [])
def w(name, head, ops):
    open(os.path.join(d, name), 'wb').write(bytes(head + hook + ops))
feed = lambda seed, n, b=0: [0 | b << 7, seed, n]
w('small_stream', [0, 3], feed(1, 200) + feed(2, 100, 1) + [2, 3, 0x83, 5, 9] + feed(3, 255) + [4, 2, 5, 0])
w('cost_own_ops', [0x80, 5], [6, 0, 40] + list(range(1, 80)) + [7, 1, 9, 9, 9, 9, 9, 9, 9, 9, 6, 2, 3, 4, 5, 6, 7, 8, 2, 3, 0x86, 3, 9, 9] + [5, 1])
w('defaults', [1, 0], feed(7, 255) + feed(8, 255, 1) + [3, 2, 5, 4])
w('patched', [2, 1, 2, 4, 9, 17, 200], feed(4, 64) + [2, 5, 2])
w('bad_field', [3, 0, 0], [])
PY
done

$CC -std=c99 -O1 -Iinclude -Itests -o "$tmp/make_corpus" tests/fuzz/make_corpus.c \
  $(python3 tests/components.py --headers | sed 's|.*|tests/conformance/&.c|') -lm
for r in $rows; do mkdir -p "$c/json_$r"; done
"$tmp/make_corpus" "$c"

mkdir -p "$c/trace"
$CC -std=gnu11 -O1 -Iinclude -Iexamples/common -o "$tmp/make_trace" examples/replay/tests/make_trace.c \
  examples/common/hwx_{arg,opts,x86,trace,exact,session,impl,pm,rap,path,strat,cp,core,host,ctx,blocks,bbv}.c -lm
"$tmp/make_trace" "$c/trace/loop64" 64
"$tmp/make_trace" "$c/trace/loop300" 300

# minivm_asm: the example programs that fit, and refused ones.
mkdir -p "$c/minivm_asm"
for f in examples/minivm/programs/*.mvs examples/minivm/tests/broken/*.mvs; do
  [ "$(wc -c <"$f")" -le 4096 ] && cp "$f" "$c/minivm_asm/$(basename "$(dirname "$f")")_$(basename "$f")"
done

mkdir -p "$c/opts"
printf 'models=rap' > "$c/opts/rap"
printf 'models=all,seed=7,top=5' > "$c/opts/all"
printf 'models=rap,rap_key=addr,values=on,exact=on' > "$c/opts/rap_addr"
printf 'models=pathprof,flush=1000,guest_base=0x400000' > "$c/opts/path"
find "$c" -type f -size +4k -print | sed 's/^/make_corpus: over 4 KB: /'
echo "make_corpus: $(find "$c" -type f | wc -l) files in $c"
