#!/usr/bin/env bash
# ONNX Runtime's contrib operators as node-case folders: tools/contrib_cases.sh [DIR]
# (default build/contrib-cases). tools/contrib_cases.py writes the models and inputs,
# tools/contrib_cases.mjs runs them through onnxruntime-node 1.30 (a dev dependency: npm
# install) for the expected outputs, tools/contrib_cases.py finish stores them. Then
# `onemodel cases DIR` runs them (tools/test.sh does, on every row). tools/onnx_main_cases.py
# adds the node cases of onnx's main branch (opset 28) beyond ONNX 1.22 to the same folder,
# tools/onnx_attention_cases.py its Attention cases (opsets 23 to 25), tools/onnx_more_cases.py
# the other ten (RNN, GRU, LSTM, OneHot, ReduceMax, ScatterND).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DIR="${1:-$ROOT/build/contrib-cases}"
/usr/bin/python3 "$ROOT/tools/contrib_cases.py" make "$DIR"
node "$ROOT/tools/contrib_cases.mjs" "$DIR" | tail -1
/usr/bin/python3 "$ROOT/tools/contrib_cases.py" finish "$DIR"
/usr/bin/python3 "$ROOT/tools/onnx_main_cases.py" "$DIR"
/usr/bin/python3 "$ROOT/tools/onnx_attention_cases.py" "$DIR"
/usr/bin/python3 "$ROOT/tools/onnx_more_cases.py" "$DIR"
