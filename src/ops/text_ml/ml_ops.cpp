// Reference ai.onnx.ml operators the conformance cases use: LabelEncoder, Binarizer,
// ArrayFeatureExtractor.
#include <algorithm>
#include <cstring>

#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
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
      if (t->t.dtype() == DType::kString)
        v.push_back({true, 0, t->t.strings()[size_t(i)]});
      else
        DispatchNumeric(t->t.dtype(), [&]<class T>() { v.push_back({false, double(Widen(t->t.data<T>()[i])), {}}); });
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
  if (t.dtype() == DType::kString) {
    t.mutable_strings()[size_t(i)] = v.s;
    return;
  }
  DispatchNumeric(t.dtype(), [&]<class T>() { t.mutable_data<T>()[i] = Narrow<T>(typename Compute<T>::type(v.d)); });
}

}  // namespace

void LabelEncoder(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  DType kt = DType::kUndefined, vt = DType::kUndefined;
  const auto keys = Items(ctx, "keys", &kt), values = Items(ctx, "values", &vt);
  if (keys.size() != values.size() || keys.empty())
    throw ctx.Fail(ErrorCode::kInvalidModel, "keys and values must be non-empty and of equal length");
  Item dflt;
  if (vt == DType::kString) {
    dflt.is_str = true;
    dflt.s = ctx.attr_s("default_string", "_Unused");
  } else if (vt == DType::kFloat)
    dflt.d = ctx.attr_f("default_float", -0.0f);
  else if (vt == DType::kInt64)
    dflt.d = double(ctx.attr_i("default_int64", -1));
  if (const Attribute* d = ctx.node.attr("default_tensor")) dflt = ItemAt(d->t, 0);
  Tensor& y = ctx.out(0, vt, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const Item k = ItemAt(x, i);
    const Item* hit = &dflt;
    for (size_t j = 0; j < keys.size(); ++j)
      if (keys[j] == k) {
        hit = &values[j];
        break;
      }
    PutItem(y, i, *hit);
  }
}

void Binarizer(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const float th = ctx.attr_f("threshold", 0.0f);
  Tensor& y = ctx.out(0, x.dtype(), x.shape());
  const bool ok = DispatchNumeric(x.dtype(), [&]<class T>() {
    using C = typename Compute<T>::type;
    for (int64_t i = 0; i < x.numel(); ++i)
      y.mutable_data<T>()[i] = Narrow<T>(Widen(x.data<T>()[i]) > C(th) ? C(1) : C(0));
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
      if (x.dtype() == DType::kString)
        y.mutable_strings()[size_t(dst)] = x.strings()[size_t(src)];
      else
        std::memcpy(y.mutable_data<uint8_t>() + size_t(dst) * es,
                    static_cast<const uint8_t*>(x.raw()) + size_t(src) * es, es);
    }
}

void TfIdfVectorizer(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  const int64_t minn = ctx.attr_i("min_gram_length", 1), maxn = ctx.attr_i("max_gram_length", 1);
  const int64_t maxskip = ctx.attr_i("max_skip_count", 0);
  const std::string mode = ctx.attr_s("mode", "TF");
  const auto counts = ctx.attr_ints("ngram_counts"), indexes = ctx.attr_ints("ngram_indexes");
  const auto weights = ctx.attr_floats("weights");
  const bool strs = ctx.has_attr("pool_strings");
  std::vector<std::string> spool;
  std::vector<int64_t> ipool;
  if (strs)
    spool = ctx.node.attr("pool_strings")->strings;
  else
    ipool = ctx.attr_ints("pool_int64s");
  const int64_t pool_size = strs ? int64_t(spool.size()) : int64_t(ipool.size());
  // Enumerate the pool's n-grams: (n, first pool entry) -> output coordinate.
  std::vector<std::pair<int64_t, int64_t>> grams;  // (n, start)
  for (size_t n = 1; n <= counts.size(); ++n) {
    const int64_t begin = counts[n - 1], end = n < counts.size() ? counts[n] : pool_size;
    for (int64_t p = begin; p + int64_t(n) <= end; p += int64_t(n)) grams.push_back({int64_t(n), p});
  }
  if (grams.size() != indexes.size()) throw ctx.Fail(ErrorCode::kInvalidModel, "ngram_indexes does not match the pool");
  int64_t width = 0;
  for (int64_t i : indexes) width = std::max(width, i + 1);
  const bool two = x.rank() == 2;
  const int64_t rows = two ? x.shape()[0] : 1, cols = two ? x.shape()[1] : x.numel();
  Tensor& y = ctx.out(0, DType::kFloat, two ? Shape{rows, width} : Shape{width});
  auto same = [&](int64_t pool_at, int64_t xi) {
    if (strs) return x.dtype() == DType::kString && spool[size_t(pool_at)] == x.strings()[size_t(xi)];
    return x.dtype() != DType::kString && ipool[size_t(pool_at)] == int64_t(ElementAsDouble(x, xi));
  };
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<int64_t> cnt(grams.size(), 0);
    for (size_t g = 0; g < grams.size(); ++g) {
      const int64_t n = grams[g].first, p = grams[g].second;
      if (n < minn || n > maxn) continue;
      const int64_t skips = n == 1 ? 0 : maxskip;
      for (int64_t s = 0; s <= skips; ++s)
        for (int64_t i = 0; i + (n - 1) * (s + 1) < cols; ++i) {
          bool hit = true;
          for (int64_t k = 0; k < n && hit; ++k) hit = same(p + k, r * cols + i + k * (s + 1));
          if (hit) ++cnt[g];
        }
    }
    for (size_t g = 0; g < grams.size(); ++g) {
      const float w = g < weights.size() ? weights[g] : 1.0f;
      float v = float(cnt[g]);
      if (mode == "IDF")
        v = cnt[g] > 0 ? w : 0.0f;
      else if (mode == "TFIDF")
        v = v * w;
      y.mutable_data<float>()[r * width + indexes[g]] = v;
    }
  }
}

