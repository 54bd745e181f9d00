// ONNX Runtime's MatMulNBits (com.microsoft): the node validated as ONNX Runtime's CPU
// kernel checks it (docs/contrib-operators.md), then the row of its table the plan takes.
// The definition is ref/nbits.h; kernels src/kernels/gemm.cpp (GemmF32, GemmPackBF32,
// GemmPackedF32) and src/kernels/gemm_nbits.cpp (NBitsGemmF32); tests
// tests/ops/quant/nbits_test.cpp.
#include "ops/quant/nbits.h"
#include "core/per_thread.h"
#include "core/scratch.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/ops.h"
#include "ops/parallel.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

void NBitsReference(const OpContext&, const NBitsNode& n) {
  const F32Out y(n.out);
  ref::MatMulNBitsF32(n.p, n.a, n.b, n.q, n.bias, y.data());
  y.Store();
}

// Rows [n0, n1) of W [N, K] as f32, block by block from the bytes (the low bits first),
// each weight float(q - zp) * scale (float zero points: (float(q) - zp) * scale), as
// ref::NBitsWeight defines it.
void DequantizeRows(const NBitsNode& n, int64_t n0, int64_t n1, float* W) {
  const ref::NBitsParams& p = n.p;
  const int64_t per_byte = 8 / p.bits, K = p.K;
  const uint32_t mask = (1u << p.bits) - 1u;
  std::vector<int32_t> zps(size_t(p.blocks), int32_t(1) << (p.bits - 1));
  for (int64_t r = n0; r < n1; ++r) {
    if (n.q.zp_u8)
      for (int64_t g = 0; g < p.blocks; ++g) {
        const uint8_t byte = n.q.zp_u8[r * p.zp_row_bytes + g / per_byte];
        zps[size_t(g)] = int32_t((byte >> ((g % per_byte) * p.bits)) & mask);
      }
    const float* scales = n.q.scales + r * p.blocks;
    const float* zpf = n.q.zp_f32 ? n.q.zp_f32 + r * p.blocks : nullptr;
    float* w = W + (r - n0) * K;
    for (int64_t blk = 0; blk < p.blocks; ++blk) {
      const uint8_t* bytes = n.b + (r * p.blocks + blk) * p.blob;
      const int64_t k0 = blk * p.block_size, k1 = std::min(K, k0 + p.block_size);
      for (int64_t k = k0; k < k1; ++k) {
        const int64_t j = k - k0;
        const int32_t code = int32_t((bytes[j / per_byte] >> ((j % per_byte) * p.bits)) & mask);
        const int64_t g = n.q.g_idx ? int64_t(n.q.g_idx[k]) : blk;
        w[k] = zpf ? (float(code) - zpf[g]) * scales[g] : float(code - zps[size_t(g)]) * scales[g];
      }
    }
  }
}

// W dequantized (DequantizeRows over the threads), then Y = A W^T by the GEMM kernels
// (each output's k ascending from -0.0), then + bias. Constant weights: W packed once per
// session (the same bits as dequantizing each run).
void NBitsDequantGemm(const OpContext& ctx, const NBitsNode& n) {
  const int64_t M = n.p.M, N = n.p.N, K = n.p.K;
  auto dequantize = [&](float* W) {
    ParallelFor(ctx, N, 16, [&](int64_t b, int64_t e) { DequantizeRows(n, b, e, W + b * K); });
  };
  const F32Out y(n.out);
  float* py = y.data();
  const Tensor* packed = nullptr;
  if (n.const_weights && ctx.prepack && ctx.VectorKernels()) {
    auto* pack = ctx.kernels->GemmPackBF32;
    packed = ctx.ConstDerived(1, "dequantized packed B", [&](const Tensor&) {
      Tensor w = Tensor::Uninitialized(DType::kFloat, Shape{N, K}, "dequantized weight");
      dequantize(w.mutable_data<float>());
      Tensor pk = Tensor::Uninitialized(DType::kFloat, Shape{std::max<int64_t>(ref::GemmPackedFloats(K, N), 1)},
                                        "packed weight");
      pack(K, N, w.data<float>(), 1, K, pk.mutable_data<float>());
      return pk;
    });
  }
  if (packed) {
    ParallelGemmPackedF32(ctx, M, N, K, n.a, K, 1, packed->data<float>(), py, N);
  } else {
    Tensor w = ctx.NewTensor(DType::kFloat, Shape{N, K}, false, "dequantized weight");
    dequantize(w.mutable_data<float>());
    ParallelGemmF32(ctx, M, N, K, n.a, K, 1, w.data<float>(), 1, K, py, N);
  }
  if (n.bias) AddColumnBias(py, M, N, n.bias);
  y.Store();
}

