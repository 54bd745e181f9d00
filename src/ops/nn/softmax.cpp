// Softmax, LogSoftmax and Hardmax (ONNX Operators.md): along `axis` (opset >= 13) or
// over the flattened trailing block [axis, rank) (older opsets). Per output row: m = the
// IEEE maximum, e = Exp(x - m), s = the sum of e in the reduction's order, then e / s
// (Softmax) or (x - m) - Log(s) (LogSoftmax); Hardmax marks the first maximum.
#include "ops/nn/softmax.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ops/ops.h"
#include "ops/parallel.h"
#include "ref/softmax.h"

namespace onemodel::impl {
namespace ops {

namespace {

bool RowsFit(const SoftmaxParams& p) { return p.rows_fit; }

// The definition itself: ref::SoftmaxRowF32 on each row in turn (contiguous float rows;
// any other node runs the typed loops of SoftmaxFamily).
void RunReference(const OpContext&, const SoftmaxParams& p, const float* px, float* py) {
  const ReduceLayout& l = *p.layout;
  for (int64_t o = 0; o < l.outputs; ++o)
    ref::SoftmaxRowF32(px + l.base[size_t(o)], py + l.base[size_t(o)], l.per_output);
}

// Rows over the session's threads, each the SoftmaxRowF32 kernel: the same max, Exp,
// canonical sum and division as ref::SoftmaxRowF32.
void RunRows(const OpContext& ctx, const SoftmaxParams& p, const float* px, float* py) {
  const ReduceLayout& l = *p.layout;
  const int64_t n = l.per_output;
  auto* kernel = ctx.kernels->SoftmaxRowF32;
  ParallelFor(ctx, l.outputs, std::max<int64_t>(1, 8192 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) kernel(px + l.base[size_t(o)], py + l.base[size_t(o)], n);
  });
}

constexpr const char* kSoftmaxOps[] = {"Softmax", "LogSoftmax", "Hardmax"};
constexpr AlgorithmRow<SoftmaxParams, SoftmaxRun> kSoftmaxRows[] = {
    {"reference", Exactness::kExact, "", nullptr, nullptr, RunReference},
    {"rows", Exactness::kExact, "SoftmaxRowF32", RowsFit, nullptr, RunRows},
};

}  // namespace

const FamilyTable<SoftmaxParams, SoftmaxRun>& SoftmaxTable() {
  static constexpr FamilyTable<SoftmaxParams, SoftmaxRun> kTable{"softmax", kSoftmaxOps, kSoftmaxRows};
  return kTable;
}

namespace {

enum class Soft { kSoftmax, kLogSoftmax, kHardmax };

// Softmax family along `axis` (opset >= 13) or over the flattened trailing block
// [axis, rank) (older opsets).
void SoftmaxFamily(OpContext& ctx, Soft kind) {
  const Tensor& x = ctx.in(0);
  const bool v13 = ctx.opset >= 13;
  const int64_t axis = NormAxis(ctx, ctx.attr_i("axis", v13 ? -1 : 1), std::max<int64_t>(x.rank(), 1));
  Shape axes;
  if (v13)
    axes.push_back(axis);
  else
    for (int64_t k = axis; k < x.rank(); ++k) axes.push_back(k);
  const ReduceLayout p = MakeReduceLayout(ctx, x.shape(), axes, true, false);
  Tensor& out = ctx.out_uninit(0, x.dtype(), x.shape());  // every element is written
  bool contiguous = p.lanes;
  for (int64_t i = 0; contiguous && i < p.per_output; ++i) contiguous = p.offsets[size_t(i)] == i;
  const SoftmaxParams sp{&p, kind == Soft::kSoftmax && x.dtype() == DType::kFloat && contiguous};
  const auto& row = PlanRow(ctx, SoftmaxTable(), sp);
  if (sp.rows_fit) {  // the row's loops; otherwise the reference's typed loops below
    row.run(ctx, sp, x.data<float>(), out.mutable_data<float>());
    return;
  }
  const int64_t n = p.per_output;
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    if constexpr (!std::is_floating_point_v<C>) {
      throw ctx.Fail(ErrorCode::kTypeMismatch, "input must be floating point");
    } else {
      const T* px = x.data<T>();
      T* po = out.mutable_data<T>();
      std::vector<C> e(static_cast<size_t>(n));
      for (int64_t o = 0; o < p.outputs; ++o) {
        const int64_t b = p.base[size_t(o)];
        auto at = [&](int64_t i) -> C { return Widen(px[b + p.offsets[size_t(i)]]); };
        if (kind == Soft::kHardmax) {
          int64_t best = 0;
          for (int64_t i = 1; i < n; ++i)
            if (at(i) > at(best)) best = i;
          for (int64_t i = 0; i < n; ++i) po[b + p.offsets[size_t(i)]] = Narrow<T>(C(i == best ? 1 : 0));
          continue;
        }
        C m = -std::numeric_limits<C>::infinity();
        for (int64_t i = 0; i < n; ++i) m = MaxOf(m, at(i));
        for (int64_t i = 0; i < n; ++i) e[size_t(i)] = ExpC(C(at(i) - m));
        const C s = SumOrdered<C>(n, p.lanes, [&](int64_t i) { return e[size_t(i)]; });
        if (kind == Soft::kSoftmax) {
          for (int64_t i = 0; i < n; ++i) po[b + p.offsets[size_t(i)]] = Narrow<T>(C(e[size_t(i)] / s));
        } else {
          const C ls = LogC(s);
          for (int64_t i = 0; i < n; ++i) po[b + p.offsets[size_t(i)]] = Narrow<T>(C(C(at(i) - m) - ls));
        }
      }
    }
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "element type " + DTypeName(x.dtype()) + " is not supported");
}

}  // namespace

void Softmax(OpContext& ctx) { SoftmaxFamily(ctx, Soft::kSoftmax); }
void LogSoftmax(OpContext& ctx) { SoftmaxFamily(ctx, Soft::kLogSoftmax); }
void Hardmax(OpContext& ctx) { SoftmaxFamily(ctx, Soft::kHardmax); }

}  // namespace ops
}  // namespace onemodel::impl
