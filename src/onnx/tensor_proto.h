// TensorProto <-> Tensor: raw and typed fields, external data beside the model,
// sub-byte unpacking, and a typed error for every inconsistency.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace onnx {
class TensorProto;
}

namespace onemodel::impl {

// The bytes of one external-data file given by the caller instead of read from disk.
// With an owner, tensors borrow their 8-byte aligned ranges (no copy) and keep it alive;
// without, each tensor copies its range (the caller's bytes are only read while loading).
struct ExternalBytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

// Where a model's external data comes from: `files` (keyed by NormalizeLocation of the
// name the caller gave) first, then the files of folder `dir` (empty: none).
struct ExternalSource {
  std::string dir;
  std::map<std::string, ExternalBytes> files;
};

// An external-data location in the one spelling the lookup uses: '\\' read as '/', empty
// and "." components dropped ("./w/../x" keeps its ".."; CheckRelativeLocation refuses it).
std::string NormalizeLocation(const std::string& location);

// Converts tp. Raw data of byte-sized types is borrowed (no copy) and kept alive by
// `owner`; external data comes from `external` (a kInvalidModel error when it names a
// file neither given nor in the folder). `what` names the tensor in messages
// ("initializer 'w' of model.onnx").
Tensor TensorFromProto(const onnx::TensorProto& tp, const ExternalSource& external, std::shared_ptr<const void> owner,
                       const std::string& what);

// Parses a serialised SequenceProto or OptionalProto (test data of sequence/optional
// values) into a runtime value; `optional` picks which.
struct Value;
Value ValueFromBytes(const uint8_t* data, size_t size, bool optional, const std::string& what);

// Parses a serialised TensorProto (an input_N.pb / output_N.pb file).
Tensor TensorFromBytes(const uint8_t* data, size_t size, const std::string& what, std::string* name = nullptr);

}  // namespace onemodel::impl