// Blocks of 64 columns of Y over the threads, each from its 64 rows of W dequantized into
// the thread's scratch (64 x K floats), then the GEMM kernel over the whole K: the same
// folds as the reference, with no f32 copy of W kept (big models).
void NBitsColumnBlocks(const OpContext& ctx, const NBitsNode& n) {
  constexpr int64_t kCols = 64;
  const int64_t M = n.p.M, N = n.p.N, K = n.p.K;
  const F32Out y(n.out);
  float* py = y.data();
  auto* gemm = ctx.kernels->GemmF32;
  ParallelFor(ctx, (N + kCols - 1) / kCols, 1, [&](int64_t b, int64_t e) {
    auto& w = ONEMODEL_PER_THREAD(ScratchVector<float>);
    if (w.size() < size_t(kCols * K)) w.resize(size_t(kCols * K));
    for (int64_t g = b; g < e; ++g) {
      const int64_t n0 = g * kCols, n1 = std::min(N, n0 + kCols);
      DequantizeRows(n, n0, n1, w.data());
      gemm(M, n1 - n0, K, n.a, K, 1, w.data(), 1, K, py + n0, N);
    }
  });
  if (n.bias) AddColumnBias(py, M, N, n.bias);
  y.Store();
}

// The GEMV layout of ref/nbits.h (codes of 2 and 4 bits two to a byte, of 8 bits one, in
// groups of kNBitsCols rows; the scales and float zero points per group and block), in
// one uint8 tensor: the codes and their padding, then the parameters at a multiple of 64
// bytes. Layout only.
constexpr int64_t kG = ref::kNBitsCols;
int64_t CodeBits(const ref::NBitsParams& p) { return p.bits <= 4 ? 4 : 8; }
int64_t GemvParamsAt(const ref::NBitsParams& p) {
  const int64_t groups = (p.N + kG - 1) / kG;
  return (groups * ref::NBitsGroupBytes(p.K, CodeBits(p)) + ref::kNBitsPad + 63) / 64 * 64;
}
Tensor PackGemv(const OpContext& ctx, const NBitsNode& n) {
  const ref::NBitsParams& p = n.p;
  const int64_t groups = (p.N + kG - 1) / kG, at = GemvParamsAt(p), K = p.K;
  const int64_t per_byte = 8 / p.bits, gb = ref::NBitsGroupBytes(K, CodeBits(p));
  const uint32_t mask = (1u << p.bits) - 1u;
  // Zeroed: the codes past N and K, the padding, the parameters past N.
  Tensor t = ctx.NewTensor(DType::kUInt8, Shape{at + groups * p.blocks * 2 * kG * int64_t(sizeof(float))}, true,
                           "MatMulNBits GEMV layout");
  uint8_t* codes = t.mutable_data<uint8_t>();
  float* params = reinterpret_cast<float*>(codes + at);
  ParallelFor(ctx, groups, 1, [&](int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g)
      for (int64_t j = 0; j < kG && g * kG + j < p.N; ++j) {
        const int64_t r = g * kG + j;
        uint8_t* out = codes + g * gb + j;  // column j of the group's codes
        for (int64_t blk = 0, k0 = 0; blk < p.blocks; ++blk, k0 += p.block_size) {
          const uint8_t* src = n.b + (r * p.blocks + blk) * p.blob;
          const int64_t len = std::min(p.block_size, K - k0);
          if (p.bits == 4) {  // the common case: the block's bytes are the layout's pairs
            for (int64_t i = 0; i < len; i += 2)
              out[(k0 + i) / 2 * kG] = i + 1 < len ? src[i / 2] : uint8_t(src[i / 2] & 15u);
          } else if (p.bits == 2) {
            for (int64_t i = 0; i < len; ++i)
              out[(k0 + i) / 2 * kG] |= uint8_t(((src[i / 4] >> ((i % 4) * 2)) & 3u) << (((k0 + i) % 2) * 4));
          } else {
            for (int64_t i = 0; i < len; ++i) out[(k0 + i) * kG] = src[i];
          }
        }
        for (int64_t blk = 0; blk < p.blocks; ++blk) {
          float* pr = params + (g * p.blocks + blk) * 2 * kG;
          pr[j] = n.q.scales[r * p.blocks + blk];
          if (n.q.zp_f32) {
            pr[kG + j] = n.q.zp_f32[r * p.blocks + blk];
          } else if (n.q.zp_u8) {
            const uint8_t byte = n.q.zp_u8[r * p.zp_row_bytes + blk / per_byte];
            pr[kG + j] = float((byte >> ((blk % per_byte) * p.bits)) & mask);
          } else {
            pr[kG + j] = float(int32_t(1) << (p.bits - 1));
          }
        }
      }
  });
  return t;
}

