#!/usr/bin/env bash
# quickstart's argument: a bad count is refused at once (exit 1, the range
# named) instead of running until killed; 0 keeps the default; a small
# count runs to the end with every model's section.
set -u
qs=$1 fails=0
bad() {
  local err rc
  err=$(timeout 20 "$qs" "$@" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -eq 1 ] && [[ "$err" == *"iterations: expected an integer in 0..1000000000"* ]]; then
    echo "ok   quickstart $*"
  else
    echo "FAIL quickstart $*: exit $rc [$err]"; fails=$((fails + 1))
  fi
}
bad -1
bad abc
bad 10x
bad 2000000000
out=$(timeout 60 "$qs" 1000 2>&1)
rc=$?
if [ $rc -eq 0 ] && [[ "$out" == *"== Modelled hardware cost"* ]] && [[ "$out" == *"co-processor"* || "$out" == *"Co-processor"* ]]; then
  echo "ok   quickstart 1000"
else
  echo "FAIL quickstart 1000: exit $rc"; fails=$((fails + 1))
fi
[ $fails -eq 0 ]
