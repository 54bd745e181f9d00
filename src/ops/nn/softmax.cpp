// Softmax, LogSoftmax and Hardmax (ONNX Operators.md): along `axis` (opset >= 13) or
// over the flattened trailing block [axis, rank) (older opsets). The definition is
// ref::Softmax (ref/softmax.h): per output row, m = the IEEE maximum, e = Exp(x - m), s =
// the sum of e in the reduction's order, then e / s (Softmax) or (x - m) - Log(s)
// (LogSoftmax); Hardmax marks the first maximum.
#include "ops/nn/softmax.h"

#include <algorithm>
#include <string>

#include "ops/math/reduce_layout.h"
#include "ops/ops.h"
#include "ops/parallel.h"

namespace onemodel::impl {
namespace ops {

namespace {

bool RowsFit(const SoftmaxPlan& p) { return p.rows_fit; }
// The fast twin where the target has a hardware FMA (elsewhere its loops are the
// reference's: the exact row runs instead).
bool FmaChosen(const SoftmaxPlan& p) { return p.fma; }

// The definition itself: ref::Softmax in x's element type (every node).
void RunReference(const OpContext&, const SoftmaxPlan& p, const Tensor& x, Tensor& y) {
  DispatchNumeric(p.dtype, [&]<class T>() {
    if constexpr (kIsFloat<T>) ref::Softmax<T>(p.ref, x.data<T>(), y.mutable_data<T>());
  });
}

// Rows over the session's threads, blocks of them to the SoftmaxRowsF32 kernel (the same
// max, Exp, canonical sum and division as ref::Softmax on a contiguous float row), or to
// its fast twin SoftmaxRowsFmaF32. The rows are contiguous (base[o] = o * n).
template <bool kFma>
void RunRows(const OpContext& ctx, const SoftmaxPlan& p, const Tensor& x, Tensor& y) {
  const ref::SoftmaxParams& l = p.ref;
  const int64_t n = l.per_output;
  const float* px = x.data<float>();
  float* py = y.mutable_data<float>();
  auto* kernel = kFma ? ctx.kernels->SoftmaxRowsFmaF32 : ctx.kernels->SoftmaxRowsF32;
  ParallelFor(ctx, l.outputs, std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)),
              [&](int64_t b, int64_t e) { kernel(px + l.base[b], py + l.base[b], e - b, n, -1, 1.0f, nullptr, 0, 0); });
}

constexpr const char* kSoftmaxOps[] = {"Softmax", "LogSoftmax", "Hardmax"};
constexpr AlgorithmRow<SoftmaxPlan, SoftmaxRun> kSoftmaxRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"rows-fma", Exactness::kFast, "SoftmaxRowsFmaF32", RowsFit, FmaChosen, RunRows<true>},
    {"rows", Exactness::kExact, "SoftmaxRowsF32", RowsFit, nullptr, RunRows<false>},
};

}  // namespace

const FamilyTable<SoftmaxPlan, SoftmaxRun>& SoftmaxTable() {
  static constexpr FamilyTable<SoftmaxPlan, SoftmaxRun> kTable{"softmax", kSoftmaxOps, kSoftmaxRows};
  return kTable;
}

namespace {

// Parses the node (its axes, its element type: a float type), plans a row and runs it.
void SoftmaxFamily(OpContext& ctx, ref::SoftmaxKind kind) {
  const Tensor& x = ctx.in(0);
  const bool v13 = ctx.opset >= 13;
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", v13 ? -1 : 1), std::max<int64_t>(x.rank(), 1));
  Shape axes;
  if (v13)
    axes.push_back(axis);
  else
    for (int64_t k = axis; k < x.rank(); ++k) axes.push_back(k);
  const ReduceLayout l = MakeReduceLayout(ctx, x.shape(), axes, true, false);
  bool floating = false;
  if (!DispatchNumeric(x.dtype(), [&]<class T>() { floating = kIsFloat<T>; }))
    throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(x.dtype()) + " is not supported");
  if (!floating) throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
  bool contiguous = l.lanes;
  for (int64_t i = 0; contiguous && i < l.per_output; ++i) contiguous = l.offsets[size_t(i)] == i;
  for (int64_t o = 0; contiguous && o < l.outputs; ++o) contiguous = l.base[size_t(o)] == o * l.per_output;
  const SoftmaxPlan p{{kind, l.outputs, l.per_output, l.lanes, l.base.data(), l.offsets.data()},
                      x.dtype(),
                      kind == ref::SoftmaxKind::kSoftmax && x.dtype() == DType::kFloat && contiguous,
                      ctx.kernels->fma_f32};
  Tensor& out = ctx.out_uninit(0, x.dtype(), x.shape());  // every element is written
  PlanRow(ctx, SoftmaxTable(), p).run(ctx, p, x, out);
}

}  // namespace

void Softmax(OpContext& ctx) { SoftmaxFamily(ctx, ref::SoftmaxKind::kSoftmax); }
void LogSoftmax(OpContext& ctx) { SoftmaxFamily(ctx, ref::SoftmaxKind::kLogSoftmax); }
void Hardmax(OpContext& ctx) { SoftmaxFamily(ctx, ref::SoftmaxKind::kHardmax); }

}  // namespace ops
}  // namespace onemodel::impl
