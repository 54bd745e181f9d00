#!/usr/bin/env bash
# The leniency table (tools/leniency.mjs wrote build/leniency/table.txt: onnxruntime-node's
# verdict on each feed variant) through the C++ and C APIs: tests/api/test_leniency.cpp's
# hidden test. Prints its output and `N passed, N failed` (one check).
cd "$(dirname "$0")/../.."
[ -f build/leniency/table.txt ] || { echo "no build/leniency/table.txt (node tools/leniency.mjs writes it)"; echo "0 passed, 1 failed"; exit 1; }
if ONEMODEL_LENIENCY=build/leniency build/native/onemodel_api_tests "[.leniency]"; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"; exit 1
fi
