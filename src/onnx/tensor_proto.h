// TensorProto <-> Tensor: raw and typed fields, external data beside the model,
// sub-byte unpacking, and a typed error for every inconsistency.
#pragma once

#include <memory>
#include <string>

#include "core/tensor.h"

namespace onnx {
class TensorProto;
}

namespace onemodel::impl {

// Converts tp. Raw data of byte-sized types is borrowed (no copy) and kept alive by
// `owner`; external data is read relative to model_dir (empty: external data is an
// error). `what` names the tensor in messages ("initializer 'w' of model.onnx").
Tensor TensorFromProto(const onnx::TensorProto& tp, const std::string& model_dir, std::shared_ptr<const void> owner,
                       const std::string& what);

// Parses a serialised SequenceProto or OptionalProto (test data of sequence/optional
// values) into a runtime value; `optional` picks which.
struct Value;
Value ValueFromBytes(const uint8_t* data, size_t size, bool optional, const std::string& what);

// Parses a serialised TensorProto (an input_N.pb / output_N.pb file).
Tensor TensorFromBytes(const uint8_t* data, size_t size, const std::string& what, std::string* name = nullptr);

}  // namespace onemodel::impl
