// Reference (oracle) kernels of the dispatch table's elementwise operations; the
// per-target kernels in src/kernels/ equal them bit for bit.
#pragma once

#include <cstdint>

namespace onemodel {

// The float binary operations of BinaryF32: + - * / and IEEE 754-2019 maximum/minimum
// (a NaN operand gives NaN; -0 < +0).
enum BinaryOpF32 : int32_t { kBinAddF32 = 0, kBinSubF32, kBinMulF32, kBinDivF32, kBinMaxF32, kBinMinF32 };

namespace ref {

// out[i] = a[i * sa] op b[i * sb] for i < n; sa and sb are 0 (one value broadcast) or
// 1. Each result is one correctly rounded binary32 operation; out may alias a or b
// when its stride is 1.
void BinaryF32(int32_t op, const float* a, int64_t sa, const float* b, int64_t sb, float* out, int64_t n);

}  // namespace ref
}  // namespace onemodel
