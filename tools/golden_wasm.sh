#!/usr/bin/env bash
# The wasm golden rows: `golden` over the reference model set, the committed graphs and
# the node cases under node (the SIMD128 and the scalar build, each with V8's default
# tiering, --liftoff-only and --no-liftoff; the SIMD128 + relaxed SIMD build; the SIMD128 +
# threads build at 2 and 4 threads) and in headless Chromium (Debian's chromium
# driven by playwright-core; the page loads the npm package's js/browser.mjs from a
# localhost server and gets the files in memory: tools/golden_browser.mjs; SIMD128 and
# SIMD128 + relaxed SIMD at 1 thread, and the threads build at 2 in a cross-origin
# isolated page) and in headless
# Firefox ESR (SpiderMonkey; no driver: the page posts its results back to the same
# script's server; SIMD128 and scalar at 1 thread, SIMD128 with only the baseline and only
# the optimising wasm compiler, the threads build at 2), compared
# line by line with the native reference row (g++, --isa ref, 1 thread). Ends with
# `ALL ROWS EQUAL (R rows, L lines)` or the differing lines and rows (exit 1).
# Usage: tools/golden_wasm.sh [--no-build] [--jobs N (default 2)] [--rows "node liftoff threads chromium firefox"]
#   node: default tiering; liftoff: --liftoff-only and --no-liftoff rows (with firefox: its
#   baseline-only and Ion-only rows); threads: node at 2 and 4 threads; chromium and firefox
#   (with threads: their 2-thread rows too).
# Installs chromium and firefox-esr (apt) and the npm dev dependencies when they are missing.
# Results: build/golden-wasm/<row>.txt and build/golden-wasm/table.md. Long: not in CI.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
DEFAULT_KINDS="node liftoff threads chromium firefox"
# shellcheck source=tools/lib/golden_args.sh
source tools/lib/golden_args.sh "$@"
if has chromium; then
  if [ ! -x /usr/bin/chromium ]; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q chromium >/dev/null
  fi
  [ -d node_modules/playwright-core ] || npm install --ignore-scripts --no-audit --no-fund >/dev/null
fi
if has firefox && [ ! -x /usr/bin/firefox-esr ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q firefox-esr >/dev/null
fi
[ "$BUILD" = 1 ] && tools/build.sh native wasm
ARGS="golden --models $M --models $G --cases $C"
rows=(--row "reference=build/native/onemodel --isa ref --threads 1 $ARGS")
for simd in on off; do
  f=simd; [ "$simd" = off ] && f=scalar
  has node && rows+=(--row "node-$f=node js/bin/onemodel.mjs --simd $simd $ARGS")
  if has liftoff; then
    rows+=(--row "node-$f-liftoff-only=node --liftoff-only js/bin/onemodel.mjs --simd $simd $ARGS")
    rows+=(--row "node-$f-no-liftoff=node --no-liftoff js/bin/onemodel.mjs --simd $simd $ARGS")
  fi
done
# The SIMD128 + relaxed SIMD flavour (node 20 validates relaxed SIMD only with the flag).
has node && rows+=(--row "node-simd-relaxed=node --experimental-wasm-relaxed-simd js/bin/onemodel.mjs --relaxed-simd detect $ARGS")
if has threads; then
  for t in 2 4; do rows+=(--row "node-simd-threads$t=node js/bin/onemodel.mjs --threads $t $ARGS"); done
fi
has chromium && rows+=(--row "chromium-simd=node tools/golden_browser.mjs --simd on --models $M --models $G --cases $C")
has chromium && rows+=(--row "chromium-simd-relaxed=node tools/golden_browser.mjs --simd on --relaxed detect --models $M --models $G --cases $C")
if has chromium && has threads; then
  rows+=(--row "chromium-simd-threads2=node tools/golden_browser.mjs --threads 2 --models $M --models $G --cases $C")
fi
FF="node tools/golden_browser.mjs --browser firefox"
if has firefox; then
  rows+=(--row "firefox-simd=$FF --simd on --models $M --models $G --cases $C")
  rows+=(--row "firefox-scalar=$FF --simd off --models $M --models $G --cases $C")
  if has liftoff; then
    rows+=(--row "firefox-simd-baseline-only=$FF --tier baseline --models $M --models $G --cases $C")
    rows+=(--row "firefox-simd-ion-only=$FF --tier ion --models $M --models $G --cases $C")
  fi
  has threads && rows+=(--row "firefox-simd-threads2=$FF --threads 2 --models $M --models $G --cases $C")
fi
exec node tools/golden_hash.mjs --out build/golden-wasm --table build/golden-wasm/table.md --keep-going --jobs "$JOBS" "${rows[@]}"
