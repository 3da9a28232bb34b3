#!/usr/bin/env bash
# bench/rap/real_keys.sh BUILD [OUT]: RAP on real PC and load-value
# key streams, the "Real traces" figures and the picture of docs/rap.md.
#
# Records two programs under the hwprof Valgrind tool (deterministic runs,
# examples/valgrind/tests/vg_fixture.py; models=none, record=): gzip -n -6
# of 128 KiB of generated text, and python3.11 running the Valgrind tests'
# json command. `hwprof-replay --dump` writes each trace's PCs and load
# values as key files, NAME.pc.keys and NAME.value.keys (the names
# bench/real_trace.sh --keys gives them);
# rap_report --keys measures RAP on each against the exact profile of the
# same stream (peak nodes, deferrals, the paper's percent error on hot
# ranges, the stage-0 buffer's cut) and draws python3.11's PC tree at
# 8 KB, eps = 10% over its .text as OUT/rap.svg; bench_rap --keys gives ns/event (and,
# with callgrind, instructions/event) on each PC stream beside the exact
# hash table; rap_names.py names the functions in the hot PC ranges
# (nm). Everything lands in OUT (default BUILD/rap-real, about 1.3 GB
# of traces and keys; nothing is committed). Takes about 5 minutes.
set -euo pipefail
build=$(cd "$1" && pwd)
out=${2:-$build/rap-real}
src=$(cd "$(dirname "$0")/../.." && pwd)
valgrind=$(command -v valgrind)
rap=$build/bench/rap
ninja -C "$build" examples/replay/hwprof-replay bench/rap/rap_report bench/rap/bench_rap \
    examples/valgrind/lib/hwprof-amd64-linux examples/valgrind/lib/launcher.stamp
mkdir -p "$out"
export PYTHONPATH=$src/examples/common
fixture=$src/examples/valgrind/tests/vg_fixture.py
python3 "$fixture" input "$out/gzip.in" 131072
record() { # NAME PROGRAM ARGS...
    local name=$1
    shift
    python3 "$fixture" run "$valgrind" "$build/examples/valgrind/lib" \
        "$out/work" --models=none "--record=$out/$name.hwpt" -- "$@" >/dev/null
}
record gzip /usr/bin/gzip -n -c -6 "$out/gzip.in"
record python3.11 /usr/bin/python3.11 -c \
    'import json; d = {str(i): i * i for i in range(2000)}; print(len(json.dumps(d, sort_keys=True)))'
# The picture's x axis: python3.11's .text (the shared libraries' 17% of
# the PCs would otherwise widen it to 256 MB).
read -r tlo tsize < <(readelf -SW /usr/bin/python3.11 |
                      awk '$2 == ".text" {print "0x" $4, "0x" $6}')
for t in gzip python3.11; do
    for k in pc value; do
        "$build/examples/replay/hwprof-replay" --dump "$k" "$out/$t.hwpt" "$out/$t.$k.keys"
        svg=()
        [ "$t.$k" = python3.11.pc ] &&
            svg=("$out/rap.svg" "$tlo" "$(printf '%#x' $((tlo + tsize - 1)))")
        "$rap/rap_report" --keys "$out/$t.$k.keys" "$t ${k}s" "${svg[@]}" |
            tee "$out/$t.$k.txt"
    done
done
# Which functions the hot code ranges are (gzip is stripped, so only
# python3.11's exported symbols name anything).
for t in gzip python3.11; do
    echo "== $t: functions in the hot PC ranges at 8 KB, eps = 10%"
    python3 "$src/bench/rap/rap_names.py" "$out/$t.pc.keys" "/usr/bin/$t" "$out/$t.pc.txt"
done
for t in gzip python3.11; do
    echo "== $t PCs: ns/event (median) and instructions/event (callgrind)"
    "$rap/bench_rap" --keys "$out/$t.pc.keys" --only /trace/ --budget 0.3
    bash "$src/bench/callgrind.sh" "$rap/bench_rap" 100 /trace/ -- --keys "$out/$t.pc.keys"
done
