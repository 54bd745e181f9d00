// Names of error codes.
#include "core/error.h"

namespace onemodel::impl {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kInvalidModel: return "invalid_model";
    case ErrorCode::kUnsupportedOp: return "unsupported_op";
    case ErrorCode::kUnsupportedOpset: return "unsupported_opset";
    case ErrorCode::kTypeMismatch: return "type_mismatch";
    case ErrorCode::kShapeMismatch: return "shape_mismatch";
    case ErrorCode::kMissingInput: return "missing_input";
    case ErrorCode::kGraphCycle: return "graph_cycle";
    case ErrorCode::kOutOfRange: return "out_of_range";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kUnsupportedIsa: return "unsupported_isa";
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kLimitExceeded: return "limit_exceeded";
    case ErrorCode::kCancelled: return "cancelled";
    case ErrorCode::kOutOfMemory: return "out_of_memory";
  }
  return "unknown";
}

}  // namespace onemodel::impl
