# Sourced by tools/golden.sh and tools/golden_wasm.sh (after cd to the repository):
# parses [--no-build] [--jobs N] [--rows "KIND ..."] into BUILD, JOBS and KINDS (the
# caller sets DEFAULT_KINDS), defines `has KIND`, and sets M (the reference models,
# which must be prepared), C (the node cases, then --cases and the contrib cases when
# there are any) and G (the committed graphs).
SCRIPT="tools/$(basename "$0")"
BUILD=1; JOBS=2; KINDS="$DEFAULT_KINDS"
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --jobs) JOBS="$2"; shift ;;
    --rows) KINDS="$2"; shift ;;
    *) echo "$SCRIPT: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
has() { [[ " $KINDS " == *" $1 "* ]]; }
M="${ONEMODEL_MODELS:-$PWD/models}"
[ -f "$M/resnet50.onnx" ] || { echo "$SCRIPT: no reference models in $M: run tools/prepare.sh" >&2; exit 1; }
C="$(tools/find_cases.sh)"
G=testdata/graphs
# ONNX Runtime's contrib operators' cases (tools/contrib_cases.sh; written here when
# onnxruntime-node is installed and build/contrib-cases is missing): their case lines
# follow the node cases'.
if [ ! -d build/contrib-cases ] && [ -d node_modules/onnxruntime-node ]; then
  tools/contrib_cases.sh build/contrib-cases >/dev/null 2>&1 || rm -rf build/contrib-cases
fi
if [ -d build/contrib-cases ]; then C="$C --cases $PWD/build/contrib-cases"; fi
