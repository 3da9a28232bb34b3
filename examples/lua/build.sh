#!/usr/bin/env bash
# examples/lua/build.sh [OUT]: build Lua 5.4 twice from Debian's source
# package, into OUT (default build/lua):
#   OUT/lua          the interpreter as Debian ships its source (reference)
#   OUT/lua-hwprof   the same source with examples/lua/lua-hwprof.patch and
#                    the hwprof glue (hwlua.c, and hwlua_vm.c for
#                    HWPROF=layer=vm): every model in the loop
# Both are compiled with the same compiler and flags, so their difference
# is the profiling and nothing else. The source is fetched once with
# `apt-get source lua5.4` into $HWPROF_CACHE (default ~/.cache/hwprof),
# adding a deb-src line when the machine has none. Nothing of Lua is kept
# in the repository.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/lua}
cache=${HWPROF_CACHE:-$HOME/.cache/hwprof}
cc=${CC:-cc}
cflags=${LUA_CFLAGS:--O2}

die() { echo "examples/lua/build.sh: $*" >&2; exit 1; }

src_dir() { ls -d "$cache"/lua5.4/lua5.4-5.4.*/src 2>/dev/null | head -1; }

fetch_source() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  command -v apt-get >/dev/null || die "apt-get not found: this script needs Debian's lua5.4 source package"
  # Another tool's deb-src line (bookworm-backports' alone, as the QEMU
  # scripts add) does not carry lua5.4: ask apt, not the files.
  if ! apt-cache showsrc lua5.4 2>/dev/null | grep -q '^Package: lua5.4'; then
    echo "adding a deb-src line for Debian 12 (bookworm)"
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $sudo tee /etc/apt/sources.list.d/hwprof-lua-src.sources >/dev/null ||
      die "could not add a deb-src line"
    $sudo apt-get update -qq || die "apt-get update failed"
  fi
  mkdir -p "$cache/lua5.4"
  (cd "$cache/lua5.4" && apt-get source -qq lua5.4 >/dev/null 2>&1) ||
    { $sudo apt-get update -qq && (cd "$cache/lua5.4" && apt-get source -qq lua5.4 >/dev/null 2>&1); } ||
    die "apt-get source lua5.4 failed (no network or no deb-src line?)"
}

[ -n "$(src_dir)" ] || fetch_source
src=$(src_dir)
[ -n "$src" ] && [ -f "$src/lvm.c" ] || die "no Lua source under $cache/lua5.4"

mkdir -p "$out/plain" "$out/hwprof"
rm -rf "$out/plain/src" "$out/hwprof/src"
cp -r "$src" "$out/plain/src"
cp -r "$src" "$out/hwprof/src"
(cd "$out/hwprof" && patch -s -p1 --dry-run < "$here/lua-hwprof.patch" >/dev/null 2>&1) ||
  die "lua-hwprof.patch does not apply to $(basename "$(dirname "$src")")"
(cd "$out/hwprof" && patch -s -p1 < "$here/lua-hwprof.patch")

# Debian's luaconf.h wants the multiarch triplet its build system writes.
for d in plain hwprof; do
  echo "#define DEB_HOST_MULTIARCH \"$($cc -dumpmachine)\"" > "$out/$d/src/lua5.4-deb-multiarch.h"
done

# A constant string-hash seed in both: Lua seeds its hashes from the time
# and addresses, which moved callgrind's count of one binary on one input
# by up to 2% from run to run (nbody); with it, runs repeat instruction
# for instruction, and a difference between the two is the profiling's.
lua_flags=(-std=gnu99 -DLUA_COMPAT_5_3 -DLUA_USE_LINUX '-Dluai_makeseed(L)=0x5eedu' $cflags -w)
lua_src() { ls "$1"/*.c | grep -v '/luac\.c$'; }

# shellcheck disable=SC2046
$cc "${lua_flags[@]}" $(lua_src "$out/plain/src") -o "$out/lua" -lm -ldl -Wl,-E ||
  die "building the reference lua failed"

# hwprof's own code (the glue and the shared host code) builds with the
# project's warnings as errors; Lua's own sources keep their flags.
obj=$out/hwprof/obj
rm -rf "$obj"; mkdir -p "$obj"
for f in "$here"/hwlua*.c "$root"/examples/common/hwx*.c; do
  case $f in */test_hwx.c) continue ;; esac
  $cc -std=gnu99 $cflags -Wall -Wextra -Werror -I "$here" -I "$root/include" \
      -I "$root/examples/common" -I "$out/hwprof/src" -c "$f" \
      -o "$obj/$(basename "$f" .c).o" || die "building $(basename "$f") failed"
done
# shellcheck disable=SC2046
$cc "${lua_flags[@]}" -I "$here" -I "$out/hwprof/src" $(lua_src "$out/hwprof/src") \
    "$obj"/*.o -o "$out/lua-hwprof" -lm -ldl -Wl,-E ||
  die "building lua-hwprof failed"
echo "built $out/lua and $out/lua-hwprof ($(basename "$(dirname "$src")"))"