// The rows of A through the NBitsGemmF32 kernel, Y's columns in groups over the threads,
// on W in the GEMV layout (made once per session for constant weights, else each run);
// then the bias. The kernel's sums are the reference's.
void NBitsGemv(const OpContext& ctx, const NBitsNode& n) {
  const int64_t M = n.p.M, N = n.p.N, K = n.p.K, groups = (N + kG - 1) / kG;
  Tensor own;
  // Keyed by the scales' and zero points' names too: nodes may share B, not its scales.
  const std::string key = "MatMulNBits GEMV layout/" + ctx.node.inputs[2] + "/" +
                          (ctx.node.inputs.size() > 3 ? ctx.node.inputs[3] : std::string());
  const Tensor* layout =
      n.const_weights ? ctx.ConstDerived(1, key, [&](const Tensor&) { return PackGemv(ctx, n); }) : nullptr;
  if (!layout) {
    own = PackGemv(ctx, n);
    layout = &own;
  }
  const uint8_t* codes = layout->data<uint8_t>();
  const float* params = reinterpret_cast<const float*>(codes + GemvParamsAt(n.p));
  auto* gemm = ctx.kernels->NBitsGemmF32;
  const F32Out y(n.out);
  float* py = y.data();
  // The kernel writes whole groups: rows of groups * kG floats, then N of each kept.
  const int64_t ld = groups * kG;
  std::vector<float> rows(static_cast<size_t>(M * ld));
  ParallelFor(ctx, groups, std::max<int64_t>(1, 8192 / std::max<int64_t>(K * M, 1)), [&](int64_t g0, int64_t g1) {
    gemm(n.a, K, M, K, n.p.block_size, codes, CodeBits(n.p), params, g0, g1, rows.data(), ld);
  });
  for (int64_t m = 0; m < M; ++m) std::copy(rows.begin() + m * ld, rows.begin() + m * ld + N, py + m * N);
  if (n.bias) AddColumnBias(py, M, N, n.bias);
  y.Store();
}

// gemv: no g_idx (the layout's scales are per block); chosen with constant weights for
// up to 4 rows of A (decoding), and, where vectors hold 8 floats or more (tiles of 4 rows
// or more share a dequantized weight; 128-bit targets' 2 were slower than column-blocks),
// up to 64 rows (a prompt) of weights too big for dequant-gemm, which keeps an f32 copy of
// constant weights: taken up to 4M weights per node (16 MiB). column-blocks beyond.
bool NoGIdx(const NBitsNode& n) { return n.q.g_idx == nullptr; }
bool SmallWeights(const NBitsNode& n) { return n.const_weights && n.p.N * n.p.K <= (int64_t(1) << 22); }
bool FewRows(const NBitsNode& n) {
  return n.const_weights && (n.p.M <= 4 || (n.p.M <= 64 && n.f32_lanes >= 8 && !SmallWeights(n)));
}

constexpr const char* kNBitsOps[] = {"com.microsoft.MatMulNBits"};
constexpr AlgorithmRow<NBitsNode, NBitsRun> kNBitsRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, NBitsReference},
    {"gemv", Exactness::kExact, "NBitsGemmF32", NoGIdx, FewRows, NBitsGemv},
    {"dequant-gemm", Exactness::kExact, "GemmF32, GemmPackBF32, GemmPackedF32", nullptr, SmallWeights,
     NBitsDequantGemm},
    {"column-blocks", Exactness::kExact, "GemmF32", nullptr, nullptr, NBitsColumnBlocks},
};

// Whether t holds `want` elements in one of the shapes ONNX Runtime takes: 1-D, or
// [rows, want / rows].
bool FlatOr2D(const Tensor& t, int64_t rows, int64_t want) {
  if (t.numel() != want) return false;
  return t.rank() == 1 || (t.rank() == 2 && t.shape()[0] == rows);
}

}  // namespace

