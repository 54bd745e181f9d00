// TensorProto conversion (see tensor_proto.h).
#include "onnx/tensor_proto.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/bits.h"
#include "core/error.h"
#include "core/io.h"
#include "core/limits.h"
#include "onnx/onnx-data.pb.h"
#include "onnx/onnx.pb.h"
#include "core/value.h"

namespace onemodel::impl {

std::string NormalizeLocation(const std::string& location) {
  std::string out;
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find_first_of("/\\", start);
    if (end == std::string::npos) end = location.size();
    const std::string part = location.substr(start, end - start);
    if (!part.empty() && part != ".") {
      if (!out.empty()) out.push_back('/');
      out.append(part);
    }
    start = end + 1;
  }
  return out;
}

namespace {

// Unpacks sub-byte elements (bits = 4 or 2) from ONNX's packed layout, low bits first;
// signed types are sign-extended.
void UnpackSubByte(const uint8_t* packed, size_t packed_len, int bits, bool is_signed, int64_t n, uint8_t* out,
                   const std::string& what) {
  const int per = 8 / bits;
  if (packed_len < size_t((n + per - 1) / per)) {
    throw Error(ErrorCode::kInvalidModel, what + ": packed data holds " + std::to_string(packed_len) +
                                              " bytes, shape needs " + std::to_string((n + per - 1) / per));
  }
  const unsigned mask = (1u << bits) - 1;
  for (int64_t i = 0; i < n; ++i) {
    unsigned v = (packed[i / per] >> ((i % per) * bits)) & mask;
    if (is_signed && (v >> (bits - 1))) v |= ~mask;
    out[i] = uint8_t(v);
  }
}

bool IsSigned(DType t) { return t == DType::kInt4 || t == DType::kInt2; }

// An external tensor's bytes, from its location (a path inside the model's folder, or
// the name of a file the caller gave), offset and length: `data` points at them and
// `owner` keeps them alive.
struct ExternalRange {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> owner;
};

ExternalRange ReadExternal(const onnx::TensorProto& tp, const ExternalSource& source, const std::string& what) {
  std::string location;
  int64_t offset = 0, length = -1;
  auto number = [&](const std::string& key, const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno || v < 0) {
      throw Error(ErrorCode::kInvalidModel, what + ": external data " + key + " '" + text + "' is not a number >= 0");
    }
    return int64_t(v);
  };
  for (const auto& kv : tp.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = number("offset", kv.value());
    else if (kv.key() == "length")
      length = number("length", kv.value());
  }
  if (location.empty()) throw Error(ErrorCode::kInvalidModel, what + ": external data without a location");
  CheckRelativeLocation(location, what);
  auto check_range = [&](int64_t total) {
    if (total >= 0 && (offset > total || (length >= 0 && length > total - offset))) {
      throw Error(ErrorCode::kInvalidModel, what + ": external data [" + std::to_string(offset) + ", " +
                                                (length >= 0 ? std::to_string(offset + length) : std::string("end")) +
                                                ") lies past the end of '" + location + "' (" + std::to_string(total) +
                                                " bytes)");
    }
  };
  const auto given = source.files.find(NormalizeLocation(location));
  if (given != source.files.end()) {
    const ExternalBytes& file = given->second;
    check_range(int64_t(file.size));
    const size_t n = size_t(length >= 0 ? length : int64_t(file.size) - offset);
    AddModelBytes(uint64_t(n), what);
    const uint8_t* p = file.data + offset;
    if (file.owner) return {p, n, file.owner};
    auto copy = std::make_shared<std::vector<uint8_t>>(p, p + n);
    return {copy->data(), n, copy};
  }
  if (source.dir.empty()) {
    std::string names;
    for (const auto& entry : source.files) {
      if (!names.empty()) names.append(", ");
      names.append("'").append(entry.first).append("'");
    }
    throw Error(ErrorCode::kInvalidModel,
                what + ": external data '" + location + "' was not given" +
                    (names.empty() ? std::string() : " (the files given: " + names + ")") +
                    ": load the model from its path, or pass the file's bytes as external data");
  }
  const std::string path = ConfinedPath(source.dir, location, what);
  const int64_t total = FileSize(path);
  check_range(total);
  const int64_t n = length >= 0 ? length : (total >= 0 ? total - offset : 0);
  AddModelBytes(uint64_t(n), what);
  std::shared_ptr<const FileBytes> bytes = ReadFile(path, offset, length);
  return {bytes->data(), bytes->size(), bytes};
}

