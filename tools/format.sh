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
  # The files clang-format knows by their extension: checked in batches, two at a time
  # (--dry-run: each difference is a warning naming the file); the .inc files one by one,
  # formatted as headers.
  bad=0
  plain=(); incs=()
  for f in "${files[@]}"; do if [[ "$f" == *.inc ]]; then incs+=("$f"); else plain+=("$f"); fi; done
  if ! out=$(printf '%s\0' "${plain[@]}" | xargs -0 -P 2 -n 40 "$CF" --style=file --dry-run --Werror --ferror-limit=1 2>&1); then
    printf '%s\n' "$out" | sed -nE 's/^([^:]+):[0-9]+:[0-9]+: (warning|error): code should be clang-formatted.*/not formatted: \1/p' | sort -u
    printf '%s\n' "$out" | grep -q . || echo "not formatted: clang-format failed"
    bad=1
  fi
  for f in "${incs[@]}"; do
    if ! "$CF" --style=file --assume-filename="${f%.inc}.h" "$f" | cmp -s - "$f"; then echo "not formatted: $f"; bad=1; fi
  done
  [ "$bad" = 0 ] && echo "format: ${#files[@]} files formatted ($("$CF" --version | sed 's/.*version //'))"
  exit "$bad"
fi
for f in "${files[@]}"; do
  out=$("$CF" --style=file --assume-filename="${f%.inc}.h" "$f")
  printf '%s\n' "$out" | cmp -s - "$f" || printf '%s\n' "$out" > "$f"
done
