# bench/core/programs.sh: the real programs the core and ProfileMe benches
# run (gzip -n -6 of 128 KiB of text, bzip2 -1 of 150 KB, python3.11
# -c json.dumps), sourced by bench/core/cg_compare.sh and
# bench/profileme/pm_core_real.sh. Each is run the same way every time
# (pid 2 of a fresh PID namespace, fixed environment and paths:
# examples/valgrind/tests/vg_fixture.py), so its recording is repeatable.
#
#   programs_args USAGE TOOL SUBDIR BUILD_DIR [NAME...]
#                                a script's arguments: sets build, names
#                                (every program when none), libdir (the
#                                Valgrind tool's) and work (BUILD_DIR/SUBDIR,
#                                created); exits, saying so, unless the
#                                tool and BUILD_DIR/TOOL are built
#   programs_setup ROOT WORK     inputs into WORK; sets fixture, valgrind
#                                and cmd[NAME] (the command line)
#   programs_record LIBDIR WORK NAME
#                                WORK/NAME.hwpt by the Valgrind tool
#                                (record=), unless it exists

programs_args() {
  local usage=$1 tool=$2 sub=$3
  shift 3
  build=$(cd "${1:?usage: $usage}" && pwd)
  shift
  names=("$@")
  [ ${#names[@]} -eq 0 ] && names=(gzip bzip2 python3.11)
  libdir=$build/examples/valgrind/lib
  [ -x "$libdir/hwprof-amd64-linux" ] && [ -x "$build/$tool" ] ||
    { echo "build first: ninja -C $build" >&2; exit 1; }
  work=$build/$sub
  mkdir -p "$work"
}

programs_setup() {
  fixture="python3 $1/examples/valgrind/tests/vg_fixture.py"
  valgrind=$(command -v valgrind)
  $fixture input "$2/gzip.in" 131072
  $fixture input "$2/bzip2.in" 150000
  local pyprog='import json; d = {str(i): i * i for i in range(2000)}; print(len(json.dumps(d, sort_keys=True)))'
  declare -gA cmd=(
    [gzip]="/usr/bin/gzip -n -c -6 $2/gzip.in"
    [bzip2]="/usr/bin/bzip2 -c -1 $2/bzip2.in"
    [python3.11]="/usr/bin/python3.11 -c '$pyprog'")
}

programs_record() {
  local prog
  eval "prog=(${cmd[$3]})"
  [ -s "$2/$3.hwpt" ] ||
    nice $fixture run "$valgrind" "$1" "$2" --models=none --report=/dev/null \
      "--record=$2/$3.hwpt" -- "${prog[@]}"
}