// A tensor from the typed fields (float_data, int64_data, ...) for n elements of dt.
Tensor FromTypedFields(const onnx::TensorProto& tp, DType dt, const Shape& shape, int64_t n, const std::string& what) {
  const int bits = DTypeBits(dt);
  // Every value the shape declares must be there before the tensor is allocated (a
  // declared 4 GiB initializer without data is an error, not a 4 GiB allocation).
  {
    int64_t have = tp.int32_data_size(), want = n;
    const char* field = "int32_data";
    switch (dt) {
      case DType::kFloat:
      case DType::kComplex64:
        have = tp.float_data_size(), field = "float_data", want = dt == DType::kComplex64 ? 2 * n : n;
        break;
      case DType::kDouble:
      case DType::kComplex128:
        have = tp.double_data_size(), field = "double_data", want = dt == DType::kComplex128 ? 2 * n : n;
        break;
      case DType::kInt64: have = tp.int64_data_size(), field = "int64_data"; break;
      case DType::kUInt64:
      case DType::kUInt32: have = tp.uint64_data_size(), field = "uint64_data"; break;
      default:
        if (bits < 8) want = (n + 8 / bits - 1) / (8 / bits);
        break;
    }
    if (have < want) {
      throw Error(ErrorCode::kInvalidModel, what + ": " + field + " holds " + std::to_string(have) + " values, shape " +
                                                ShapeToString(shape) + " needs " + std::to_string(want));
    }
  }
  Tensor t(dt, shape, what);
  auto need_count = [&](int64_t have, int64_t want, const char* field) {
    if (have < want) {
      throw Error(ErrorCode::kInvalidModel, what + ": " + field + " holds " + std::to_string(have) + " values, shape " +
                                                ShapeToString(shape) + " needs " + std::to_string(want));
    }
  };
  switch (dt) {
    case DType::kFloat:
    case DType::kComplex64: {
      const int64_t m = dt == DType::kComplex64 ? 2 * n : n;
      need_count(tp.float_data_size(), m, "float_data");
      if (m) std::memcpy(t.mutable_data<float>(), tp.float_data().data(), size_t(m) * 4);
      break;
    }
    case DType::kDouble:
    case DType::kComplex128: {
      const int64_t m = dt == DType::kComplex128 ? 2 * n : n;
      need_count(tp.double_data_size(), m, "double_data");
      if (m) std::memcpy(t.mutable_data<double>(), tp.double_data().data(), size_t(m) * 8);
      break;
    }
    case DType::kInt64:
      need_count(tp.int64_data_size(), n, "int64_data");
      if (n) std::memcpy(t.mutable_data<int64_t>(), tp.int64_data().data(), size_t(n) * 8);
      break;
    case DType::kUInt64:
    case DType::kUInt32: {
      need_count(tp.uint64_data_size(), n, "uint64_data");
      for (int64_t i = 0; i < n; ++i) {
        if (dt == DType::kUInt64)
          t.mutable_data<uint64_t>()[i] = tp.uint64_data(int(i));
        else
          t.mutable_data<uint32_t>()[i] = uint32_t(tp.uint64_data(int(i)));
      }
      break;
    }
    default: {
      if (bits < 8) {
        const int per = 8 / bits;
        need_count(tp.int32_data_size(), (n + per - 1) / per, "int32_data");
        std::vector<uint8_t> packed(size_t(tp.int32_data_size()));
        for (int i = 0; i < tp.int32_data_size(); ++i) packed[size_t(i)] = uint8_t(tp.int32_data(i));
        UnpackSubByte(packed.data(), packed.size(), bits, IsSigned(dt), n, t.mutable_data<uint8_t>(), what);
        break;
      }
      need_count(tp.int32_data_size(), n, "int32_data");
      // Each value is the element's bit pattern (int8..int32, float16, bfloat16, float8,
      // bool): stored by width, in the host's byte order.
      const size_t es = DTypeStorageSize(dt);
      uint8_t* out = t.mutable_data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t v = uint32_t(tp.int32_data(int(i)));
        uint8_t* dst = out + size_t(i) * es;
        if (es == 1) {
          *dst = uint8_t(v);
        } else if (es == 2) {
          const uint16_t h = uint16_t(v);
          std::memcpy(dst, &h, 2);
        } else {
          std::memcpy(dst, &v, 4);
        }
      }
      break;
    }
  }
  return t;
}

}  // namespace

