#!/usr/bin/env bash
# tests/doc_snippets.sh CC INCLUDE_DIRS MD_FILE...   (dirs separated by :)
# The code a newcomer copies from the docs must build: every ```c block
# in the given Markdown files is a whole translation unit (it starts with
# `#define HWPROF_IMPL` or an `#include`) and compiles as strict C99 with
# warnings as errors; a block with `int main` is also linked with ASan and
# UBSan and run, and must exit 0 with no sanitizer report. Code that is not
# meant to build alone (a shell session, an API outline) is not tagged c.
# Prints one line per block and `N passed, N failed`.
set -uo pipefail
cc=$1
IFS=: read -r -a dirs <<< "$2"
inc=()
for d in "${dirs[@]}"; do inc+=(-I "$d"); done
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for md in "$@"; do
  # Split the file's ```c blocks into tmp/<n>.c, keeping the start line.
  awk -v dir="$tmp" -v base="$(basename "$md" .md)" '
    /^```c$/ { n++; f = dir "/" base "-" n ".c"; line = NR + 1; inb = 1; next }
    /^```$/ && inb { inb = 0; print line > (f ".line"); close(f); next }
    inb { print > f }' "$md"
  for c in "$tmp/$(basename "$md" .md)"-*.c; do
    [ -e "$c" ] || continue
    what="$md:$(cat "$c.line")"
    if ! head -n 1 "$c" | grep -q '^#define HWPROF_IMPL\|^#include'; then
      echo "FAIL $what is not a whole unit (start it with #define HWPROF_IMPL or #include)"
      fail=$((fail + 1)); continue
    fi
    if grep -q 'int main' "$c"; then
      if "$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror -fsanitize=address,undefined \
           -fno-sanitize-recover=all "${inc[@]}" "$c" -o "$c.bin" -lm 2>"$c.err" &&
         ASAN_OPTIONS=detect_leaks=1 "$c.bin" >"$c.out" 2>&1; then
        echo "ok   $what builds and runs"; pass=$((pass + 1))
      else
        echo "FAIL $what"; cat "$c.err" "$c.out" 2>/dev/null | head -20; fail=$((fail + 1))
      fi
    elif "$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror "${inc[@]}" -c "$c" -o "$c.o" 2>"$c.err"; then
      echo "ok   $what compiles"; pass=$((pass + 1))
    else
      echo "FAIL $what"; head -20 "$c.err"; fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed"
[ "$pass" -gt 0 ] && [ "$fail" -eq 0 ]