const FamilyTable<NBitsNode, NBitsRun>& MatMulNBitsTable() {
  static constexpr FamilyTable<NBitsNode, NBitsRun> kTable{"matmul_nbits", kNBitsOps, kNBitsRows};
  return kTable;
}

// MatMulNBits (A, B, scales, zero_points?, g_idx?, bias?): K, N, bits (default 4) and
// block_size attributes; A float or float16 [..., K]; B uint8 [N, blocks, blob]; scales
// A's type, [N, blocks] or 1-D; zero points packed uint8 [N, zp_row_bytes] or 1-D, or of
// A's type [N, blocks] or 1-D; g_idx int32 [K]; bias A's type [N]. Y: [..., N].
void MatMulNBits(OpContext& ctx) {
  NBitsNode n;
  ref::NBitsParams& p = n.p;
  p.K = ctx.attr_i("K", -1);
  p.N = ctx.attr_i("N", -1);
  p.bits = ctx.attr_i("bits", 4);
  p.block_size = ctx.attr_i("block_size", -1);
  if (p.K < 1 || p.N < 1) throw ctx.Fail(ErrorCode::kInvalidModel, "attributes K and N are required and must be >= 1");
  if (p.bits != 2 && p.bits != 4 && p.bits != 8)
    throw ctx.Fail(ErrorCode::kInvalidModel, "bits must be 2, 4 or 8, got " + std::to_string(p.bits));
  if (p.block_size < 16 || (p.block_size & (p.block_size - 1)) != 0)
    throw ctx.Fail(ErrorCode::kInvalidModel, "block_size must be a power of 2, 16 or more");
  p.blocks = (p.K + p.block_size - 1) / p.block_size;
  p.blob = p.block_size * p.bits / 8;
  p.zp_row_bytes = (p.blocks * p.bits + 7) / 8;
  const Tensor& a = ctx.in(0);
  const Tensor& b = ctx.in(1);
  const Tensor& scales = ctx.in(2);
  if (a.dtype() != DType::kFloat && a.dtype() != DType::kFloat16)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "A must be float or float16, got " + DTypeName(a.dtype()));
  if (a.rank() < 1 || a.shape().back() != p.K)
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "A " + ShapeToString(a.shape()) + " must end in K = " + std::to_string(p.K));
  ctx.RequireInputType(b, DType::kUInt8, "B");
  if (b.shape() != Shape{p.N, p.blocks, p.blob})
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "B must be [N, blocks, blob] = " + ShapeToString(Shape{p.N, p.blocks, p.blob}) + ", got " +
                       ShapeToString(b.shape()));
  ctx.RequireInputType(scales, a.dtype(), "scales");
  if (!FlatOr2D(scales, p.N, p.N * p.blocks))
    throw ctx.Fail(ErrorCode::kShapeMismatch, "scales must be [N, blocks] = " + ShapeToString(Shape{p.N, p.blocks}) +
                                                  " or 1-D of that size, got " + ShapeToString(scales.shape()));
  const F32View av(ctx, a), sv(ctx, scales);
  std::optional<F32View> zpv, biasv;
  if (ctx.has_input(3)) {
    const Tensor& zp = ctx.in(3);
    if (zp.dtype() == DType::kUInt8) {
      if (!FlatOr2D(zp, p.N, p.N * p.zp_row_bytes))
        throw ctx.Fail(ErrorCode::kShapeMismatch, "packed zero_points must be [N, " + std::to_string(p.zp_row_bytes) +
                                                      "] or 1-D of that size, got " + ShapeToString(zp.shape()));
      n.q.zp_u8 = zp.data<uint8_t>();
    } else {
      ctx.RequireInputType(zp, a.dtype(), "zero_points (not uint8)");
      if (!FlatOr2D(zp, p.N, p.N * p.blocks))
        throw ctx.Fail(ErrorCode::kShapeMismatch,
                       "zero_points must be [N, blocks] or 1-D of that size, got " + ShapeToString(zp.shape()));
      zpv.emplace(ctx, zp);
      n.q.zp_f32 = zpv->data();
    }
  }
  if (ctx.has_input(4)) {
    const Tensor& gi = ctx.in(4);
    ctx.RequireInputType(gi, DType::kInt32, "g_idx");
    if (gi.numel() != p.K && gi.numel() != p.blocks * p.block_size)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "g_idx must hold K values, got " + ShapeToString(gi.shape()));
    for (int64_t k = 0; k < p.K; ++k)
      if (gi.data<int32_t>()[k] < 0 || gi.data<int32_t>()[k] >= p.blocks)
        throw ctx.Fail(ErrorCode::kOutOfRange, "g_idx[" + std::to_string(k) + "] is outside [0, blocks)");
    n.q.g_idx = gi.data<int32_t>();
  }
  if (ctx.has_input(5)) {
    const Tensor& bias = ctx.in(5);
    ctx.RequireInputType(bias, a.dtype(), "bias");
    if (bias.numel() != p.N || bias.rank() != 1)
      throw ctx.Fail(ErrorCode::kShapeMismatch, "bias must be [N], got " + ShapeToString(bias.shape()));
    biasv.emplace(ctx, bias);
    n.bias = biasv->data();
  }
  p.M = a.numel() / p.K;
  Shape out_shape(a.shape().begin(), a.shape().end() - 1);
  out_shape.push_back(p.N);
  n.a = av.data();
  n.b = b.data<uint8_t>();
  n.q.scales = sv.data();
  n.out = &ctx.out_uninit(0, a.dtype(), out_shape);  // every element is written
  n.const_weights = ctx.IsConstInput(1) && ctx.IsConstInput(2) && (!ctx.has_input(3) || ctx.IsConstInput(3)) &&
                    (!ctx.has_input(4) || ctx.IsConstInput(4));
  n.f32_lanes = ctx.kernels ? ctx.kernels->f32_lanes : 1;
  PlanRow(ctx, MatMulNBitsTable(), n).run(ctx, n);
}

