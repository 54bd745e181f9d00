#!/usr/bin/env bash
# Prints the ONNX node-case folder to use and, on stderr, which set it is:
# $ONNX_NODE_CASES, else ../shared/onnx-node-1.22 (beside the repo, as CI has it),
# else Debian's libonnx-testdata (the ONNX 1.12 set).
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
for d in "${ONNX_NODE_CASES:-}" "$ROOT/../shared/onnx-node-1.22" /usr/share/libonnx-testdata/data/node; do
  if [ -n "$d" ] && [ -d "$d" ]; then
    d="$(cd "$d" && pwd)"
    case "$d" in
      */onnx-node-1.22) echo "[cases] ONNX 1.22.0 node cases: $d" >&2 ;;
      */libonnx-testdata/*) echo "[cases] ONNX 1.12 node cases (Debian libonnx-testdata): $d" >&2 ;;
      *) echo "[cases] node cases from ONNX_NODE_CASES: $d" >&2 ;;
    esac
    echo "$d"; exit 0
  fi
done
echo "[cases] no ONNX node cases found" >&2
exit 1