// ai.onnx.ml TreeEnsemble (opset 5), as ONNX's reference: each tree routes a row to one
// leaf; leaves aggregate per target in tree order (SUM, AVERAGE: += w / trees, MIN,
// MAX); post_transform is not applied (the reference ignores it too).
void TreeEnsemble(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.rank() != 2) throw ctx.Fail(ErrorCode::kShapeMismatch, "X must be [N, features]");
  auto tensor_vals = [&](const char* name) {
    std::vector<double> v;
    if (const Attribute* a = ctx.node.attr(name))
      for (int64_t i = 0; i < a->t.numel(); ++i) v.push_back(ElementAsDouble(a->t, i));
    return v;
  };
  const auto splits = tensor_vals("nodes_splits"), leaf_w = tensor_vals("leaf_weights"),
             members = tensor_vals("membership_values");
  auto ints = [&](const char* name) {  // an INTS attribute, or an integer TENSOR one
    std::vector<int64_t> v;
    if (const Attribute* a = ctx.node.attr(name)) {
      if (a->type == Attribute::Type::kTensor)
        for (int64_t i = 0; i < a->t.numel(); ++i) v.push_back(int64_t(ElementAsDouble(a->t, i)));
      else
        v = a->ints;
    }
    return v;
  };
  const auto feat = ints("nodes_featureids"), modes = ints("nodes_modes");
  const auto tnode = ints("nodes_truenodeids"), fnode = ints("nodes_falsenodeids");
  const auto tleaf = ints("nodes_trueleafs"), fleaf = ints("nodes_falseleafs");
  const auto leaf_t = ints("leaf_targetids"), roots = ints("tree_roots");
  const auto missing = ints("nodes_missing_value_tracks_true");
  const int64_t agg = ctx.attr_i("aggregate_function", 1), nt = ctx.attr_i("n_targets", 1);
  // Membership sets: consecutive runs of values separated by NaN, one per MEMBER node.
  std::vector<std::vector<double>> sets(modes.size());
  size_t mi = 0;
  for (size_t i = 0; i < modes.size(); ++i) {
    if (modes[i] != 6) continue;
    while (mi < members.size() && members[mi] == members[mi]) sets[i].push_back(members[mi++]);
    ++mi;  // the NaN separator
  }
  const int64_t N = x.shape()[0], F = x.shape()[1];
  Tensor& y = ctx.out(0, x.dtype(), {N, nt});
  const double init = agg == 2 ? 3.4028234663852886e38 : agg == 3 ? -3.4028234663852886e38 : 0.0;
  for (int64_t r = 0; r < N; ++r) {
    std::vector<float> res(static_cast<size_t>(nt), float(init));
    for (int64_t root : roots) {
      int64_t node = root;
      bool leaf = tleaf.at(size_t(root)) && fleaf.at(size_t(root)) && tnode.at(size_t(root)) == fnode.at(size_t(root));
      int64_t guard = 0;
      while (!leaf) {
        if (++guard > int64_t(modes.size()) + 1) throw ctx.Fail(ErrorCode::kInvalidModel, "a tree has a cycle");
        const size_t n = size_t(node);
        const int64_t fi = feat.at(n);
        if (fi < 0 || fi >= F) throw ctx.Fail(ErrorCode::kInvalidModel, "feature id out of range");
        const double v = ElementAsDouble(x, r * F + fi), s = n < splits.size() ? splits[n] : 0.0;
        bool go;
        switch (modes.at(n)) {
          case 0: go = v <= s; break;
          case 1: go = v < s; break;
          case 2: go = v >= s; break;
          case 3: go = v > s; break;
          case 4: go = v == s; break;
          case 5: go = v != s; break;
          default: go = std::find(sets[n].begin(), sets[n].end(), v) != sets[n].end(); break;
        }
        if (!go && v != v && n < missing.size() && missing[n]) go = true;
        leaf = go ? tleaf.at(n) != 0 : fleaf.at(n) != 0;
        node = go ? tnode.at(n) : fnode.at(n);
      }
      const float w = float(leaf_w.at(size_t(node)));
      const int64_t t = leaf_t.at(size_t(node));
      if (t < 0 || t >= nt) throw ctx.Fail(ErrorCode::kInvalidModel, "leaf target out of range");
      float& dst = res[size_t(t)];
      if (agg == 1)
        dst = dst + w;
      else if (agg == 0)
        dst = dst + w / float(roots.size());
      else if (agg == 2)
        dst = w < dst ? w : dst;
      else
        dst = w > dst ? w : dst;
    }
    for (int64_t t = 0; t < nt; ++t) StoreF32(y, r * nt + t, res[size_t(t)]);
  }
}

}  // namespace ops
}  // namespace onemodel::impl
