#!/usr/bin/env bash
# tests/fuzz/build.sh [OUTDIR] [--replay|--coverage]: builds every fuzz
# target with clang -fsanitize=fuzzer,address,undefined into OUTDIR
# (default build/fuzz), as OUTDIR/fuzz_<name>. gcc cannot link libFuzzer,
# so this sits beside meson rather than in it. --replay links the same
# entries to the plain driver (tests/fuzz/replay.c) instead of libFuzzer,
# with ASan and UBSan: the regression tests replay findings through it.
# --coverage links them to the plain driver built with --coverage -O0 and
# HWPROF_COVERAGE, no sanitizers (tests/coverage.sh, with CC=gcc).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/fuzz}
mode=fuzzer
[ "${2:-}" = "--replay" ] && mode=replay
[ "${2:-}" = "--coverage" ] && mode=coverage
mkdir -p "$out"
CC=${CC:-clang}
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
link=()
opt=-O1
if [ $mode = fuzzer ]; then
  san=(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  link=(-fsanitize=fuzzer,address,undefined)
elif [ $mode = coverage ]; then
  san=(--coverage -DHWPROF_COVERAGE)
  link=(--coverage)
  opt=-O0
else
  link=(-fsanitize=address,undefined)
fi
flags=(-std=c99 -g $opt -Wall -Wextra -Werror -pedantic -Iinclude -Itests
       -Iexamples/common "${san[@]}")

# Objects are rebuilt when their source or a header they may include is
# newer (the models' cold paths, the slowest, include the library only).
objpath() { # source [target] -> the object path (an entry's is per target)
  if [ -n "${2:-}" ]; then echo "$out/obj-$mode/entry_$2.o"
  else echo "$out/obj-$mode/$(echo "$1" | tr / _).o"; fi
}
stale() { # source object -> true when the object must be rebuilt
  local deps="include tests/fuzz/fuzz_model.h tests/conformance examples/common examples/minivm/mv.h"
  [ "$1" = tests/fuzz/impl.c ] && deps=include
  # shellcheck disable=SC2086
  [ ! -f "$2" ] || [ -n "$(find "$1" $deps -newer "$2" -name '*.[ch]' -print -quit)" ]
}
compile() { # source object [defines...]
  local src=$1 o=$2
  shift 2
  stale "$src" "$o" || return 0
  $CC "${flags[@]}" "$@" -c -o "$o.tmp" "$src" && mv "$o.tmp" "$o"
}
mkdir -p "$out/obj-$mode"

# Runs "$@" in the background, at most FUZZ_JOBS (default: the cores) at
# once; wait_all then fails if any of them did.
pids=()
jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
spawn() {
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do sleep 0.2; done
  "$@" &
  pids+=($!)
}
wait_all() {
  local p bad=0
  for p in "${pids[@]}"; do wait "$p" || bad=1; done
  pids=()
  return $bad
}

# name|flags: sources (the entry first). Model targets link the models'
# cold paths (tests/fuzz/impl.c) compiled once; host targets (trace,
# opts) link the host library's sources instead, which compile their own.
hwx="examples/common/hwx_arg.c examples/common/hwx_opts.c examples/common/hwx_x86.c
  examples/common/hwx_trace.c examples/common/hwx_exact.c examples/common/hwx_session.c examples/common/hwx_bbv.c
  examples/common/hwx_impl.c examples/common/hwx_pm.c examples/common/hwx_rap.c
  examples/common/hwx_path.c examples/common/hwx_strat.c examples/common/hwx_cp.c
  examples/common/hwx_ctx.c examples/common/hwx_blocks.c
  examples/common/hwx_core.c"
# Every component's targets follow from the component list
# (tests/components.py --fuzz); the hosts' parsers are added here.
mapfile -t targets < <(python3 tests/components.py --fuzz)
targets+=(
  "trace|-DHWX_TRACE_FUZZING: examples/replay/fuzz_trace.c $hwx"
  "opts|: tests/fuzz/fuzz_opts.c $hwx"
  "report|: tests/fuzz/fuzz_report.c examples/report/rp_load.c"
  "minivm_asm|: tests/fuzz/fuzz_minivm_asm.c examples/minivm/mv_asm.c"
)
# The target names, one a line (tests/fuzz/run.sh reads them).
if [ "${FUZZ_LIST:-}" = 1 ]; then
  for t in "${targets[@]}"; do echo "${t%%|*}"; done
  exit 0
fi
only=${FUZZ_ONLY:-}
selected=()
for t in "${targets[@]}"; do
  [ -n "$only" ] && [ "$only" != "${t%%|*}" ] && continue
  selected+=("$t")
done

# The objects targets share (the models' cold paths, conformance rows,
# the host library), each once, then every target's entry and link.
shared=(tests/fuzz/impl.c)
[ $mode != fuzzer ] && shared+=(tests/fuzz/replay.c)
for t in "${selected[@]}"; do
  rest=${t#*|}; srcs=(${rest#*:})
  for s in "${srcs[@]:1}"; do
    case " ${shared[*]} " in *" $s "*) ;; *) shared+=("$s") ;; esac
  done
done
for s in "${shared[@]}"; do spawn compile "$s" "$(objpath "$s")"; done
wait_all || { echo "fuzz: build failed" >&2; exit 1; }

build_target() { # one entry of the table above
  local t=$1 name rest defs srcs objs s
  name=${t%%|*}; rest=${t#*|}; defs=${rest%%:*}; srcs=(${rest#*:})
  # shellcheck disable=SC2086
  compile "${srcs[0]}" "$(objpath "${srcs[0]}" "$name")" $defs || return 1
  objs=("$(objpath "${srcs[0]}" "$name")")
  for s in "${srcs[@]:1}"; do objs+=("$(objpath "$s")"); done
  case " ${srcs[*]} " in *hwx_impl.c*) ;; *) objs+=("$(objpath tests/fuzz/impl.c)") ;; esac
  [ $mode != fuzzer ] && objs+=("$(objpath tests/fuzz/replay.c)")
  $CC "${link[@]}" -o "$out/fuzz_$name" "${objs[@]}" -lm || return 1
  echo "fuzz: built $out/fuzz_$name"
}
for t in "${selected[@]}"; do spawn build_target "$t"; done
wait_all || { echo "fuzz: build failed" >&2; exit 1; }
