#!/usr/bin/env bash
# Rewrites testdata/cases-passing-<set>.txt from a native run: the cases that pass now,
# which tests/cases_test.sh then holds every row to. Run it after adding operators;
# the commit shows which cases were gained (a lost case is a regression to explain).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
DIR=$(tools/find_cases.sh)
SET=$(basename "$DIR"); [ "$SET" = node ] && SET=onnx-1.12
build/native/onemodel cases "$DIR" --verbose 2>&1 >/dev/null | sed -n 's/^PASS //p' | sort > "testdata/cases-passing-$SET.txt"
echo "testdata/cases-passing-$SET.txt: $(wc -l < "testdata/cases-passing-$SET.txt") cases"
