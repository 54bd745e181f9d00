// Fuzz harness: one-node graphs of one operator with fuzzed attributes, input types,
// shapes and elements (specials included), run at ISA "ref" (the oracle) and at the
// best target. Beyond "no crash, only typed errors": when both runs succeed their golden
// hashes must be equal, and one may not fail where the other succeeds (the exact
// contract, checked on inputs no one wrote by hand).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_model_builder.h"

using namespace onemodel;

namespace {

const char* const kOps[] = {"Add",
                            "Sub",
                            "Mul",
                            "Div",
                            "Pow",
                            "Max",
                            "Min",
                            "Mean",
                            "Sum",
                            "Mod",
                            "Relu",
                            "LeakyRelu",
                            "Elu",
                            "Selu",
                            "Sigmoid",
                            "HardSigmoid",
                            "HardSwish",
                            "Tanh",
                            "Erf",
                            "Gelu",
                            "Exp",
                            "Log",
                            "Sqrt",
                            "Reciprocal",
                            "Abs",
                            "Neg",
                            "Floor",
                            "Ceil",
                            "Round",
                            "Sin",
                            "Cos",
                            "Tan",
                            "Softplus",
                            "Softsign",
                            "Mish",
                            "Celu",
                            "ThresholdedRelu",
                            "PRelu",
                            "Sign",
                            "IsNaN",
                            "IsInf",
                            "Softmax",
                            "LogSoftmax",
                            "Hardmax",
                            "MatMul",
                            "Gemm",
                            "Conv",
                            "ConvTranspose",
                            "MaxPool",
                            "AveragePool",
                            "GlobalAveragePool",
                            "GlobalMaxPool",
                            "LpPool",
                            "BatchNormalization",
                            "InstanceNormalization",
                            "LayerNormalization",
                            "GroupNormalization",
                            "LRN",
                            "ReduceSum",
                            "ReduceMean",
                            "ReduceMax",
                            "ReduceMin",
                            "ReduceProd",
                            "ReduceL1",
                            "ReduceL2",
                            "ReduceLogSumExp",
                            "ReduceSumSquare",
                            "ArgMax",
                            "ArgMin",
                            "Transpose",
                            "Reshape",
                            "Flatten",
                            "Squeeze",
                            "Unsqueeze",
                            "Concat",
                            "Split",
                            "Slice",
                            "Gather",
                            "GatherElements",
                            "GatherND",
                            "ScatterElements",
                            "ScatterND",
                            "Expand",
                            "Tile",
                            "Pad",
                            "Where",
                            "Equal",
                            "Less",
                            "Greater",
                            "And",
                            "Or",
                            "Xor",
                            "Not",
                            "Cast",
                            "CastLike",
                            "Clip",
                            "Resize",
                            "TopK",
                            "CumSum",
                            "Einsum",
                            "DepthToSpace",
                            "SpaceToDepth",
                            "Shape",
                            "Size",
                            "Range",
                            "OneHot",
                            "NonZero",
                            "Trilu",
                            "QuantizeLinear",
                            "DequantizeLinear",
                            "DynamicQuantizeLinear",
                            "MatMulInteger",
                            "ConvInteger",
                            "QLinearMatMul",
                            "QLinearConv",
                            "BitShift",
                            "Identity",
                            "ReverseSequence",
                            "GridSample",
                            "DFT",
                            "LSTM",
                            "GRU",
                            "RNN",
                            "Dropout",
                            "ConstantOfShape",
                            "EyeLike",
                            "Compress",
                            "Unique",
                            "MeanVarianceNormalization",
                            "RoiAlign",
                            "AffineGrid",
                            "CenterCropPad",
                            "Col2Im",
                            "BlackmanWindow",
                            "STFT",
                            "NegativeLogLikelihoodLoss",
                            "SoftmaxCrossEntropyLoss"};
constexpr size_t kOpCount = sizeof(kOps) / sizeof(kOps[0]);
// The `opmore` harness's operators: every other one of the default domain but the
// control flow (subgraphs), the random ones (no oracle to compare with) and Constant (no
// inputs), string inputs included. A list of its own, so that the `op` harness's inputs
// (its corpus, tests/regress/op) keep meaning what they meant.
const char* const kMoreOps[] = {"LessOrEqual",
                                "GreaterOrEqual",
                                "BitwiseAnd",
                                "BitwiseOr",
                                "BitwiseXor",
                                "BitwiseNot",
                                "Asin",
                                "Acos",
                                "Atan",
                                "Sinh",
                                "Cosh",
                                "Asinh",
                                "Acosh",
                                "Atanh",
                                "Swish",
                                "ReduceLogSum",
                                "Scatter",
                                "CumProd",
                                "Shrink",
                                "RMSNormalization",
                                "LpNormalization",
                                "GlobalLpPool",
                                "MaxUnpool",
                                "DeformConv",
                                "Attention",
                                "RotaryEmbedding",
                                "CausalConvWithState",
                                "LinearAttention",
                                "SequenceConstruct",
                                "SequenceEmpty",
                                "SequenceAt",
                                "SequenceInsert",
                                "SequenceErase",
                                "SequenceLength",
                                "ConcatFromSequence",
                                "SplitToSequence",
                                "Optional",
                                "OptionalHasElement",
                                "OptionalGetElement",
                                "Upsample",
                                "NonMaxSuppression",
                                "StringConcat",
                                "StringSplit",
                                "StringNormalizer",
                                "RegexFullMatch",
                                "BitCast",
                                "HannWindow",
                                "HammingWindow",
                                "Det",
                                "TensorScatter",
                                "MelWeightMatrix",
                                "TfIdfVectorizer"};
constexpr size_t kMoreOpCount = sizeof(kMoreOps) / sizeof(kMoreOps[0]);

enum Kind { kInt, kFloat, kInts, kString, kFloats };
struct AttrSpec {
  const char* name;
  Kind kind;
};
const AttrSpec kAttrs[] = {{"axis", kInt},
                           {"axes", kInts},
                           {"keepdims", kInt},
                           {"kernel_shape", kInts},
                           {"strides", kInts},
                           {"pads", kInts},
                           {"dilations", kInts},
                           {"group", kInt},
                           {"perm", kInts},
                           {"alpha", kFloat},
                           {"beta", kFloat},
                           {"gamma", kFloat},
                           {"epsilon", kFloat},
                           {"mode", kString},
                           {"transA", kInt},
                           {"transB", kInt},
                           {"to", kInt},
                           {"largest", kInt},
                           {"sorted", kInt},
                           {"exclusive", kInt},
                           {"reverse", kInt},
                           {"upper", kInt},
                           {"blocksize", kInt},
                           {"auto_pad", kString},
                           {"ceil_mode", kInt},
                           {"count_include_pad", kInt},
                           {"p", kInt},
                           {"select_last_index", kInt},
                           {"noop_with_empty_axes", kInt},
                           {"equation", kString},
                           {"direction", kString},
                           {"hidden_size", kInt},
                           {"layout", kInt},
                           {"num_groups", kInt},
                           {"stash_type", kInt},
                           {"coordinate_transformation_mode", kString},
                           {"nearest_mode", kString},
                           {"cubic_coeff_a", kFloat},
                           {"output_padding", kInts},
                           {"output_shape", kInts},
                           {"size", kInt},
                           {"bias", kFloat},
                           {"approximate", kString},
                           {"saturate", kInt},
                           {"block_size", kInt},
                           {"output_dtype", kInt},
                           {"onesided", kInt},
                           {"inverse", kInt},
                           {"batch_axis", kInt},
                           {"time_axis", kInt},
                           {"align_corners", kInt},
                           {"padding_mode", kString},
                           {"scales", kFloats},
                           {"activation_alpha", kFloats},
                           {"k", kInt},
                           {"fmod", kInt},
                           {"sorted", kInt},
                           {"exclude_outside", kInt},
                           {"extrapolation_value", kFloat},
                           {"antialias", kInt},
                           {"reduction", kString},
                           {"ignore_index", kInt},
                           {"linear_before_reset", kInt},
                           {"spatial_scale", kFloat},
                           {"sampling_ratio", kInt},
                           {"output_height", kInt},
                           {"output_width", kInt},
                           {"periodic", kInt},
                           {"dtype", kInt},
                           {"pattern", kString},
                           {"delimiter", kString},
                           {"maxsplit", kInt},
                           {"case_change_action", kString},
                           {"lambd", kFloat},
                           {"q_num_heads", kInt},
                           {"kv_num_heads", kInt},
                           {"num_heads", kInt},
                           {"is_causal", kInt},
                           {"interleaved", kInt},
                           {"rotary_embedding_dim", kInt},
                           {"offset_group", kInt},
                           {"center_point_box", kInt},
                           {"min_gram_length", kInt},
                           {"max_gram_length", kInt},
                           {"max_skip_count", kInt},
                           {"ngram_counts", kInts},
                           {"ngram_indexes", kInts},
                           {"pool_int64s", kInts}};
constexpr size_t kAttrCount = sizeof(kAttrs) / sizeof(kAttrs[0]);
const char* const kStrings[] = {"NOTSET",
                                "SAME_UPPER",
                                "SAME_LOWER",
                                "VALID",
                                "constant",
                                "reflect",
                                "edge",
                                "wrap",
                                "nearest",
                                "linear",
                                "cubic",
                                "DCR",
                                "CRD",
                                "bilinear",
                                "forward",
                                "reverse",
                                "bidirectional",
                                "ij,jk->ik",
                                "i,i->",
                                "bij->bji",
                                "...ii->...i",
                                "half_pixel",
                                "asymmetric",
                                "align_corners",
                                "pytorch_half_pixel",
                                "tf_crop_and_resize",
                                "round_prefer_floor",
                                "floor",
                                "ceil",
                                "tanh",
                                "none",
                                "mean",
                                "sum",
                                "zeros",
                                "border",
                                "reflection",
                                "ab,cd->",
                                "UPPER",
                                "LOWER",
                                "TF",
                                "IDF",
                                "TFIDF",
                                " ",
                                "(a|b)*",
                                "[\\w.]+@(x|y)\\.com",
                                "a{2,5}b?",
                                "(a*)*c",
                                "\\bx\\B.\\d+$",
                                "[^\\x00-\\x{7F}]+",
                                "((a|b){3,9}){1,3}",
                                ""};
constexpr size_t kStringCount = sizeof(kStrings) / sizeof(kStrings[0]);
// float, int64, int32, uint8, int8, bool, float16, double; opmore: string too
const int32_t kTypes[] = {1, 1, 1, 7, 6, 2, 3, 9, 10, 11, 8};
constexpr size_t kTypeCount = sizeof(kTypes) / sizeof(kTypes[0]) - 1;

class Reader {
 public:
  Reader(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t Byte() { return i_ < n_ ? d_[i_++] : 0; }
  float Float() {
    uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u |= uint32_t(Byte()) << (8 * k);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const uint8_t* rest() const { return d_ + i_; }
  size_t left() const { return n_ - i_; }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

struct OpOutcome {
  bool ok = false;
  ErrorCode code = ErrorCode::kInternal;
  std::string hash, message;
};

OpOutcome RunAt(const std::string& bytes, const std::vector<NamedValue>& feeds, const char* isa) {
  OpOutcome r;
  try {
    Session s = Session::FromBytes(bytes.data(), bytes.size(), fuzz::FuzzOptions(isa), "op.onnx");
    r.hash = GoldenHash(s.Run(feeds, {}, fuzz::FuzzRunOptions()));
    r.ok = true;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kInternal) fuzz::Finding(e.what());
    r.code = e.code();
    r.message = e.what();
  } catch (const std::exception& e) {
    fuzz::Finding(e.what());
  }
  return r;
}

}  // namespace

namespace {
// The body of both operator harnesses: ops[n] the operator list, strings whether inputs
// may be string tensors.
int FuzzOneOp(const char* const* ops, size_t n, bool strings, const uint8_t* data, size_t size) {
  Reader rd(data, size);
  const char* op = ops[rd.Byte() % n];
  const uint8_t counts = rd.Byte();
  const int n_in = 1 + counts % 4, n_out = 1 + (counts >> 4) % 2;
  std::vector<fuzz::InputSpec> ins;
  std::vector<bool> raw;
  for (int i = 0; i < n_in; ++i) {
    const uint8_t t = rd.Byte();
    fuzz::InputSpec in{"x" + std::to_string(i), kTypes[t % (kTypeCount + (strings ? 1 : 0))], {}};
    raw.push_back(t & 0x80);
    const int rank = rd.Byte() % 5;
    for (int k = 0; k < rank; ++k) in.dims.push_back(rd.Byte() % 7);
    ins.push_back(in);
  }
  std::vector<std::string> outs;
  for (int i = 0; i < n_out; ++i) outs.push_back("y" + std::to_string(i));
  onnx::ModelProto m = fuzz::OneNodeModel(op, ins, outs);
  onnx::NodeProto* node = m.mutable_graph()->mutable_node(0);
  const int n_attr = rd.Byte() % 5;
  for (int a = 0; a < n_attr; ++a) {
    const AttrSpec& spec = kAttrs[rd.Byte() % kAttrCount];
    bool dup = false;
    for (const auto& have : node->attribute()) dup |= have.name() == spec.name;
    if (dup) continue;
    auto* at = node->add_attribute();
    at->set_name(spec.name);
    switch (spec.kind) {
      case kInt: at->set_type(onnx::AttributeProto::INT), at->set_i(int8_t(rd.Byte())); break;
      case kFloat: at->set_type(onnx::AttributeProto::FLOAT), at->set_f(rd.Float()); break;
      case kString: at->set_type(onnx::AttributeProto::STRING), at->set_s(kStrings[rd.Byte() % kStringCount]); break;
      case kInts: {
        at->set_type(onnx::AttributeProto::INTS);
        const int c = rd.Byte() % 7;
        for (int k = 0; k < c; ++k) at->add_ints(int8_t(rd.Byte()));
        break;
      }
      case kFloats: {
        at->set_type(onnx::AttributeProto::FLOATS);
        const int c = rd.Byte() % 5;
        for (int k = 0; k < c; ++k) at->add_floats(rd.Float());
        break;
      }
    }
  }
  const std::string bytes = m.SerializeAsString();
  // Inputs: generated (floats in [-1, 1), integers in [0, 64)) or the rest of the bytes,
  // cycled (any bit pattern: NaNs, infinities, subnormals, huge integers).
  std::vector<NamedValue> feeds;
  const uint8_t* pool = rd.rest();
  const size_t pool_n = rd.left();
  size_t at = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    ValueInfo vi;
    vi.name = ins[i].name;
    vi.kind = ValueInfo::Kind::kTensor;
    vi.type = ElementType(ins[i].elem_type);
    vi.has_shape = true;
    vi.shape = ins[i].dims;
    if (vi.type == ElementType::kString) {
      // A few fixed strings, or strings of the rest of the bytes (each as long as the
      // byte at its start says).
      static const char* const kText[] = {"ab", "x@y.com", "aaaa", "", "Hello World", "bx_9"};
      size_t n = 1;
      for (int64_t d : vi.shape) n *= size_t(d);
      std::vector<std::string> v(n);
      for (size_t k = 0; k < n; ++k) {
        if (!raw[i] || !pool_n) {
          v[k] = kText[k % 6];
          continue;
        }
        const size_t len = pool[at++ % pool_n];
        for (size_t j = 0; j < len; ++j) v[k] += char(pool[at++ % pool_n]);
      }
      feeds.push_back({vi.name, Tensor::FromStrings(std::move(v), vi.shape)});
      continue;
    }
    Tensor t = MakeGoldenInput(vi);
    if (raw[i] && pool_n && t.byte_size()) {
      uint8_t* p = static_cast<uint8_t*>(t.mutable_data());
      for (size_t k = 0; k < t.byte_size(); ++k) p[k] = pool[at++ % pool_n];
      if (t.type() == ElementType::kBool)
        for (size_t k = 0; k < t.byte_size(); ++k) p[k] &= 1;
    }
    feeds.push_back({vi.name, t});
  }
  const OpOutcome ref = RunAt(bytes, feeds, "ref");
  const OpOutcome best = RunAt(bytes, feeds, "");
  if (ref.ok != best.ok) {
    const std::string what = std::string(op) + ": ref " + (ref.ok ? "succeeded" : ref.message) + ", best target " +
                             (best.ok ? "succeeded" : best.message);
    fuzz::Finding(what.c_str());
  }
  if (ref.ok && ref.hash != best.hash) {
    const std::string what = std::string(op) + ": the best target's outputs differ from the oracle's";
    fuzz::Finding(what.c_str());
  }
  return 0;
}

}  // namespace

int onemodel::fuzz::FuzzOp(const uint8_t* data, size_t size) { return FuzzOneOp(kOps, kOpCount, false, data, size); }
int onemodel::fuzz::FuzzOpMore(const uint8_t* data, size_t size) {
  return FuzzOneOp(kMoreOps, kMoreOpCount, true, data, size);
}

#ifndef ONEMODEL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
#ifdef ONEMODEL_FUZZ_OP_MORE
  return onemodel::fuzz::FuzzOpMore(data, size);
#else
  return onemodel::fuzz::FuzzOp(data, size);
#endif
}
#endif
