// Reference string operators. Byte-wise on UTF-8; case changes are ASCII-only (the
// same on every platform, whatever its locale: a decision in docs/exact-mode.md).
#include <optional>

#include "ops/ops.h"
#include "ops/text_ml/regex.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {
namespace {

const Tensor& StrIn(const OpContext& ctx, size_t i) {
  const Tensor& t = ctx.in(i);
  if (t.dtype() != DType::kString)
    throw ctx.Fail(ErrorCode::kTypeMismatch, "input " + std::to_string(i) + " must be STRING");
  return t;
}
std::string Lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}
std::string Upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = char(c - 'a' + 'A');
  return s;
}
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

}  // namespace

void StringConcat(OpContext& ctx) {
  const Tensor& a = StrIn(ctx, 0);
  const Tensor& b = StrIn(ctx, 1);
  const Shape s = BroadcastShapes(ctx, {a.shape(), b.shape()});
  Tensor& out = ctx.out(0, DType::kString, s);
  const auto ia = BroadcastIndex(a.shape(), s), ib = BroadcastIndex(b.shape(), s);
  for (size_t i = 0; i < ia.size(); ++i)
    out.mutable_strings()[i] = a.strings()[size_t(ia[i])] + b.strings()[size_t(ib[i])];
}

// Python's str.split semantics: no delimiter splits on whitespace runs (dropping empty
// pieces); a delimiter splits exactly; maxsplit bounds the number of splits.
void StringSplit(OpContext& ctx) {
  const Tensor& x = StrIn(ctx, 0);
  const bool has_delim = ctx.has_attr("delimiter") && !ctx.attr_s("delimiter", "").empty();
  const std::string delim = ctx.attr_s("delimiter", "");
  const int64_t maxsplit = ctx.has_attr("maxsplit") ? ctx.attr_i("maxsplit", -1) : -1;
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(x.numel()));
  size_t widest = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const std::string& s = x.strings()[size_t(i)];
    auto& p = parts[size_t(i)];
    int64_t splits = 0;
    if (has_delim) {
      size_t start = 0;
      for (;;) {
        const size_t at = (maxsplit >= 0 && splits >= maxsplit) ? std::string::npos : s.find(delim, start);
        if (at == std::string::npos) {
          p.push_back(s.substr(start));
          break;
        }
        p.push_back(s.substr(start, at - start));
        start = at + delim.size();
        ++splits;
      }
    } else {
      size_t i2 = 0;
      while (i2 < s.size()) {
        while (i2 < s.size() && IsSpace(s[i2])) ++i2;
        if (i2 >= s.size()) break;
        if (maxsplit >= 0 && splits >= maxsplit) {
          size_t e = s.size();
          while (e > i2 && IsSpace(s[e - 1])) --e;
          p.push_back(s.substr(i2, e - i2));
          break;
        }
        size_t j = i2;
        while (j < s.size() && !IsSpace(s[j])) ++j;
        p.push_back(s.substr(i2, j - i2));
        ++splits;
        i2 = j;
      }
    }
    widest = std::max(widest, p.size());
  }
  Shape ys = x.shape();
  ys.push_back(int64_t(widest));
  Tensor& y = ctx.out(0, DType::kString, ys);
  Tensor& z = ctx.out(1, DType::kInt64, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto& p = parts[size_t(i)];
    for (size_t k = 0; k < p.size(); ++k) y.mutable_strings()[size_t(i) * widest + k] = p[k];
    z.mutable_data<int64_t>()[i] = int64_t(p.size());
  }
}

void StringNormalizer(OpContext& ctx) {
  const Tensor& x = StrIn(ctx, 0);
  const std::string action = ctx.attr_s("case_change_action", "NONE");
  const bool sensitive = ctx.attr_i("is_case_sensitive", 0) != 0;
  std::vector<std::string> stop;
  if (const Attribute* a = ctx.node.attr("stopwords")) stop = a->strings;
  std::vector<std::string> kept;
  for (const std::string& s : x.strings()) {
    bool drop = false;
    for (const std::string& w : stop) drop |= sensitive ? s == w : Lower(s) == Lower(w);
    if (drop) continue;
    kept.push_back(action == "LOWER" ? Lower(s) : action == "UPPER" ? Upper(s) : s);
  }
  if (kept.empty()) kept.push_back("");
  Shape s = x.rank() == 2 ? Shape{1, int64_t(kept.size())} : Shape{int64_t(kept.size())};
  Tensor& y = ctx.out(0, DType::kString, s);
  y.mutable_strings() = kept;
}

// N.B. std::regex's ECMAScript grammar stands in for RE2: the same for the common
// subset (classes, alternation, repetition); back-references and RE2-only syntax
// differ. Matching is deterministic on every target.
void RegexFullMatch(OpContext& ctx) {
  const Tensor& x = StrIn(ctx, 0);
  std::optional<Regex> re;
  try {
    re.emplace(ctx.attr_s("pattern", ""));
  } catch (const Error& e) {
    throw ctx.Fail(e.code(), e.what());
  }
  Tensor& y = ctx.out(0, DType::kBool, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.mutable_data<uint8_t>()[i] = re->FullMatch(x.strings()[size_t(i)]);
}

}  // namespace ops
}  // namespace onemodel::impl
