// Typed errors: every failure the library reports is an onemodel::Error with a code
// the caller can switch on and a message naming the model, node and input involved.
#pragma once

#include <stdexcept>
#include <string>

namespace onemodel::impl {

// The public API (include/onemodel/onemodel.h) numbers these from 1 in this order (static_asserts in
// src/api/api.cpp): append new codes at the end in both (the numbers are stable).
enum class ErrorCode {
  kInvalidArgument,   // a caller-supplied option or value is not acceptable
  kInvalidModel,      // the model bytes are not a well-formed ONNX model
  kUnsupportedOp,     // an operator (or domain) this runtime does not implement
  kUnsupportedOpset,  // an opset version beyond what is supported
  kTypeMismatch,      // an input or attribute of the wrong element type
  kShapeMismatch,     // an input of the wrong shape, or inconsistent shapes
  kMissingInput,      // a required input was not given
  kGraphCycle,        // the graph's nodes cannot be ordered
  kOutOfRange,        // sizes that overflow or exceed what can be allocated
  kIo,                // a file could not be read or written
  kUnsupportedIsa,    // an instruction set was requested that this CPU or build lacks
  kInternal,          // a bug in OneModel: please report it
  kLimitExceeded,     // a configured limit (SessionOptions' max_*) would be exceeded
  kCancelled,         // the run was terminated or ran past its time limit
  kOutOfMemory,       // the system (or wasm memory) refused an allocation
};

// Returns the stable lower-case name of a code ("invalid_model", ...).
const char* ErrorCodeName(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(std::string(ErrorCodeName(code)) + ": " + message), code_(code), message_(message) {}
  ErrorCode code() const { return code_; }
  // The message without the code's name in front (what() has both).
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

}  // namespace onemodel::impl
