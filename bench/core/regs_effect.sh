#!/usr/bin/env bash
# bench/core/regs_effect.sh BUILD_DIR [NAME...]
#
# What the registers from VEX IR change in full timing: each real program
# of bench/core/programs.sh (gzip, bzip2, python3.11 by default) runs
# twice under the Valgrind tool with core=on (full timing, out of order,
# the 21264 defaults) and ProfileMe at interval 64, once with the
# registers (--hwprof-regs=yes, the default) and once without
# (--hwprof-regs=no). bench/core/regs_effect.py prints the cycles, IPC
# and wasted issue slots of both and the PCs whose mean fetch ->
# retire-ready latency (ProfileMe's samples, the same PCs sampled in
# both runs: the stream and the selections do not depend on the timing)
# changed most.
#
# HOST=qemu: the same under the QEMU plugin (libhwprof-tcg.so under
# qemu-x86_64 7.2), registers from its x86 decoder (regs=on) and none
# (regs=off).
set -euo pipefail
host=${HOST:-valgrind}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/programs.sh"
programs_args "bench/core/regs_effect.sh BUILD_DIR [NAME...]" \
  examples/valgrind/lib/hwprof-amd64-linux regs "$@"
programs_setup "$root" "$work"
for n in "${names[@]}"; do
  eval "prog=(${cmd[$n]})"
  for r in yes no; do
    if [ "$host" = qemu ]; then
      nice qemu-x86_64 -plugin "$build/examples/qemu/libhwprof-tcg.so,core=on,models=pm+core,pm_interval=64,pm_table=65536,regs=$([ $r = yes ] && echo on || echo off),report=/dev/null,json=$work/$n-$host-$r.json" \
        "${prog[@]}" >/dev/null
    else
      nice $fixture run "$valgrind" "$libdir" "$work" "--hwprof-regs=$r" --core=on \
        --models=pm+core --pm_interval=64 --pm_table=65536 --report=/dev/null \
        "--json=$work/$n-$host-$r.json" -- "${prog[@]}" >/dev/null
    fi
  done
  python3 "$here/regs_effect.py" "$n" "$work/$n-$host-yes.json" "$work/$n-$host-no.json"
done
