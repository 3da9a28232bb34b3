#!/usr/bin/env bash
# tests/fuzz/build.sh [OUTDIR] [--replay]: builds every fuzz target with
# clang -fsanitize=fuzzer,address,undefined into OUTDIR (default
# build/fuzz), as OUTDIR/fuzz_<name>. gcc cannot link libFuzzer, so this
# sits beside meson rather than in it. --replay links the same entries to
# the plain driver (tests/fuzz/replay.c) instead of libFuzzer, with ASan
# and UBSan: the regression tests replay findings through it.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/fuzz}
mode=fuzzer
[ "${2:-}" = "--replay" ] && mode=replay
mkdir -p "$out"
CC=${CC:-clang}
san=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
link=()
if [ $mode = fuzzer ]; then
  san=(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  link=(-fsanitize=fuzzer,address,undefined)
else
  link=(-fsanitize=address,undefined)
fi
flags=(-std=c99 -g -O1 -Wall -Wextra -Werror -pedantic -Iinclude -Itests
       -Iexamples/common "${san[@]}")

# Objects are rebuilt when their source or any header is newer.
obj() { # source -> prints the object path
  local src=$1 o
  o="$out/obj-$mode/$(echo "$src" | tr / _).o"
  mkdir -p "$out/obj-$mode"
  if [ ! -f "$o" ] || [ -n "$(find "$src" include tests/fuzz/fuzz_model.h \
        tests/conformance examples/common -newer "$o" -name '*.[ch]' -print -quit)" ]; then
    $CC "${flags[@]}" -c -o "$o" "$src" >&2 || return 1
  fi
  echo "$o"
}

# name|flags: sources (the entry first). Model targets link the models'
# cold paths (tests/fuzz/impl.c) compiled once; host targets (trace,
# opts) link the host library's sources instead, which compile their own.
conf=tests/conformance
json="tests/fuzz/fuzz_json.c"
hwx="examples/common/hwx_arg.c examples/common/hwx_opts.c examples/common/hwx_x86.c
  examples/common/hwx_trace.c examples/common/hwx_exact.c examples/common/hwx_session.c
  examples/common/hwx_impl.c examples/common/hwx_pm.c examples/common/hwx_rap.c
  examples/common/hwx_path.c examples/common/hwx_strat.c examples/common/hwx_cp.c
  examples/common/hwx_core.c"
targets=(
  "rap|: tests/fuzz/fuzz_rap.c $conf/rap.c"
  "pm|: tests/fuzz/fuzz_pm.c $conf/profileme.c"
  "pm_table|: tests/fuzz/fuzz_pm_table.c $conf/profileme.c"
  "cp|: tests/fuzz/fuzz_cp.c $conf/coproc.c"
  "cp_simple|: tests/fuzz/fuzz_cp_simple.c $conf/coproc.c"
  "core|: tests/fuzz/fuzz_core.c $conf/core.c"
  "json_rap|: tests/rap/fuzz_rap_json.c"
  "json_pm|-DFZ_LIST=hwp_conf_profileme -DFZ_NAME=pm: $json $conf/profileme.c"
  "json_pm_table|-DFZ_LIST=hwp_conf_profileme -DFZ_NAME=pm_table: $json $conf/profileme.c"
  "json_cp|-DFZ_LIST=hwp_conf_coproc -DFZ_NAME=cp: $json $conf/coproc.c"
  "json_cp_simple|-DFZ_LIST=hwp_conf_coproc -DFZ_NAME=cp_simple: $json $conf/coproc.c"
  "json_core|-DFZ_LIST=hwp_conf_core -DFZ_NAME=core: $json $conf/core.c"
  "trace|-DHWX_TRACE_FUZZING: examples/replay/fuzz_trace.c $hwx"
  "opts|: tests/fuzz/fuzz_opts.c $hwx"
  "report|: tests/fuzz/fuzz_report.c examples/report/rp_load.c"
)
# The target names, one a line (tests/fuzz/run.sh reads them).
if [ "${FUZZ_LIST:-}" = 1 ]; then
  for t in "${targets[@]}"; do echo "${t%%|*}"; done
  exit 0
fi
only=${FUZZ_ONLY:-}
impl=$(obj tests/fuzz/impl.c)
driver=()
[ $mode = replay ] && driver=("$(obj tests/fuzz/replay.c)")
for t in "${targets[@]}"; do
  name=${t%%|*}; rest=${t#*|}; defs=${rest%%:*}; srcs=${rest#*:}
  [ -n "$only" ] && [ "$only" != "$name" ] && continue
  objs=()
  entry=1
  for s in $srcs; do
    if [ $entry = 1 ]; then
      # The entry is compiled per target, with the target's flags.
      o="$out/obj-$mode/entry_$name.o"
      # shellcheck disable=SC2086
      eval "$CC \"\${flags[@]}\" $defs -c -o \"$o\" \"$s\""
      objs+=("$o"); entry=0
    else
      objs+=("$(obj "$s")")
    fi
  done
  case " $srcs " in *hwx_impl.c*) ;; *) objs+=("$impl") ;; esac
  $CC "${link[@]}" -o "$out/fuzz_$name" "${objs[@]}" "${driver[@]}" -lm
  echo "fuzz: built $out/fuzz_$name"
done
