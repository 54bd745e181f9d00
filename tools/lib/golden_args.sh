# Sourced by tools/golden.sh and tools/golden_wasm.sh (after cd to the repository):
# parses [--no-build] [--jobs N] [--rows "KIND ..."] into BUILD, JOBS and KINDS (the
# caller sets DEFAULT_KINDS), defines `has KIND`, and sets M (the reference models,
# which must be prepared), C (the node cases) and G (the committed graphs).
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
