// Reference Einsum and Det (linear algebra beside MatMul, ops/math/matmul.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "ref/math.h"
#include "ops/ops.h"
#include "ops/util.h"

namespace onemodel::impl {
namespace ops {

// Einsum: each output element sums, over the contracted letters (in order of first
// appearance, row-major), the product of the operands' elements, one accumulator from
// -0.0 left to right; products multiply operands left to right.
// An Einsum equation resolved against its inputs: each input's term (ellipses replaced by
// upper-case letters for the broadcast dimensions), the output's letters, the contracted
// letters (in order of first appearance) and every letter's size.
namespace {

struct EinsumSpec {
  std::vector<std::string> terms;
  std::string out, contracted;
  std::map<char, int64_t> dim;
};

EinsumSpec ParseEinsum(const OpContext& ctx) {
  EinsumSpec sp;
  std::vector<std::string>& terms = sp.terms;
  std::map<char, int64_t>& dim = sp.dim;
  std::string& out = sp.out;
  std::string& contracted = sp.contracted;
  std::string eq = ctx.attr_s("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  for (size_t st = 0;;) {
    const size_t c = lhs.find(',', st);
    terms.push_back(lhs.substr(st, c == std::string::npos ? std::string::npos : c - st));
    if (c == std::string::npos) break;
    st = c + 1;
  }
  if (terms.size() != ctx.num_inputs()) throw ctx.Fail(ErrorCode::kInvalidModel, "equation and inputs disagree");
  // Ellipsis: replace by upper-case letters standing for the broadcast dimensions.
  int64_t ell = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    const size_t p = terms[t].find("...");
    if (p != std::string::npos) ell = std::max<int64_t>(ell, ctx.in(t).rank() - int64_t(terms[t].size() - 3));
  }
  std::string ell_letters;
  for (int64_t k = 0; k < ell; ++k) ell_letters += char('A' + k);
  for (size_t t = 0; t < terms.size(); ++t) {
    const size_t p = terms[t].find("...");
    if (p == std::string::npos) continue;
    const int64_t here = ctx.in(t).rank() - int64_t(terms[t].size() - 3);
    terms[t] = terms[t].substr(0, p) + ell_letters.substr(size_t(ell - here)) + terms[t].substr(p + 3);
  }
  std::string letters;
  for (size_t t = 0; t < terms.size(); ++t) {
    const Tensor& x = ctx.in(t);
    if (int64_t(terms[t].size()) != x.rank())
      throw ctx.Fail(ErrorCode::kShapeMismatch, "term '" + terms[t] + "' does not match input rank");
    for (size_t k = 0; k < terms[t].size(); ++k) {
      const char c = terms[t][k];
      const int64_t d = x.shape()[k];
      if (!dim.count(c)) {
        dim[c] = d;
        letters += c;
      } else if (dim[c] != d) {
        if (dim[c] == 1)
          dim[c] = d;
        else if (d != 1)
          throw ctx.Fail(ErrorCode::kShapeMismatch, std::string("dimension of '") + c + "' differs");
      }
    }
  }
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const size_t p = out.find("...");
    if (p != std::string::npos) out = out.substr(0, p) + ell_letters + out.substr(p + 3);
  } else {
    out = ell_letters;
    std::string once;
    for (char c : letters) {
      if (c >= 'A' && c <= 'Z') continue;
      int cnt = 0;
      for (const auto& t : terms) cnt += int(std::count(t.begin(), t.end(), c));
      if (cnt == 1) once += c;
    }
    std::sort(once.begin(), once.end());
    out += once;
  }
  for (char c : letters)
    if (out.find(c) == std::string::npos) contracted += c;
  return sp;
}

}  // namespace

