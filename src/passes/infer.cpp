// Static inference (see infer.h).
#include "passes/infer.h"

#include "core/limits.h"

#include <functional>

#include "core/error.h"
#include "ops/op_context.h"
#include "core/value.h"

namespace onemodel::impl {
namespace {

bool Static(const TensorType& t) {
  if (!t.has_shape || t.dtype == DType::kUndefined) return false;
  for (int64_t d : t.dims)
    if (d < 0) return false;
  return true;
}
TensorType Of(DType dt, const Shape& s) {
  TensorType t;
  t.dtype = dt;
  t.has_shape = true;
  t.dims = s;
  t.dim_params.assign(s.size(), "");
  return t;
}
TensorType Unknown(DType dt = DType::kUndefined) {
  TensorType t;
  t.dtype = dt;
  return t;
}

// Numpy broadcasting of partially known shapes: -1 stays unknown unless the other is > 1.
TensorType Broadcast(const std::vector<const TensorType*>& ts, DType dt) {
  size_t rank = 0;
  for (const TensorType* t : ts) {
    if (!t->has_shape) return Unknown(dt);
    rank = std::max(rank, t->dims.size());
  }
  Shape out(rank, 1);
  std::vector<bool> known(rank, true);
  for (const TensorType* t : ts) {
    for (size_t k = 0; k < t->dims.size(); ++k) {
      const size_t o = rank - t->dims.size() + k;
      const int64_t d = t->dims[k];
      if (d == 1) continue;
      if (d < 0) {
        if (out[o] == 1) known[o] = false;
        continue;
      }
      out[o] = d;
      known[o] = true;
    }
  }
  for (size_t k = 0; k < rank; ++k)
    if (!known[k] && out[k] == 1) out[k] = -1;
  return Of(dt, out);
}

const char* kUnary[] = {"Abs",
                        "Neg",
                        "Relu",
                        "Sqrt",
                        "Reciprocal",
                        "Floor",
                        "Ceil",
                        "Round",
                        "Sign",
                        "LeakyRelu",
                        "ThresholdedRelu",
                        "HardSigmoid",
                        "HardSwish",
                        "Clip",
                        "Identity",
                        "Exp",
                        "Log",
                        "Tanh",
                        "Sigmoid",
                        "Erf",
                        "Sin",
                        "Cos",
                        "Tan",
                        "Asin",
                        "Acos",
                        "Atan",
                        "Sinh",
                        "Cosh",
                        "Asinh",
                        "Acosh",
                        "Atanh",
                        "Softplus",
                        "Softsign",
                        "Elu",
                        "Selu",
                        "Celu",
                        "Mish",
                        "Swish",
                        "SwiGLU",
                        "Gelu",
                        "Softmax",
                        "LogSoftmax",
                        "Hardmax",
                        "LayerNormalization",
                        "RMSNormalization",
                        "BatchNormalization",
                        "InstanceNormalization",
                        "GroupNormalization",
                        "LpNormalization",
                        "Dropout",
                        "Shrink",
                        "CumSum",
                        "BitwiseNot",
                        "RotaryEmbedding",
                        "LRN"};
const char* kBinary[] = {"Add",  "Sub", "Mul",        "Div",       "Pow",        "Max",      "Min",  "Sum",
                         "Mean", "Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift", "PRelu"};
const char* kCompare[] = {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"};

bool In(const std::string& op, const char* const* list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (op == list[i]) return true;
  return false;
}

// Reshape to the requested dims `req` (0 copies the input's dim unless allowzero; one -1
// is inferred when the input's shape is static).
TensorType ReshapeRule(const Node& n, const TensorType& x, const std::vector<int64_t>& req) {
  const bool allowzero = n.attr("allowzero") && n.attr("allowzero")->i;
  Shape s(req.size());
  int64_t known = 1, infer = -1;
  bool ok = true;
  for (size_t i = 0; i < req.size(); ++i) {
    int64_t d = req[i];
    if (d == 0 && !allowzero) d = i < x.dims.size() ? x.dims[i] : -1;
    if (req[i] == -1) {
      infer = int64_t(i);
      continue;
    }
    if (d < 0) ok = false;
    s[i] = d;
    if (d >= 0 && __builtin_mul_overflow(known, d, &known)) ok = false;  // left to run time
  }
  if (infer >= 0) {
    int64_t total = 1;
    bool st = Static(x);
    for (int64_t d : x.dims) st = st && !__builtin_mul_overflow(total, d < 0 ? 1 : d, &total);
    s[size_t(infer)] = (st && ok && known > 0) ? total / known : -1;
  }
  return Of(x.dtype, s);
}

// The shape rule of node n (default domain) for its inputs' inferred values: the first
// output's type, partly or wholly unknown where the rule cannot tell.
TensorType ShapeRule(const Node& n, const std::vector<const InferredValue*>& ins) {
  auto t = [&](size_t i) -> const TensorType* { return i < ins.size() && ins[i] ? &ins[i]->type : nullptr; };
  auto ints = [&](size_t i, std::vector<int64_t>* out) -> bool {
    if (i >= ins.size() || !ins[i] || !ins[i]->is_constant) return false;
    const Tensor& c = ins[i]->constant;
    out->clear();
    for (int64_t k = 0; k < c.numel(); ++k) {
      if (c.dtype() == DType::kInt64)
        out->push_back(c.data<int64_t>()[k]);
      else if (c.dtype() == DType::kInt32)
        out->push_back(c.data<int32_t>()[k]);
      else
        return false;
    }
    return true;
  };
  TensorType out = Unknown();
  const TensorType* x = t(0);
  if (n.domain.empty() && x) {
    if (In(n.op_type, kUnary, sizeof(kUnary) / sizeof(kUnary[0]))) {
      out = *x;
    } else if (In(n.op_type, kBinary, sizeof(kBinary) / sizeof(kBinary[0]))) {
      std::vector<const TensorType*> all;
      bool ok = true;
      for (size_t i = 0; i < ins.size(); ++i) {
        if (!t(i)) {
          ok = false;
          break;
        }
        all.push_back(t(i));
      }
      out = ok ? Broadcast(all, x->dtype) : Unknown(x->dtype);
    } else if (In(n.op_type, kCompare, sizeof(kCompare) / sizeof(kCompare[0]))) {
      out = t(1) ? Broadcast({x, t(1)}, DType::kBool) : Unknown(DType::kBool);
    } else if (n.op_type == "Not" || n.op_type == "IsNaN" || n.op_type == "IsInf") {
      out = *x;
      out.dtype = DType::kBool;
    } else if (n.op_type == "Where" && t(1) && t(2)) {
      out = Broadcast({x, t(1), t(2)}, t(1)->dtype);
    } else if (n.op_type == "Cast") {
      out = *x;
      if (const Attribute* a = n.attr("to")) out.dtype = DType(a->i);
    } else if (n.op_type == "CastLike" && t(1)) {
      out = *x;
      out.dtype = t(1)->dtype;
    } else if (n.op_type == "MatMul" && t(1) && x->has_shape && t(1)->has_shape && x->dims.size() >= 2 &&
               t(1)->dims.size() >= 2) {
      TensorType a = *x, b = *t(1);
      TensorType ba = Of(a.dtype, Shape(a.dims.begin(), a.dims.end() - 2));
      TensorType bb = Of(b.dtype, Shape(b.dims.begin(), b.dims.end() - 2));
      out = Broadcast({&ba, &bb}, a.dtype);
      out.dims.push_back(a.dims[a.dims.size() - 2]);
      out.dims.push_back(b.dims.back());
      out.dim_params.assign(out.dims.size(), "");
    } else if (n.op_type == "Gemm" && t(1) && x->has_shape && t(1)->has_shape && x->dims.size() == 2 &&
               t(1)->dims.size() == 2) {
      const bool ta = n.attr("transA") && n.attr("transA")->i, tb = n.attr("transB") && n.attr("transB")->i;
      out = Of(x->dtype, {ta ? x->dims[1] : x->dims[0], tb ? t(1)->dims[0] : t(1)->dims[1]});
    } else if ((n.op_type == "Reshape") && x->has_shape) {
      std::vector<int64_t> req;
      out = ints(1, &req) ? ReshapeRule(n, *x, req) : Unknown(x->dtype);
    } else if (n.op_type == "Transpose" && x->has_shape) {
      std::vector<int64_t> perm;
      if (const Attribute* a = n.attr("perm")) perm = a->ints;
      if (perm.empty())
        for (int64_t i = int64_t(x->dims.size()) - 1; i >= 0; --i) perm.push_back(i);
      Shape s;
      for (int64_t p : perm) s.push_back(p >= 0 && size_t(p) < x->dims.size() ? x->dims[size_t(p)] : -1);
      out = Of(x->dtype, s);
    } else if (n.op_type == "Flatten" && x->has_shape) {
      int64_t axis = n.attr("axis") ? n.attr("axis")->i : 1;
      const int64_t r = int64_t(x->dims.size());
      if (axis < 0) axis += r;
      int64_t a = 1, b = 1;
      for (int64_t i = 0; i < r; ++i) {
        int64_t& acc = i < axis ? a : b;
        acc = (acc < 0 || x->dims[size_t(i)] < 0) ? -1 : acc * x->dims[size_t(i)];
      }
      out = Of(x->dtype, {a, b});
    } else if ((n.op_type == "Conv" || n.op_type == "MaxPool" || n.op_type == "AveragePool") && Static(*x) &&
               (n.op_type != "Conv" || (t(1) && Static(*t(1))))) {
      out = Unknown(x->dtype);  // sizes need the kernel's pad arithmetic: found at run time
    } else if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
      if (x->has_shape) {
        Shape s = x->dims;
        for (size_t k = 2; k < s.size(); ++k) s[k] = 1;
        out = Of(x->dtype, s);
      }
    } else {
      out = Unknown();  // no rule: the type is found at run time
    }
  }
  return out;
}

// Folds node n when its value is known before the run: Shape of a statically shaped
// tensor, or any node (not random, without subgraphs) whose inputs are all constants, run
// with its reference kernel. Returns whether the outputs were recorded in v.
bool TryFold(const Model& model, const Node& n, const std::vector<const InferredValue*>& ins, bool all_const,
             std::map<std::string, InferredValue>& v) {
  bool has_subgraph = false;
  for (const auto& [k, a] : n.attributes) has_subgraph |= a.g != nullptr || !a.graphs.empty();
  static const char* kRandom[] = {"RandomUniform",    "RandomNormal", "RandomUniformLike",
                                  "RandomNormalLike", "Bernoulli",    "Multinomial"};
  const bool random = In(n.op_type, kRandom, 6);
  // Shape of a statically shaped tensor is a constant.
  if (n.op_type == "Shape" && ins.size() == 1 && ins[0] && Static(ins[0]->type) && n.domain.empty() &&
      ins[0]->type.dtype != DType::kString) {
    // Shape reads no element: a tensor of that shape without memory (a declared shape may
    // be far larger than memory).
    Tensor t = Tensor::Borrow(ins[0]->type.dtype, ins[0]->type.dims, nullptr, nullptr, "Shape's input");
    Value tv = Value::FromTensor(t);
    OpContext ctx(n, model.opsets.count("") ? model.opsets.at("") : 1);
    ctx.inputs.push_back(&tv);
    FindRefOp("", "Shape")(ctx);
    InferredValue iv;
    iv.type = Of(DType::kInt64, ctx.outputs[0].tensor.shape());
    iv.is_constant = true;
    iv.constant = ctx.outputs[0].tensor;
    v[n.outputs[0]] = iv;
    return true;
  }
  // Constant folding with the reference kernels.
  OpFn fn = FindRefOp(n.domain, n.op_type);
  if (all_const && fn && !has_subgraph && !random) {
    // Folding is an optimisation: a fold that would make a tensor over 64 MiB (or the
    // thread's own limit) is left to run time.
    Limits fold_limits = ThreadLimits() ? *ThreadLimits() : Limits();
    const uint64_t kFoldCap = uint64_t(64) << 20;
    if (fold_limits.max_tensor_bytes == 0 || fold_limits.max_tensor_bytes > kFoldCap)
      fold_limits.max_tensor_bytes = kFoldCap;
    LimitScope fold_scope(&fold_limits, ThreadBudget());
    try {
      std::vector<Value> vals;
      vals.reserve(ins.size());
      for (const auto* i : ins) vals.push_back(i ? Value::FromTensor(i->constant) : Value());
      auto it = model.opsets.find(n.domain);
      OpContext ctx(n, it == model.opsets.end() ? 1 : it->second);
      for (size_t i = 0; i < ins.size(); ++i) ctx.inputs.push_back(ins[i] ? &vals[i] : nullptr);
      const RunControl control = BoundedRunControl(ThreadRunControl(), kFoldTimeLimitMs);  // as FoldConstants
      RunControlScope run_scope(&control);
      fn(ctx);
      for (size_t k = 0; k < n.outputs.size(); ++k) {
        if (n.outputs[k].empty() || !ctx.outputs[k].is_tensor()) continue;
        InferredValue iv;
        iv.type = Of(ctx.outputs[k].tensor.dtype(), ctx.outputs[k].tensor.shape());
        iv.is_constant = true;
        iv.constant = ctx.outputs[k].tensor;
        v[n.outputs[k]] = iv;
      }
      return true;
    } catch (const Error&) {
      // Leave the outputs to run time (the run reports the error).
    }
  }
  return false;
}

}  // namespace

std::map<std::string, InferredValue> InferTypes(const Model& model, const std::map<std::string, TensorType>& inputs) {
  std::map<std::string, InferredValue> v;
  const Graph& g = *model.graph;
  for (const auto& [name, t] : g.initializers) {
    InferredValue iv;
    iv.type = Of(t.dtype(), t.shape());
    iv.is_constant = true;
    iv.constant = t;
    v[name] = iv;
  }
  for (const auto& in : g.inputs) {
    if (g.initializers.count(in.name) && !inputs.count(in.name)) continue;
    InferredValue iv;
    auto it = inputs.find(in.name);
    if (it != inputs.end())
      iv.type = it->second;
    else if (in.type.kind == ValueType::Kind::kTensor)
      iv.type = in.type.tensor;
    v[in.name] = iv;
  }
  for (const Node& n : g.nodes) {
    std::vector<const InferredValue*> ins;
    bool all_const = !n.inputs.empty() || n.op_type == "Constant";
    for (const auto& name : n.inputs) {
      if (name.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      auto it = v.find(name);
      ins.push_back(it == v.end() ? nullptr : &it->second);
      if (it == v.end() || !it->second.is_constant) all_const = false;
    }
    if (TryFold(model, n, ins, all_const, v)) continue;
    const TensorType out = n.domain.empty() ? ShapeRule(n, ins) : Unknown();
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      if (n.outputs[k].empty()) continue;
      InferredValue iv;
      iv.type = k == 0 ? out : Unknown();
      v[n.outputs[k]] = iv;
    }
  }
  return v;
}

}  // namespace onemodel::impl
