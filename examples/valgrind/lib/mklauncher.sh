#!/bin/sh
# mklauncher.sh LIBEXEC OUTDIR STAMP: symlink every file of Valgrind's
# libexec dir (core preloads, suppressions, other tools, gdb XML) into
# OUTDIR, the directory that also holds hwprof-amd64-linux, so that
# VALGRIND_LIB=OUTDIR valgrind --tool=hwprof works.
set -e
libexec=$1 outdir=$2 stamp=$3
[ -d "$libexec" ] || { echo "mklauncher: no $libexec" >&2; exit 1; }
for f in "$libexec"/*; do
  name=$(basename "$f")
  [ "$name" = hwprof-amd64-linux ] && continue
  ln -sfn "$f" "$outdir/$name"
done
echo "$libexec" > "$stamp"