void Einsum(OpContext& ctx) {
  EinsumSpec sp = ParseEinsum(ctx);
  const std::vector<std::string>& terms = sp.terms;
  std::map<char, int64_t>& dim = sp.dim;
  const std::string& out = sp.out;
  const std::string& contracted = sp.contracted;
  Shape os;
  for (char c : out) os.push_back(dim[c]);
  const Tensor& x0 = ctx.in(0);
  Tensor& y = ctx.out(0, x0.dtype(), os);
  std::vector<std::vector<double>> vals(ctx.num_inputs());
  for (size_t t = 0; t < ctx.num_inputs(); ++t) {
    const Tensor& x = ctx.in(t);
    vals[t].resize(static_cast<size_t>(x.numel()));
    DispatchNumeric(x.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < x.numel(); ++i) vals[t][size_t(i)] = double(Widen(x.data<T>()[i]));
    });
  }
  std::map<char, int64_t> at;
  auto offset = [&](size_t t) {
    const Tensor& x = ctx.in(t);
    int64_t off = 0;
    for (size_t k = 0; k < terms[t].size(); ++k) off = off * x.shape()[k] + (x.shape()[k] == 1 ? 0 : at[terms[t][k]]);
    return off;
  };
  int64_t csize = 1;
  for (char c : contracted) csize *= dim[c];
  const bool is_float = IsFloatDType(x0.dtype());
  for (int64_t o = 0; o < y.numel(); ++o) {
    int64_t rem = o;
    for (size_t k = out.size(); k-- > 0;) {
      at[out[k]] = rem % dim[out[k]];
      rem /= dim[out[k]];
    }
    float facc = -0.0f;
    double dacc = -0.0;
    int64_t iacc = 0;
    for (int64_t ci = 0; ci < csize; ++ci) {
      int64_t r2 = ci;
      for (size_t k = contracted.size(); k-- > 0;) {
        at[contracted[k]] = r2 % dim[contracted[k]];
        r2 /= dim[contracted[k]];
      }
      if (x0.dtype() == DType::kDouble) {
        double p = vals[0][size_t(offset(0))];
        for (size_t t = 1; t < terms.size(); ++t) p = p * vals[t][size_t(offset(t))];
        dacc = dacc + p;
      } else if (is_float) {
        float p = float(vals[0][size_t(offset(0))]);
        for (size_t t = 1; t < terms.size(); ++t) p = p * float(vals[t][size_t(offset(t))]);
        facc = facc + p;
      } else {
        int64_t p = int64_t(vals[0][size_t(offset(0))]);
        for (size_t t = 1; t < terms.size(); ++t)
          p = int64_t(uint64_t(p) * uint64_t(int64_t(vals[t][size_t(offset(t))])));
        iacc = int64_t(uint64_t(iacc) + uint64_t(p));
      }
    }
    DispatchNumeric(x0.dtype(), [&]<class T>() {
      using C = typename Compute<T>::type;
      if constexpr (std::is_same_v<C, double>)
        y.mutable_data<T>()[o] = dacc;
      else if constexpr (std::is_floating_point_v<C>)
        y.mutable_data<T>()[o] = Narrow<T>(C(facc));
      else
        y.mutable_data<T>()[o] = T(iacc);
    });
  }
}

// Det: Gaussian elimination with partial pivoting (first largest |pivot|) in binary64,
// rounded once to the output type.
void Det(OpContext& ctx) {
  const Tensor& x = ctx.in(0);
  if (x.rank() < 2 || x.shape()[size_t(x.rank() - 1)] != x.shape()[size_t(x.rank() - 2)]) {
    throw ctx.Fail(ErrorCode::kShapeMismatch, "input must be [..., M, M]");
  }
  if (!IsFloatDType(x.dtype())) throw ctx.Fail(ErrorCode::kTypeMismatch, "the input must be a float type");
  const int64_t m = x.shape().back();
  Shape s(x.shape().begin(), x.shape().end() - 2);
  Tensor& y = ctx.out(0, x.dtype(), s);
  std::vector<double> a(static_cast<size_t>(m * m));
  for (int64_t b = 0; b < y.numel(); ++b) {
    DispatchNumeric(x.dtype(), [&]<class T>() {
      for (int64_t i = 0; i < m * m; ++i) a[size_t(i)] = double(Widen(x.data<T>()[b * m * m + i]));
    });
    double det = 1.0;
    for (int64_t c = 0; c < m; ++c) {
      int64_t p = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::fabs(a[size_t(r * m + c)]) > std::fabs(a[size_t(p * m + c)])) p = r;
      if (a[size_t(p * m + c)] == 0.0) {
        det = 0.0;
        break;
      }
      if (p != c) {
        for (int64_t k = 0; k < m; ++k) std::swap(a[size_t(p * m + k)], a[size_t(c * m + k)]);
        det = -det;
      }
      det = det * a[size_t(c * m + c)];
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[size_t(r * m + c)] / a[size_t(c * m + c)];
        for (int64_t k = c; k < m; ++k) a[size_t(r * m + k)] = a[size_t(r * m + k)] - f * a[size_t(c * m + k)];
      }
    }
    DispatchNumeric(x.dtype(), [&]<class T>() { y.mutable_data<T>()[b] = Narrow<T>(typename Compute<T>::type(det)); });
  }
}

}  // namespace ops
}  // namespace onemodel::impl
