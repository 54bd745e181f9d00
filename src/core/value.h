// A runtime value: a tensor, a sequence of tensors, or an empty optional.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace onemodel::impl {

struct Value {
  enum class Kind { kNone, kTensor, kSequence, kOptionalEmpty };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;

  static Value FromTensor(Tensor t) {
    Value v;
    v.kind = Kind::kTensor;
    v.tensor = std::move(t);
    return v;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
};

}  // namespace onemodel::impl
