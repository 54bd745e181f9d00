// Element type properties.
#include "core/dtype.h"

namespace onemodel::impl {

bool IsKnownDType(int32_t v) { return v >= 1 && v <= kMaxDType; }

std::string DTypeName(DType t) {
  switch (t) {
    case DType::kUndefined: return "UNDEFINED";
    case DType::kFloat: return "FLOAT";
    case DType::kUInt8: return "UINT8";
    case DType::kInt8: return "INT8";
    case DType::kUInt16: return "UINT16";
    case DType::kInt16: return "INT16";
    case DType::kInt32: return "INT32";
    case DType::kInt64: return "INT64";
    case DType::kString: return "STRING";
    case DType::kBool: return "BOOL";
    case DType::kFloat16: return "FLOAT16";
    case DType::kDouble: return "DOUBLE";
    case DType::kUInt32: return "UINT32";
    case DType::kUInt64: return "UINT64";
    case DType::kComplex64: return "COMPLEX64";
    case DType::kComplex128: return "COMPLEX128";
    case DType::kBFloat16: return "BFLOAT16";
    case DType::kFloat8E4M3FN: return "FLOAT8E4M3FN";
    case DType::kFloat8E4M3FNUZ: return "FLOAT8E4M3FNUZ";
    case DType::kFloat8E5M2: return "FLOAT8E5M2";
    case DType::kFloat8E5M2FNUZ: return "FLOAT8E5M2FNUZ";
    case DType::kUInt4: return "UINT4";
    case DType::kInt4: return "INT4";
    case DType::kFloat4E2M1: return "FLOAT4E2M1";
    case DType::kFloat8E8M0: return "FLOAT8E8M0";
    case DType::kUInt2: return "UINT2";
    case DType::kInt2: return "INT2";
  }
  return "UNKNOWN(" + std::to_string(int(t)) + ")";
}

int DTypeBits(DType t) {
  switch (t) {
    case DType::kString:
    case DType::kUndefined: return 0;
    case DType::kUInt2:
    case DType::kInt2: return 2;
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1: return 4;
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kBool:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0: return 8;
    case DType::kUInt16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16: return 16;
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUInt32: return 32;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kDouble:
    case DType::kComplex64: return 64;
    case DType::kComplex128: return 128;
  }
  return 0;
}

size_t DTypeStorageSize(DType t) {
  const int b = DTypeBits(t);
  return b == 0 ? 0 : b < 8 ? 1 : size_t(b / 8);
}

size_t DTypeScalarSize(DType t) {
  const size_t s = DTypeStorageSize(t);
  return t == DType::kComplex64 || t == DType::kComplex128 ? s / 2 : s;
}

bool IsFloatDType(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
    case DType::kComplex64:
    case DType::kComplex128: return true;
    default: return false;
  }
}

bool IsSubByteDType(DType t) { return DTypeBits(t) > 0 && DTypeBits(t) < 8; }

}  // namespace onemodel::impl
