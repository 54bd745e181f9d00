// Reference ai.onnx.ml operators the conformance cases use: LabelEncoder, Binarizer,
// ArrayFeatureExtractor.
#include <cstring>

#include "ref/ops.h"
#include "ref/util.h"

namespace onemodel {
namespace ref {
namespace {

// A key or value of LabelEncoder, compared as double (numbers) or string.
struct Item {
  bool is_str = false;
  double d = 0;
  std::string s;
  bool operator==(const Item& o) const { return is_str == o.is_str && (is_str ? s == o.s : d == o.d); }
};

std::vector<Item> Items(const OpContext& ctx, const std::string& base, DType* type) {
  std::vector<Item> v;
  if (const Attribute* a = ctx.node.attr(base + "_floats")) {
    *type = DType::kFloat;
    for (float f : a->floats) v.push_back({false, double(f), {}});
  } else if (const Attribute* b = ctx.node.attr(base + "_int64s")) {
    *type = DType::kInt64;
    for (int64_t i : b->ints) v.push_back({false, double(i), {}});
  } else if (const Attribute* c = ctx.node.attr(base + "_strings")) {
    *type = DType::kString;
    for (const auto& s : c->strings) v.push_back({true, 0, s});
  } else if (const Attribute* t = ctx.node.attr(base + "_tensor")) {
    *type = t->t.dtype();
    for (int64_t i = 0; i < t->t.numel(); ++i) {
      if (t->t.dtype() == DType::kString) v.push_back({true, 0, t->t.strings()[size_t(i)]});
      else DispatchNumeric(t->t.dtype(), [&]<class T>() { v.push_back({false, double(Widen(t->t.data<T>()[i])), {}}); });
    }
  }
  return v;
}

Item ItemAt(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kString) return {true, 0, t.strings()[size_t(i)]};
  Item it;
  DispatchNumeric(t.dtype(), [&]<class T>() { it.d = double(Widen(t.data<T>()[i])); });
  return it;
}

void PutItem(Tensor& t, int64_t i, const Item& v) {
  if (t.dtype() == DType::kString) { t.mutable_strings()[size_t(i)] = v.s; return; }
  DispatchNumeric(t.dtype(), [&]<class T>() { t.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(v.d)); });
}

}  // namespace

void LabelEncoder(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  DType kt = DType::kUndefined, vt = DType::kUndefined;
  const auto keys = Items(ctx, "keys", &kt), values = Items(ctx, "values", &vt);
  if (keys.size() != values.size() || keys.empty()) throw ctx.Fail(ErrorCode::kInvalidModel, "keys and values must be non-empty and of equal length");
  Item dflt;
  if (vt == DType::kString) { dflt.is_str = true; dflt.s = ctx.attr_s("default_string", "_Unused"); }
  else if (vt == DType::kFloat) dflt.d = ctx.attr_f("default_float", -0.0f);
  else if (vt == DType::kInt64) dflt.d = double(ctx.attr_i("default_int64", -1));
  if (const Attribute* d = ctx.node.attr("default_tensor")) dflt = ItemAt(d->t, 0);
  Tensor& y = ctx.out(0, vt, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Item k = ItemAt(x, i);
    const Item* hit = &dflt;
    for (size_t j = 0; j < keys.size(); ++j) if (keys[j] == k) { hit = &values[j]; break; }
    PutItem(y, i, *hit);
  }
}

void Binarizer(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const float th = ctx.attr_f("threshold", 0.0f);
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    for (int64_t i = 0; i < x.numel(); ++i) y.mutable_data<T>()[i] = Narrow<T>(Widen(x.data<T>()[i]) > C(th) ? C(1) : C(0));
  });
  if (!ok) throw ctx.Fail(ErrorCode::kTypeMismatch, "unsupported element type");
}

void ArrayFeatureExtractor(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const auto idx = ReadInts(ctx, ctx.in(1));
  const int64_t last = x.shape().empty() ? 1 : x.shape().back();
  Shape s = x.shape();
  if (s.empty()) s.push_back(1);
  s.back() = int64_t(idx.size());
  Tensor& y = ctx.out(0, x.dtype(), s);
  const int64_t rows = last ? x.numel() / last : 0;
  const size_t es = DTypeStorageSize(x.dtype());
  for (int64_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0 || idx[j] >= last) throw ctx.Fail(ErrorCode::kInvalidArgument, "index out of range");
      const int64_t src = r * last + idx[j], dst = r * int64_t(idx.size()) + int64_t(j);
      if (x.dtype() == DType::kString) y.mutable_strings()[size_t(dst)] = x.strings()[size_t(src)];
      else std::memcpy(y.mutable_data<uint8_t>() + size_t(dst) * es, static_cast<const uint8_t*>(x.raw()) + size_t(src) * es, es);
    }
}

}  // namespace ref
}  // namespace onemodel
