#!/usr/bin/env bash
# Shows that the golden tools catch a broken kernel. Builds build/native-broken, where
# the AVX2 target's sum kernel (SumF32, which ReduceSum hands contiguous runs to) combines
# its 16 lanes left to right instead of by the canonical tree: one rounding order flipped
# on one target. Then runs the committed graphs on the committed hashes, the reference
# kernels, AVX2 and AVX-512 rows of that build. Expected: the tools report the AVX2 row
# and the transformer_block/token_sums line as different, and only those.
# Exit 0 when the golden tools reported exactly that; 1 otherwise.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
tools/build.sh native-broken || exit 1
B=build/native-broken/onemodel
G=testdata/graphs
rows=(--row "committed=cat $G/golden-exact.txt" --row "broken-build-ref=$B --isa ref golden --models $G")
for isa in avx2 avx512; do
  if $B targets | sed -n 's/^compiled://p' | tr ' ' '\n' | grep -qx "$isa"; then
    rows+=(--row "broken-build-$isa=$B --isa $isa golden --models $G")
  fi
done
report=$(node tools/golden_hash.mjs --out build/golden-broken-demo --keep-going "${rows[@]}" 2>/dev/null)
rc=$?
echo "$report"
echo "----"
if [ "$rc" != 0 ] && grep -q "^DIFF transformer_block/token_sums .*broken-build-avx2=" <<<"$report" \
   && grep -q "^ROWS DIFFER .*rows: broken-build-avx2)" <<<"$report"; then
  echo "demo: the golden tools named the broken row (broken-build-avx2) and line (transformer_block/token_sums)"
  exit 0
fi
echo "demo: the golden tools did NOT report the broken kernel as expected" >&2
exit 1
