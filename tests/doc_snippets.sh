#!/usr/bin/env bash
# tests/doc_snippets.sh CC INCLUDE_DIRS MD_FILE...   (dirs separated by :)
# The code a newcomer copies from the docs must build: every ```c block
# in the given Markdown files that starts with `#define HWPROF_IMPL` (a
# whole translation unit) is compiled as strict C99 with warnings as
# errors; a block with `int main` is also linked and run, and must exit 0.
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
    head -n 1 "$c" | grep -q '^#define HWPROF_IMPL' || continue
    what="$md:$(cat "$c.line")"
    if grep -q 'int main' "$c"; then
      if "$cc" -std=c99 -Wall -Wextra -Wpedantic -Werror "${inc[@]}" "$c" -o "$c.bin" -lm 2>"$c.err" &&
         "$c.bin" >"$c.out" 2>&1; then
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
