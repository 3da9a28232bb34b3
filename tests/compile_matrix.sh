#!/usr/bin/env bash
# tests/compile_matrix.sh CC CXX INCLUDE_DIR
#
# Every header in INCLUDE_DIR/hwprof, on its own:
#   c99        strict C99, pedantic, -Werror, included twice
#   impl       the same with HWPROF_IMPL (cold paths compiled)
#   static     HWPROF_STATIC + HWPROF_IMPL with -Wunused: nothing unused
#   symbols    with HWPROF_IMPL every HWP_API function the header declares
#              is defined in the object; without it, none is (stb once
#              misspelled its switch and silently compiled nothing)
#   cxx        as C++11 (with and without HWPROF_IMPL) when CXX is given
#   free       freestanding: -ffreestanding, linked -nostdlib -static with
#              only memset/memcpy/memmove/memcmp supplied, so any hidden libc
#              or libm call fails the link
#   clang      strict C99 with HWPROF_IMPL under clang, when installed
# Prints one line per check and a summary; exits 1 on any failure.
set -u
cc=$1; cxx=${2:-}; inc=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
strict=(-std=c99 -pedantic -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wcast-qual)

check() { # name, command...
  local name=$1; shift
  if "$@" >"$tmp/log" 2>&1; then
    pass=$((pass + 1)); echo "ok   $name"
  else
    fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/    /' "$tmp/log" | head -20
  fi
}

api_names() { # the HWP_API functions a header declares
  grep -ohE '^HWP_API [^;]*\b(hwp_[a-z0-9_]+)\(' "$1" |
    sed -E 's/.*\b(hwp_[a-z0-9_]+)\($/\1/' | sort -u
}

symbols_check() { # header, object-with-impl, object-without
  local h=$1 with=$2 without=$3 n missing="" extra=""
  for n in $(api_names "$h"); do
    nm "$with" | grep -qE " T $n\$" || missing="$missing $n"
    nm "$without" | grep -qE " T $n\$" && extra="$extra $n"
  done
  [ -z "$missing" ] || echo "not defined with HWPROF_IMPL:$missing"
  [ -z "$extra" ] || echo "defined without HWPROF_IMPL:$extra"
  [ -z "$missing$extra" ]
}

cat > "$tmp/libc.c" <<'EOF'
#include <stddef.h>
void *memset(void *d, int c, size_t n) { unsigned char *p = d; while (n--) *p++ = (unsigned char)c; return d; }
void *memcpy(void *d, const void *s, size_t n) { unsigned char *p = d; const unsigned char *q = s; while (n--) *p++ = *q++; return d; }
void *memmove(void *d, const void *s, size_t n) { unsigned char *p = d; const unsigned char *q = s; if (p < q) while (n--) *p++ = *q++; else while (n--) p[n] = q[n]; return d; }
int memcmp(const void *a, const void *b, size_t n) { const unsigned char *p = a, *q = b; for (; n--; p++, q++) if (*p != *q) return *p - *q; return 0; }
void _start(void) { for (;;) { } }
EOF

for h in "$inc"/hwprof/*.h; do
  n=$(basename "$h")
  printf '#include "hwprof/%s"\n#include "hwprof/%s"\nint hwp_matrix_probe(void);\nint hwp_matrix_probe(void) { return HWP_OK; }\n' "$n" "$n" > "$tmp/plain.c"
  printf '#define HWPROF_IMPL\n#include "hwprof/%s"\n#include "hwprof/%s"\nint hwp_matrix_probe(void);\nint hwp_matrix_probe(void) { return HWP_OK; }\n' "$n" "$n" > "$tmp/impl.c"
  printf '#define HWPROF_STATIC\n#define HWPROF_IMPL\n#include "hwprof/%s"\nint hwp_matrix_probe(void);\nint hwp_matrix_probe(void) { return HWP_OK; }\n' "$n" > "$tmp/static.c"
  check "$n: c99" "$cc" "${strict[@]}" -I"$inc" -c "$tmp/plain.c" -o "$tmp/plain.o"
  check "$n: impl" "$cc" "${strict[@]}" -I"$inc" -c "$tmp/impl.c" -o "$tmp/impl.o"
  check "$n: static" "$cc" "${strict[@]}" -Wunused -I"$inc" -c "$tmp/static.c" -o "$tmp/static.o"
  check "$n: symbols" symbols_check "$h" "$tmp/impl.o" "$tmp/plain.o"
  if [ -n "$cxx" ]; then
    cp "$tmp/plain.c" "$tmp/plain.cc"; cp "$tmp/impl.c" "$tmp/impl.cc"
    check "$n: cxx" "$cxx" -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/plain.cc" -o "$tmp/plain_cc.o"
    check "$n: cxx impl" "$cxx" -std=c++11 -Wall -Wextra -Werror -I"$inc" -c "$tmp/impl.cc" -o "$tmp/impl_cc.o"
  fi
  check "$n: free" "$cc" "${strict[@]}" -ffreestanding -nostdlib -static -fno-pie -no-pie -O2 \
        -I"$inc" "$tmp/impl.c" "$tmp/libc.c" -o "$tmp/free" -lgcc
  if command -v clang >/dev/null 2>&1; then
    check "$n: clang" clang "${strict[@]}" -I"$inc" -c "$tmp/impl.c" -o "$tmp/clang.o"
  fi
done

echo "compile_matrix: $pass checks passed, $fail failed"
[ "$fail" -eq 0 ]