namespace {

// GatherBlockQuantized's data as codes: element i of the logical (unpacked) data. uint8
// data holds 8 / bits codes per byte, the lowest bits first; int4 / uint4 tensors hold one
// value per element (unpacked when the model was read).
struct BlockCodes {
  const Tensor* t = nullptr;
  int64_t bits = 8;
  bool packed = false;  // uint8 holding 8 / bits codes per byte
  int32_t operator()(int64_t i) const {
    if (t->dtype() == DType::kInt4) return int32_t(t->data<int8_t>()[i]);
    if (!packed) return int32_t(t->data<uint8_t>()[i]);
    const int64_t per = 8 / bits;
    return int32_t((t->data<uint8_t>()[i / per] >> ((i % per) * bits)) & ((1u << bits) - 1u));
  }
};

}  // namespace

// ONNX Runtime's GatherBlockQuantized (com.microsoft): Gather of block-quantized data along
// gather_axis, each gathered element dequantized as float(q - zp) * scale (f32, one
// rounding, then once to the scales' type). Data: uint8 with 8 / bits codes per byte (then
// gather_axis 0 and quantize_axis the last; the output's last dimension is the logical
// one), or int4 / uint4. Scales: data's rank, ceil(dim / block_size) along quantize_axis.
// Zero points (data's type, packed like it; default 2^(bits-1) for uint8, 0 for int4 and
// uint4). Indices int32 / int64 in [-dim, dim); others give zeros (ONNX Runtime's rule).
void GatherBlockQuantized(OpContext& ctx) {
  const Tensor& data = ctx.in(0);
  const Tensor& idx = ctx.in(1);
  const Tensor& scales = ctx.in(2);
  const int64_t bits = ctx.attr_i("bits", 4), block = ctx.attr_i("block_size", 128);
  const bool u8 = data.dtype() == DType::kUInt8;
  if (!u8 && data.dtype() != DType::kInt4 && data.dtype() != DType::kUInt4)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "data must be uint8, int4 or uint4, got " + DTypeName(data.dtype()));
  if (u8 ? (bits != 2 && bits != 4 && bits != 8) : bits != 4)
    throw ctx.Fail(ErrorCode::kInvalidModel, "bits must be 2, 4 or 8 for uint8 data, 4 for int4 / uint4");
  if (block < 16 || (block & (block - 1)) != 0)
    throw ctx.Fail(ErrorCode::kInvalidModel, "block_size must be a power of 2, 16 or more");
  const int64_t r = data.rank();
  if (r < 1) throw ctx.Fail(ErrorCode::kShapeMismatch, "data must have rank 1 or more");
  const int64_t g = NormAxis(ctx, ctx.attr_i("gather_axis", 0), r);
  const int64_t qa = NormAxis(ctx, ctx.attr_i("quantize_axis", 1), r);
  const int64_t per = u8 ? 8 / bits : 1;
  if (u8 && bits < 8 && (g != 0 || qa != r - 1))
    throw ctx.Fail(ErrorCode::kInvalidModel, "packed uint8 data needs gather_axis 0 and quantize_axis the last axis");
  Shape logical = data.shape();
  logical[size_t(r - 1)] *= (u8 ? per : 1);
  if (idx.dtype() != DType::kInt32 && idx.dtype() != DType::kInt64)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "indices must be int32 or int64");
  if (scales.dtype() != DType::kFloat && scales.dtype() != DType::kFloat16 && scales.dtype() != DType::kBFloat16)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "scales must be float, float16 or bfloat16");
  Shape sshape = logical;
  sshape[size_t(qa)] = (logical[size_t(qa)] + block - 1) / block;
  if (scales.shape() != sshape)
    throw ctx.Fail(ErrorCode::kShapeMismatch,
                   "scales must be " + ShapeToString(sshape) + ", got " + ShapeToString(scales.shape()));
  const Tensor* zp = ctx.has_input(3) ? &ctx.in(3) : nullptr;
  if (zp) {
    if (zp->dtype() != data.dtype()) throw ctx.Fail(ErrorCode::kTypeMismatch, "zero_points must have data's type");
    Shape zshape = sshape;
    zshape[size_t(r - 1)] = (zshape[size_t(r - 1)] + per - 1) / per;
    if (zp->shape() != (u8 ? zshape : sshape))
      throw ctx.Fail(ErrorCode::kShapeMismatch, "zero_points must be " + ShapeToString(u8 ? zshape : sshape) +
                                                    ", got " + ShapeToString(zp->shape()));
  }
  // Output: logical[:g] + indices' shape + logical[g+1:].
  Shape out_shape(logical.begin(), logical.begin() + g);
  out_shape.insert(out_shape.end(), idx.shape().begin(), idx.shape().end());
  out_shape.insert(out_shape.end(), logical.begin() + g + 1, logical.end());
  Tensor& out = ctx.out(0, scales.dtype(), out_shape);
  const F32View sv(ctx, scales);
  const BlockCodes code{&data, bits, u8 && bits < 8};
  const BlockCodes zcode{zp, bits, u8 && bits < 8};
  const int32_t default_zp = u8 ? int32_t(1) << (bits - 1) : 0;
  // Strides of the logical data and the scales.
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < g; ++k) outer *= logical[size_t(k)];
  for (int64_t k = g + 1; k < r; ++k) inner *= logical[size_t(k)];
  const int64_t gdim = logical[size_t(g)], nidx = idx.numel();
  std::vector<int64_t> lstride(size_t(r), 1), sstride(size_t(r), 1);
  for (int64_t k = r - 2; k >= 0; --k) {
    lstride[size_t(k)] = lstride[size_t(k + 1)] * logical[size_t(k + 1)];
    sstride[size_t(k)] = sstride[size_t(k + 1)] * sshape[size_t(k + 1)];
  }
  const int64_t zrow = zp && u8 ? zp->shape()[size_t(r - 1)] : 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < nidx; ++j) {
      int64_t at = idx.dtype() == DType::kInt32 ? int64_t(idx.data<int32_t>()[j]) : idx.data<int64_t>()[j];
      if (at < 0) at += gdim;
      const int64_t out_base = (o * nidx + j) * inner;
      if (at < 0 || at >= gdim) continue;  // zeros (the output starts zeroed)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t li = (o * gdim + at) * inner + i;  // logical element
        int64_t si = 0, rest = li;                       // the scale's element
        for (int64_t k = 0; k < r; ++k) {
          const int64_t c = rest / lstride[size_t(k)];
          rest %= lstride[size_t(k)];
          si += (k == qa ? c / block : c) * sstride[size_t(k)];
        }
        int32_t z = default_zp;
        if (zp) {
          // uint8: the scale's row of zero-point bytes (zrow each, packed like the data),
          // code at the scale's last coordinate; int4 / uint4: the scale's own element.
          const int64_t slast = sshape[size_t(r - 1)];
          z = u8 ? zcode((si / slast) * zrow * per + si % slast) : zcode(si);
        }
        StoreF32(out, out_base + i, float(code(li) - z) * sv[size_t(si)]);
      }
    }
}

}  // namespace ops
}  // namespace onemodel::impl
