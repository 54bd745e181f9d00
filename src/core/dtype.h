// ONNX element types (TensorProto.DataType numbering) and their properties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onemodel::impl {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};
constexpr int32_t kMaxDType = 26;

// Returns true for the numbers above (excluding kUndefined).
bool IsKnownDType(int32_t v);
// Returns the ONNX name ("FLOAT", "FLOAT8E4M3FN", ...), or "UNKNOWN(v)".
std::string DTypeName(DType t);
// Bits per element: 1..128 (strings: 0). Sub-byte types (4 and 2 bits) are packed in
// ONNX's wire layout (low bits first); in memory OneModel keeps one element per byte.
int DTypeBits(DType t);
// Bytes per element in OneModel's in-memory layout (sub-byte types: 1; strings: 0).
size_t DTypeStorageSize(DType t);
// Bytes of the scalars an element is made of: the storage size, except complex types (two
// floats or two doubles). Byte-order conversions swap in units of this size.
size_t DTypeScalarSize(DType t);
bool IsFloatDType(DType t);    // any binary float format, including the narrow ones
bool IsSubByteDType(DType t);  // 4- and 2-bit types

}  // namespace onemodel::impl
