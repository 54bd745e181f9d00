// Conversions between the public API's types (include/onemodel/onemodel.h) and the
// engine's, shared by the C++ API (api.cpp) and the C ABI (c_api.cpp).
#pragma once

#include <atomic>

#include "onemodel/onemodel.h"

#include "core/error.h"
#include "core/tensor.h"
#include "graph/graph.h"
#include "core/value.h"

namespace onemodel::detail {

struct Access {
  // An engine tensor as a public one (no copy: the public tensor keeps it alive).
  static Tensor FromImpl(impl::Tensor t);
  // A public tensor as an engine tensor borrowing its elements (strings are copied).
  static impl::Tensor ToImpl(const Tensor& t);
  // True when p points into the memory of `view` (a Tensor::View).
  static bool Overlaps(const Tensor& view, const void* p);
  // RunOptions' terminate flag (shared by its copies).
  static std::shared_ptr<const std::atomic<bool>> TerminateFlag(const RunOptions& o);
};

ErrorCode FromImpl(impl::ErrorCode c);
// Element types: the public numbering is the engine's (both ONNX's).
inline impl::DType ToImpl(ElementType t) { return impl::DType(int32_t(t)); }
inline ElementType FromImpl(impl::DType t) { return ElementType(int32_t(t)); }
// Inside a catch block: rethrows the exception in flight as onemodel::Error (engine
// errors keep their code and message; out of memory is kOutOfRange).
[[noreturn]] void Rethrow();

impl::Value ToImplValue(const Value& v, const std::string& what);
Value FromImplValue(impl::Value v);
ValueInfo FromImplType(const std::string& name, const impl::ValueType& t);

}  // namespace onemodel::detail