Tensor TensorFromProto(const onnx::TensorProto& tp, const ExternalSource& external_source,
                       std::shared_ptr<const void> owner, const std::string& what) {
  if (!IsKnownDType(tp.data_type())) {
    throw Error(ErrorCode::kTypeMismatch, what + ": unknown element type " + std::to_string(tp.data_type()));
  }
  const DType dt = DType(tp.data_type());
  if (dt == DType::kUndefined) throw Error(ErrorCode::kInvalidModel, what + ": element type is UNDEFINED");
  Shape shape(tp.dims().begin(), tp.dims().end());
  for (int64_t d : shape) {
    if (d < 0) throw Error(ErrorCode::kInvalidModel, what + ": negative dimension in " + ShapeToString(shape));
  }
  const int64_t n = CheckedNumElements(shape, DTypeStorageSize(dt), what);
  const std::string name = what;
  const int bits = DTypeBits(dt);

  if (dt == DType::kString) {
    if (tp.string_data_size() != n) {
      throw Error(ErrorCode::kInvalidModel,
                  what + ": " + std::to_string(tp.string_data_size()) + " strings for shape " + ShapeToString(shape));
    }
    Tensor t(dt, shape, what);
    for (int64_t i = 0; i < n; ++i) t.mutable_strings()[size_t(i)] = tp.string_data(int(i));
    return t;
  }

  // Raw bytes: inline, or external.
  const std::string* raw = nullptr;
  ExternalRange external;
  if (tp.data_location() == onnx::TensorProto::EXTERNAL) {
    external = ReadExternal(tp, external_source, what);
  } else if (tp.has_raw_data()) {
    raw = &tp.raw_data();
  }
  const bool is_external = external.owner != nullptr;
  const uint8_t* bytes = is_external ? external.data : raw ? reinterpret_cast<const uint8_t*>(raw->data()) : nullptr;
  const size_t nbytes = is_external ? external.size : raw ? raw->size() : 0;

  if (bytes) {
    if (bits < 8) {
      if (uint64_t(nbytes) * uint64_t(8 / bits) < uint64_t(n)) {
        throw Error(ErrorCode::kInvalidModel, what + ": tensor data is " + std::to_string(nbytes) + " bytes, shape " +
                                                  ShapeToString(shape) + " of " + DTypeName(dt) + " needs " +
                                                  std::to_string((n + 8 / bits - 1) / (8 / bits)));
      }
      Tensor t(dt, shape, what);
      UnpackSubByte(bytes, nbytes, bits, IsSigned(dt), n, t.mutable_data<uint8_t>(), what);
      return t;
    }
    const size_t need = size_t(n) * size_t(bits / 8);
    if (nbytes < need) {
      throw Error(ErrorCode::kInvalidModel, what + ": tensor data is " + std::to_string(nbytes) + " bytes, shape " +
                                                ShapeToString(shape) + " of " + DTypeName(dt) + " needs " +
                                                std::to_string(need));
    }
    // Borrowed in place when aligned, except where the host's byte order is not the data's
    // (little-endian): a big-endian host copies and swaps.
    const size_t unit = DTypeScalarSize(dt);
    const bool aligned = reinterpret_cast<uintptr_t>(bytes) % 8 == 0 && (kLittleEndian || unit == 1);
    if (is_external && aligned) return Tensor::Borrow(dt, shape, external.owner, bytes, what);
    if (!is_external && owner && aligned) return Tensor::Borrow(dt, shape, owner, bytes, what);
    Tensor t(dt, shape, what);
    std::memcpy(t.mutable_data<uint8_t>(), bytes, need);
    LittleEndianToHost(t.mutable_data<uint8_t>(), need / unit, unit);
    return t;
  }

  return FromTypedFields(tp, dt, shape, n, what);
}

Tensor TensorFromBytes(const uint8_t* data, size_t size, const std::string& what, std::string* name) {
  auto tp = std::make_shared<onnx::TensorProto>();
  if (size > size_t(INT32_MAX) || !tp->ParseFromArray(data, int(size))) {
    throw Error(ErrorCode::kInvalidModel, what + ": not a serialised TensorProto (truncated or corrupt)");
  }
  if (name) *name = tp->name();
  return TensorFromProto(*tp, ExternalSource{}, tp, what);
}

namespace {
Value FromSequence(const onnx::SequenceProto& sp, const std::shared_ptr<const void>& owner, const std::string& what) {
  if (sp.sequence_values_size() || sp.optional_values_size()) {
    throw Error(ErrorCode::kUnsupportedOp, what + ": nested sequences are not supported");
  }
  Value v;
  v.kind = Value::Kind::kSequence;
  for (const auto& tp : sp.tensor_values()) v.sequence.push_back(TensorFromProto(tp, ExternalSource{}, owner, what));
  return v;
}
}  // namespace

Value ValueFromBytes(const uint8_t* data, size_t size, bool optional, const std::string& what) {
  if (size > size_t(INT32_MAX)) throw Error(ErrorCode::kInvalidModel, what + ": too large");
  if (!optional) {
    auto sp = std::make_shared<onnx::SequenceProto>();
    if (!sp->ParseFromArray(data, int(size))) throw Error(ErrorCode::kInvalidModel, what + ": not a SequenceProto");
    return FromSequence(*sp, sp, what);
  }
  auto op = std::make_shared<onnx::OptionalProto>();
  if (!op->ParseFromArray(data, int(size))) throw Error(ErrorCode::kInvalidModel, what + ": not an OptionalProto");
  if (op->has_tensor_value()) return Value::FromTensor(TensorFromProto(op->tensor_value(), ExternalSource{}, op, what));
  if (op->has_sequence_value()) return FromSequence(op->sequence_value(), op, what);
  if (op->has_optional_value()) throw Error(ErrorCode::kUnsupportedOp, what + ": nested optionals are not supported");
  Value v;
  v.kind = Value::Kind::kOptionalEmpty;
  return v;
}

}  // namespace onemodel::impl
