# bench/core/programs.sh: the real programs the core and ProfileMe benches
# run (gzip -n -6 of 128 KiB of text, bzip2 -1 of 150 KB, python3.11
# -c json.dumps), sourced by bench/core/cg_compare.sh and
# bench/profileme/pm_core_real.sh. Each is run the same way every time
# (pid 2 of a fresh PID namespace, fixed environment and paths:
# examples/valgrind/tests/vg_fixture.py), so its recording is repeatable.
#
#   programs_setup ROOT WORK     inputs into WORK; sets fixture, valgrind
#                                and cmd[NAME] (the command line)
#   programs_record LIBDIR WORK NAME
#                                WORK/NAME.hwpt by the Valgrind tool
#                                (record=), unless it exists

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
