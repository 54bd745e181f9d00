#!/usr/bin/env bash
# Formats the tree's C and C++ sources with clang-format (.clang-format; Debian's
# clang-format 14), or with --check lists the files that differ and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
CF="${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}"
[ -n "$CF" ] || { echo "tools/format.sh: clang-format not found (tools/setup.sh installs it)" >&2; exit 2; }
mapfile -t files < <(git ls-files 'src/*.cpp' 'src/*.h' 'src/*.inc' 'include/*.h' 'wasm/*.cpp' 'native/*.cpp' \
                       'tests/*.cpp' 'tests/*.h' 'tests/*.c' 'tests/*.inc' 'examples/*.cpp' 'examples/*.c')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$CF" --style=file --assume-filename="${f%.inc}.h" "$f" | cmp -s - "$f"; then echo "not formatted: $f"; bad=1; fi
  done
  [ "$bad" = 0 ] && echo "format: ${#files[@]} files formatted ($("$CF" --version | sed 's/.*version //'))"
  exit "$bad"
fi
for f in "${files[@]}"; do
  out=$("$CF" --style=file --assume-filename="${f%.inc}.h" "$f")
  printf '%s\n' "$out" | cmp -s - "$f" || printf '%s\n' "$out" > "$f"
done
