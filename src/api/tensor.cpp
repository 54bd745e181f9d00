// The public API's tensors and values (include/onemodel/onemodel.h): owning tensors and
// views over the caller's memory, element access, sequences, and their descriptions.
#include "api/convert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>

#include "core/exact.h"
#include "core/golden.h"
#include "core/io.h"
#include "core/minifloat.h"
#include "core/npy.h"
#include "core/random.h"
#include "core/sha256.h"
#include "core/threadpool.h"
#include "passes/infer.h"
#include "onnx/import.h"
#include "onnx/tensor_proto.h"
#include "ops/op_context.h"
#include "ref/reduce.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"

#ifndef ONEMODEL_VERSION
#define ONEMODEL_VERSION "0.0.0"
#endif

namespace onemodel {

using detail::Access;
using detail::Rethrow;

// ------------------------------------------------------------------ element types

std::string ElementTypeName(ElementType type) { return impl::DTypeName(detail::ToImpl(type)); }

size_t ElementSize(ElementType type) {
  if (!impl::IsKnownDType(int32_t(type))) return 0;
  return impl::DTypeStorageSize(detail::ToImpl(type));
}

// ----------------------------------------------------------------------- tensors

Tensor::Tensor() = default;

Tensor::Tensor(ElementType type, std::vector<int64_t> shape) {
  try {
    if (type == ElementType::kUndefined || !impl::IsKnownDType(int32_t(type))) {
      throw Error(ErrorCode::kInvalidArgument, "unknown element type " + std::to_string(int32_t(type)));
    }
    *this = Access::FromImpl(impl::Tensor(detail::ToImpl(type), impl::Shape(shape), "tensor"));
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::FromBytes(ElementType type, std::vector<int64_t> shape, const void* data, size_t bytes) {
  try {
    if (type == ElementType::kString)
      throw Error(ErrorCode::kInvalidArgument, "Tensor::FromBytes: use FromStrings for strings");
    if (type == ElementType::kUndefined || !impl::IsKnownDType(int32_t(type))) {
      throw Error(ErrorCode::kInvalidArgument, "unknown element type " + std::to_string(int32_t(type)));
    }
    impl::Tensor t = impl::Tensor::Uninitialized(detail::ToImpl(type), impl::Shape(shape), "tensor");
    if (bytes != t.nbytes()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "Tensor::FromBytes: " + ElementTypeName(type) + impl::ShapeToString(t.shape()) + " takes " +
                      std::to_string(t.nbytes()) + " bytes, given " + std::to_string(bytes));
    }
    if (bytes && !data) throw Error(ErrorCode::kInvalidArgument, "Tensor::FromBytes: data is null");
    if (bytes) std::memcpy(t.mutable_data<uint8_t>(), data, bytes);
    return Access::FromImpl(std::move(t));
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::FromStrings(std::vector<std::string> values, std::vector<int64_t> shape) {
  try {
    impl::Tensor t(impl::DType::kString, impl::Shape(shape), "string tensor");
    if (int64_t(values.size()) != t.numel()) {
      throw Error(ErrorCode::kInvalidArgument, "Tensor::FromStrings: shape " + impl::ShapeToString(t.shape()) +
                                                   " has " + std::to_string(t.numel()) + " elements, given " +
                                                   std::to_string(values.size()));
    }
    Tensor r;
    r.type_ = ElementType::kString;
    r.shape_ = std::move(shape);
    r.size_ = t.numel();
    r.strings_ = std::make_shared<std::vector<std::string>>(std::move(values));
    return r;
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::View(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes) {
  try {
    if (type == ElementType::kString)
      throw Error(ErrorCode::kInvalidArgument, "Tensor::View: strings cannot be viewed");
    if (type == ElementType::kUndefined || !impl::IsKnownDType(int32_t(type))) {
      throw Error(ErrorCode::kInvalidArgument, "unknown element type " + std::to_string(int32_t(type)));
    }
    const int64_t n = impl::CheckedNumElements(impl::Shape(shape), ElementSize(type), "Tensor::View");
    const size_t want = size_t(n) * ElementSize(type);
    if (bytes != want) {
      throw Error(ErrorCode::kInvalidArgument, "Tensor::View: " + ElementTypeName(type) +
                                                   impl::ShapeToString(impl::Shape(shape)) + " takes " +
                                                   std::to_string(want) + " bytes, given " + std::to_string(bytes));
    }
    if (bytes && !data) throw Error(ErrorCode::kInvalidArgument, "Tensor::View: data is null");
    Tensor r;
    r.type_ = type;
    r.shape_ = std::move(shape);
    r.size_ = n;
    r.data_ = data;
    r.view_ = true;
    return r;
  } catch (...) {
    Rethrow();
  }
}

void* Tensor::mutable_data() {
  if (view_ || type_ == ElementType::kString || empty()) return view_ ? data_ : nullptr;
  if (shared_ || owner_.use_count() > 1) {
    Tensor copy = Clone();
    *this = std::move(copy);
  }
  return data_;
}

const std::vector<std::string>& Tensor::strings() const {
  if (type_ != ElementType::kString) {
    throw Error(ErrorCode::kTypeMismatch, "Tensor::strings: the tensor is " + ElementTypeName(type_) + ", not STRING");
  }
  return *strings_;
}

void Tensor::CheckAccess(size_t elem_size, ElementType want) const {
  if (type_ == want) return;
  auto in = [&](std::initializer_list<ElementType> l) { return std::find(l.begin(), l.end(), type_) != l.end(); };
  using E = ElementType;
  bool ok = false;
  if (want == E::kUInt16) ok = in({E::kFloat16, E::kBFloat16});
  if (want == E::kUInt8) {
    ok = in({E::kBool, E::kFloat8E4M3FN, E::kFloat8E4M3FNUZ, E::kFloat8E5M2, E::kFloat8E5M2FNUZ, E::kFloat8E8M0,
             E::kUInt4, E::kInt4, E::kFloat4E2M1, E::kUInt2, E::kInt2});
  }
  if (want == E::kInt8) ok = in({E::kInt4, E::kInt2});
  if (!ok || elem_size != ElementSize(type_)) {
    throw Error(ErrorCode::kTypeMismatch, "the tensor is " + ElementTypeName(type_) + ", not " + ElementTypeName(want));
  }
}

double Tensor::ElementAsDouble(int64_t i) const {
  if (type_ == ElementType::kString || type_ == ElementType::kComplex64 || type_ == ElementType::kComplex128 ||
      empty()) {
    throw Error(ErrorCode::kTypeMismatch, "ElementAsDouble: the tensor is " + ElementTypeName(type_));
  }
  if (i < 0 || i >= size_) {
    throw Error(ErrorCode::kOutOfRange,
                "ElementAsDouble: index " + std::to_string(i) + " outside [0, " + std::to_string(size_) + ")");
  }
  try {
    return impl::ElementAsDouble(Access::ToImpl(*this), i);
  } catch (...) {
    Rethrow();
  }
}

Tensor Tensor::Clone() const {
  if (empty()) return Tensor();
  if (type_ == ElementType::kString) return FromStrings(*strings_, shape_);
  return FromBytes(type_, shape_, data_, byte_size());
}

// ------------------------------------------------------------------------ values

Value Value::Sequence(std::vector<Tensor> tensors) {
  Value v;
  v.kind_ = Kind::kSequence;
  v.sequence_ = std::move(tensors);
  return v;
}

const Tensor& Value::tensor() const {
  if (kind_ != Kind::kTensor) throw Error(ErrorCode::kTypeMismatch, "the value is not a tensor");
  return tensor_;
}
Tensor& Value::tensor() {
  if (kind_ != Kind::kTensor) throw Error(ErrorCode::kTypeMismatch, "the value is not a tensor");
  return tensor_;
}
const std::vector<Tensor>& Value::sequence() const {
  if (kind_ != Kind::kSequence) throw Error(ErrorCode::kTypeMismatch, "the value is not a sequence");
  return sequence_;
}

std::string ValueInfo::ToString() const {
  switch (kind) {
    case Kind::kTensor: {
      std::string s = ElementTypeName(type);
      if (!has_shape) return s + "[?]";
      s += "[";
      for (size_t k = 0; k < shape.size(); ++k) {
        const std::string sym = k < symbolic.size() ? symbolic[k] : "";
        s += (k ? "," : "") + (shape[k] >= 0 ? std::to_string(shape[k]) : (sym.empty() ? "?" : sym));
      }
      return s + "]";
    }
    case Kind::kSequence: return "sequence<" + (element.empty() ? "?" : element[0].ToString()) + ">";
    case Kind::kOptional: return "optional<" + (element.empty() ? "?" : element[0].ToString()) + ">";
    case Kind::kMap: return "map";
    default: return "?";
  }
}

std::string RunProfile::ToString() const {
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "[onemodel] profile: %.3f ms in all; recycled tensor buffers %.1f MiB\n", total_ms,
                double(recycled_buffer_bytes) / 1048576.0);
  s += line;
  const MemoryPlanStats& m = memory_plan;
  if (m.runs) {
    std::snprintf(line, sizeof line,
                  "[onemodel] memory plan: %s; arena %.1f MiB for %zu buffers (%.1f MiB unshared); this run %zu from "
                  "the arena, %zu elsewhere\n",
                  m.disabled        ? "off for these shapes"
                  : m.last_replayed ? "followed"
                                    : "made from this run",
                  double(m.arena_bytes) / 1048576.0, m.planned_buffers, double(m.planned_bytes) / 1048576.0,
                  m.last_from_arena, m.last_elsewhere);
    s += line;
  }
  for (const Entry& e : entries) {
    std::snprintf(line, sizeof line, "[onemodel]   %-40s %10.3f ms %5.1f%% %6lld nodes\n", e.name.c_str(), e.ms,
                  100.0 * e.ms / (total_ms > 0 ? total_ms : 1), static_cast<long long>(e.count));
    s += line;
  }
  return s;
}

}  // namespace onemodel
