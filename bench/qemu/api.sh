#!/usr/bin/env bash
# bench/qemu/api.sh [BUILD_DIR] [RUNS] [PROGRAM ...]
#
# The real-program corpus under QEMU with each plugin configuration, for
# each plugin API:
#   API 1: libhwprof-tcg.so    under Debian 12's qemu-x86_64 7.2
#   API 4: libhwprof-tcg-v4.so under the qemu-x86_64 10.0 of
#          examples/qemu/build-qemu.sh (skipped, and said so, when absent)
#   API 7: libhwprof-tcg-v7.so under the qemu-x86_64 11.1 of
#          `build-qemu.sh 11.1` (likewise)
# PROGRAMs are corpus members (bench/corpus/corpus.py --commands gives
# their command lines, inputs and guest environment; default: every
# member but cc1plus, whose plain run alone takes ~13 s of user CPU under
# QEMU 7.2, so its ~100 plain-run equivalents per round do not fit).
# Configurations, each against plain QEMU of the same binary in the same
# rounds: plugin loaded with no model (none), ProfileMe alone (profileme:
# its countdown in the plugin, API 4 inline, API 1 a counting TB
# callback), co-processor alone (coproc: load values), RAP alone (rap:
# code ranges, fed in bulk from per-TB counters), all models (all); the floors the API allows: an empty TB
# callback (floor-tb), an empty memory callback per instruction
# (floor-mem), and, API 4 and 7, an inline per-TB decrement with a
# conditional callback (floor-cond, ProfileMe's countdown); and the
# exact-counting peer plugin (peer: libexact-tcg.so / -v4.so / -v7.so,
# values=on: every TB, path and (load pc, value) pair counted exactly),
# which "all" is also compared with. profileme-per-tb (ProfileMe fed
# every TB, cd=off), profileme-core (ProfileMe with its latencies: the
# core in sampled mode, through its translated blocks) and rap-per-tb (RAP fed every TB, drain=0) run only
# when CONFIGS names them, and so do stratified and pathprof alone, and
# NAME-bursts for stratified, pathprof, coproc and all: that model set
# with burst_period=32768 (burst_len 1024: the compressors, the path
# profiler and the co-processor fed 1 instruction in 32, in bursts;
# docs/qemu.md, "Burst sampling"), and NAME-bursts-cb, the same with
# inline=off (API 4 and 7: a callback, not an inline count, per TB
# between bursts). QEMU's own contrib plugins, built by
# bench/qemu/build-contrib.sh from the source of the QEMU they run under
# (7.2 for API 1, 10.0 for API 4, 11.1 for API 7), are peers in every
# default run: contrib-hotblocks (inline=on), contrib-cache (its default
# caches; "all" and "all-bursts" are also compared with it), contrib-bbv
# (outfile in a temporary directory) and contrib-uftrace (its trace goes
# to ./uftrace.data, made a link from the program's working directory
# into a temporary directory); a version without the plugin (7.2 has
# neither bbv nor uftrace, 10.0 no uftrace), or whose source is not
# there, skips it and says so.
# RUNS rounds (default 5), each one hyperfine --runs 1 per command,
# interleaved. Environment: CONFIGS (space-separated names) keeps only
# those configurations (plain always runs); APIS (default "1 4 7") picks
# the APIs, so they can run at different times into the same table.
# Writes one JSON per API, program and round to $BUILD_DIR/bench-qemu-api/
# and the tables of bench/qemu/api_table.py over every JSON there to
# $BUILD_DIR/bench-qemu-api.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
runs=${2:-5}
shift $(($# < 2 ? $# : 2))
progs=("$@")
[ ${#progs[@]} -gt 0 ] || progs=(python3 gzip bzip2 gawk bash sqlite3 pigz luajit)
configs=${CONFIGS:-peer none profileme coproc rap all floor-tb floor-mem floor-cond
  contrib-hotblocks contrib-cache contrib-bbv contrib-uftrace}
tag=${CONFIGS:+@${CONFIGS// /+}}
q10=${HWPROF_QEMU10_USER:-${HWPROF_QEMU_CACHE:-$HOME/.cache/hwprof/qemu}/bin/qemu-x86_64}
q11=${HWPROF_QEMU11_USER:-${HWPROF_QEMU11_CACHE:-$HOME/.cache/hwprof/qemu-11.1}/bin/qemu-x86_64}
dir=$build/bench-qemu-api
mkdir -p "$dir"
lib=$build/examples/qemu
for f in libhwprof-tcg{,-v4,-v7}.so libexact-tcg{,-v4,-v7}.so; do
  [ -f "$lib/$f" ] || { echo "build first: meson compile -C $build" >&2; exit 1; }
done
# name <TAB> cwd <TAB> environment <TAB> command, inputs written
corpus=$(python3 "$root/bench/corpus/corpus.py" "$build" --commands "${progs[@]}")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Sets cfgs, the configurations of one API, and cdir, where its contrib
# plugins are (built here); each configuration the version lacks is left
# out with the reason.
api_configs() { # api qemu-version
  local c why=''
  cfgs='' cdir=''
  if [[ " $configs " == *[[:space:]]contrib-* ]]; then
    cdir=$(bash "$here/build-contrib.sh" "$2") || why="no contrib plugins (bench/qemu/build-contrib.sh $2 says why above)"
  fi
  for c in $configs; do
    case $c in
      contrib-*)
        if [ -n "$why" ]; then echo "API $1: $c skipped, $why" >&2; continue; fi
        if [ ! -f "$cdir/lib${c#contrib-}.so" ]; then
          echo "API $1: $c skipped, QEMU $2 has no ${c#contrib-} plugin" >&2; continue
        fi ;;
      floor-cond | *-bursts-cb) [ "$1" != 1 ] || continue ;;  # API 1 has no conditional callback
    esac
    cfgs+=" $c"
  done
}

bench_api() { # api qemu plugin peer qemu-version
  local api=$1 q=$2 p=$3 pp=$4 name cwd env cmd
  "$q" --version | head -1 > "$dir/api$api.version"
  api_configs "$api" "$5"
  while IFS=$'\t' read -r name cwd env cmd; do
    local run="cd $cwd && env -i $env $q" cmds=(-n plain "cd $cwd && env -i $env $q $cmd > /dev/null")
    local c opt
    for c in $cfgs; do
      case $c in
        peer) opt="$pp,values=on,out=/dev/null" ;;
        none) opt="$p,models=none,report=/dev/null" ;;
        profileme | coproc | rap | all | stratified | pathprof) opt="$p,models=$c,report=/dev/null" ;;
        stratified-bursts | pathprof-bursts | coproc-bursts | all-bursts)
          opt="$p,models=${c%-bursts},burst_period=32768,report=/dev/null" ;;
        stratified-bursts-cb | pathprof-bursts-cb | coproc-bursts-cb | all-bursts-cb)
          opt="$p,models=${c%-bursts-cb},burst_period=32768,inline=off,report=/dev/null" ;;
        profileme-per-tb) opt="$p,models=profileme,cd=off,report=/dev/null" ;;
        profileme-core) opt="$p,models=profileme,core=on,core_mode=sampled,report=/dev/null" ;;
        rap-per-tb) opt="$p,models=rap,drain=0,report=/dev/null" ;;
        floor-cond) opt="$p,floor=cond,report=/dev/null" ;;
        contrib-hotblocks) opt="$cdir/libhotblocks.so,inline=on" ;;
        contrib-cache) opt="$cdir/libcache.so" ;;
        contrib-bbv) opt="$cdir/libbbv.so,outfile=$tmp/bbv" ;;
        contrib-uftrace) opt="$cdir/libuftrace.so" ;;
        floor-tb | floor-mem) opt="$p,floor=${c#floor-},report=/dev/null" ;;
        *) echo "api.sh: unknown configuration $c" >&2; exit 1 ;;
      esac
      cmds+=(-n "$c" "$run -plugin $opt $cmd > /dev/null")
    done
    # uftrace writes ./uftrace.data: a link from the working directory
    # (shell-quoted in the corpus line) into the temporary one, made before
    # the rounds (not in the measured command) and removed after them.
    local wd uft=''
    eval "wd=$cwd"
    if [[ "$cfgs " == *" contrib-uftrace "* ]]; then
      uft=$wd/uftrace.data
      mkdir -p "$tmp/uftrace.data" && ln -sfn "$tmp/uftrace.data" "$uft"
    fi
    rm -f "$dir/api$api-$name-"[0-9]*"$tag.json"
    local i t0=$SECONDS
    for i in $(seq 1 "$runs"); do
      if ! hyperfine --warmup $([ "$i" = 1 ] && echo 1 || echo 0) --runs 1 --style none \
          --export-json "$dir/api$api-$name-$i$tag.json" "${cmds[@]}" < /dev/null > /dev/null; then
        echo "API $api $name: a command failed, program left out" >&2
        rm -f "$dir/api$api-$name-"[0-9]*"$tag.json"
        break
      fi
    done
    [ -z "$uft" ] || rm -f "$uft"
    echo "API $api $name: $((SECONDS - t0)) s" >&2
  done <<< "$corpus"
}
for api in ${APIS:-1 4 7}; do
  case $api in
    1) bench_api 1 "$(command -v qemu-x86_64)" "$lib/libhwprof-tcg.so" "$lib/libexact-tcg.so" 7.2 ;;
    4 | 7) q=$q10 ver=10.0
       [ "$api" = 4 ] || q=$q11 ver=11.1
       if [ -x "$q" ]; then
         bench_api "$api" "$q" "$lib/libhwprof-tcg-v$api.so" "$lib/libexact-tcg-v$api.so" "$ver"
       else
         echo "API $api: skipped, no plugin-enabled qemu-x86_64 $ver at $q (examples/qemu/build-qemu.sh $ver)" >&2
       fi ;;
    *) echo "api.sh: unknown API $api (1, 4 or 7)" >&2; exit 1 ;;
  esac
done
python3 "$here/api_table.py" "$dir" | tee "$build/bench-qemu-api.md"
