// The public API's utilities (include/onemodel/onemodel.h): golden hashes and inputs,
// tensor files (.npy, serialized ONNX values) and what the build and the CPU have.
#include "api/convert.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>

#include "core/exact.h"
#include "core/golden.h"
#include "core/io.h"
#include "core/minifloat.h"
#include "core/npy.h"
#include "core/random.h"
#include "core/sha256.h"
#include "core/threadpool.h"
#include "passes/infer.h"
#include "onnx/import.h"
#include "onnx/tensor_proto.h"
#include "ops/op_context.h"
#include "ref/reduce.h"
#include "runtime/dispatch.h"
#include "runtime/session.h"

#ifndef ONEMODEL_VERSION
#define ONEMODEL_VERSION "0.0.0"
#endif

namespace onemodel {

using detail::Access;
using detail::Rethrow;

// ------------------------------------------------------------------ golden hashes

struct GoldenHasher::State {
  impl::Sha256 h;
};
GoldenHasher::GoldenHasher() : s_(std::make_unique<State>()) {}
GoldenHasher::~GoldenHasher() = default;

void GoldenHasher::Add(const Value& v) {
  try {
    switch (v.kind()) {
      case Value::Kind::kTensor: impl::GoldenSerialize(Access::ToImpl(v.tensor()), s_->h); break;
      case Value::Kind::kSequence: {
        std::vector<impl::Tensor> ts;
        for (const Tensor& t : v.sequence()) ts.push_back(Access::ToImpl(t));
        impl::GoldenSerializeSequence(ts, s_->h);
        break;
      }
      case Value::Kind::kNone: impl::GoldenSerializeEmptyOptional(s_->h); break;
    }
  } catch (...) {
    Rethrow();
  }
}

std::string GoldenHasher::HexDigest() {
  std::string d = s_->h.HexDigest();
  s_ = std::make_unique<State>();
  return d;
}

std::string GoldenHash(const std::vector<NamedValue>& values) {
  GoldenHasher h;
  for (const NamedValue& v : values) h.Add(v.value);
  return h.HexDigest();
}

std::string GoldenHash(const Value& value) {
  GoldenHasher h;
  h.Add(value);
  return h.HexDigest();
}

std::string GoldenSkipMarker() { return impl::GoldenSkipMarker(); }

Tensor MakeGoldenInput(const ValueInfo& in, const std::map<std::string, int64_t>& dims) {
  try {
    if (in.kind != ValueInfo::Kind::kTensor) {
      throw Error(ErrorCode::kInvalidArgument, "input '" + in.name + "' is not a tensor: give it with --input");
    }
    impl::Shape shape;
    for (size_t k = 0; k < in.shape.size(); ++k) {
      int64_t d = in.shape[k];
      if (d < 0) {
        auto it = dims.find(k < in.symbolic.size() ? in.symbolic[k] : "");
        d = it == dims.end() ? 1 : it->second;
      }
      shape.push_back(d);
    }
    uint64_t seed = 1469598103934665603ull;
    for (char c : in.name) seed = (seed ^ uint8_t(c)) * 1099511628211ull;
    impl::SplitMix64 rng(seed);
    using impl::DType;
    const DType dt = detail::ToImpl(in.type);
    impl::Tensor t(dt, shape, "generated input '" + in.name + "'");
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (dt) {
        case DType::kFloat: t.mutable_data<float>()[i] = rng.Uniform(-1.0f, 1.0f); break;
        case DType::kDouble: t.mutable_data<double>()[i] = double(rng.Uniform(-1.0f, 1.0f)); break;
        case DType::kFloat16: t.mutable_data<uint16_t>()[i] = impl::F32ToHalf(rng.Uniform(-1.0f, 1.0f)); break;
        case DType::kBFloat16: t.mutable_data<uint16_t>()[i] = impl::F32ToBF16(rng.Uniform(-1.0f, 1.0f)); break;
        case DType::kInt64: t.mutable_data<int64_t>()[i] = int64_t(rng.NextU32() % 64); break;
        case DType::kInt32: t.mutable_data<int32_t>()[i] = int32_t(rng.NextU32() % 64); break;
        case DType::kUInt8:
        case DType::kInt8: t.mutable_data<uint8_t>()[i] = uint8_t(rng.NextU32() % 64); break;
        case DType::kBool: t.mutable_data<uint8_t>()[i] = uint8_t(i % 2); break;
        default:
          throw Error(ErrorCode::kTypeMismatch, "cannot generate input '" + in.name + "' of type " +
                                                    impl::DTypeName(dt) + ": give it with --input");
      }
    }
    return Access::FromImpl(std::move(t));
  } catch (...) {
    Rethrow();
  }
}

// ------------------------------------------------------------------- tensor files

Tensor ReadNpy(const void* data, size_t size, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "ReadNpy: data is null");
    return Access::FromImpl(impl::ParseNpy(static_cast<const uint8_t*>(data), size, name));
  } catch (...) {
    Rethrow();
  }
}

Tensor LoadNpy(const std::string& path) {
  try {
    auto bytes = impl::ReadFile(path);
    return Access::FromImpl(impl::ParseNpy(bytes->data(), bytes->size(), path));
  } catch (...) {
    Rethrow();
  }
}

std::vector<uint8_t> WriteNpy(const Tensor& t) {
  try {
    if (t.empty()) throw Error(ErrorCode::kInvalidArgument, "WriteNpy: the tensor is empty");
    return impl::SerializeNpy(Access::ToImpl(t));
  } catch (...) {
    Rethrow();
  }
}

void SaveNpy(const std::string& path, const Tensor& t) {
  const std::vector<uint8_t> bytes = WriteNpy(t);
  try {
    impl::WriteFile(path, bytes.data(), bytes.size());
  } catch (...) {
    Rethrow();
  }
}

Value ReadOnnxValue(const void* data, size_t size, ValueInfo::Kind kind, const std::string& name) {
  try {
    if (!data && size) throw Error(ErrorCode::kInvalidArgument, "ReadOnnxValue: data is null");
    const auto* p = static_cast<const uint8_t*>(data);
    switch (kind) {
      case ValueInfo::Kind::kSequence: return detail::FromImplValue(impl::ValueFromBytes(p, size, false, name));
      case ValueInfo::Kind::kOptional: return detail::FromImplValue(impl::ValueFromBytes(p, size, true, name));
      case ValueInfo::Kind::kMap:
        throw Error(ErrorCode::kUnsupportedOp, name + ": map and sparse values are not supported");
      default: return Value(Access::FromImpl(impl::TensorFromBytes(p, size, name)));
    }
  } catch (...) {
    Rethrow();
  }
}

// -------------------------------------------------------------------- the build

const char* Version() { return ONEMODEL_VERSION; }

std::string BuildDescription() {
  std::string s;
#if defined(__EMSCRIPTEN__)
  s = "wasm32";
#elif defined(__x86_64__)
  s = "x86-64";
#elif defined(__i386__)
  s = "x86 (32-bit, SSE2 arithmetic)";
#elif defined(__aarch64__)
  s = "arm64";
#elif defined(__s390x__)
  s = "s390x (big-endian)";
#elif defined(__riscv) && __riscv_xlen == 64
  s = "riscv64";
#else
  s = "generic";
#endif
#if defined(__clang__)
  s += " clang " __clang_version__;
#elif defined(__GNUC__)
  s += " gcc " __VERSION__;
#endif
  return s;
}

std::vector<TargetInfo> CompiledTargets() {
  std::vector<TargetInfo> r;
  for (impl::Isa i : impl::CompiledIsas()) r.push_back({impl::IsaName(i), impl::CpuSupports(i)});
  return r;
}

std::string BestTarget() { return impl::IsaName(impl::BestIsa()); }
std::string CpuDescription() { return impl::CpuDescription(); }
int CanonicalLanes() { return int(impl::kCanonicalLanes); }
int DefaultThreads() { return impl::ThreadPool::DefaultThreads(); }
void ReleaseCachedBuffers() { impl::TrimRecycledTensorBuffers(); }
size_t CachedBufferBytes() { return impl::RecycledTensorBytes(); }

std::string DescribeKernels(const std::string& isa) {
  try {
    return impl::DescribeDispatch(impl::MakeDispatch(isa.empty() ? impl::BestIsa() : impl::ParseIsa(isa)));
  } catch (...) {
    Rethrow();
  }
}

namespace {
double TimeNsPerElem(float (*fn)(const float*, size_t), const float* x, size_t n, int reps, float* result) {
  double best = 1e300;
  volatile float sink = 0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const size_t inner = n >= (size_t(1) << 20) ? 1 : (size_t(1) << 22) / n;
    float s = 0;
    for (size_t k = 0; k < inner; ++k) s = fn(x, n);
    const auto t1 = std::chrono::steady_clock::now();
    sink = s;
    *result = s;
    const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / double(inner * n);
    if (ns < best) best = ns;
  }
  (void)sink;
  return best;
}
}  // namespace

std::vector<LaneBenchRow> BenchCanonicalSums(const std::string& isa, size_t n, int reps) {
  try {
    if (n < 1 || n > (size_t(1) << 28)) throw Error(ErrorCode::kInvalidArgument, "n must be 1 .. 2^28");
    if (reps < 1 || reps > 1000) throw Error(ErrorCode::kInvalidArgument, "reps must be 1 .. 1000");
    impl::Isa cap = isa.empty() ? impl::BestIsa() : impl::ParseIsa(isa);
    if (cap == impl::Isa::kRef) cap = impl::Isa::kScalar;
    const impl::Dispatch d = impl::MakeDispatch(cap);
    std::vector<float> x(n);
    impl::SplitMix64 rng(20261129);
    for (float& v : x) v = rng.Uniform(-1.0f, 1.0f);
    const impl::LaneBench& b = *d.lane_bench;
    struct {
      int L;
      float (*fn)(const float*, size_t);
      float (*ref)(const float*, size_t);
    } rows[] = {
        {16, b.sum_l16, &impl::ref::SumCanonical<16>},
        {32, b.sum_l32, &impl::ref::SumCanonical<32>},
        {64, b.sum_l64, &impl::ref::SumCanonical<64>},
        {128, b.sum_l128, &impl::ref::SumCanonical<128>},
    };
    std::vector<LaneBenchRow> out;
    for (const auto& r : rows) {
      float got = 0;
      LaneBenchRow row;
      row.target = impl::IsaName(d.isa);
      row.lanes = r.L;
      row.n = n;
      row.ns_per_element = TimeNsPerElem(r.fn, x.data(), n, reps, &got);
      const float want = r.ref(x.data(), n);
      row.equals_reference = std::memcmp(&got, &want, 4) == 0;
      out.push_back(row);
    }
    return out;
  } catch (...) {
    Rethrow();
  }
}

MulAddPeak MeasureMulAddPeak(const std::string& isa, int reps) {
  try {
    if (reps < 1 || reps > 1000) throw Error(ErrorCode::kInvalidArgument, "reps must be 1 .. 1000");
    impl::Isa cap = isa.empty() ? impl::BestIsa() : impl::ParseIsa(isa);
    if (cap == impl::Isa::kRef) cap = impl::Isa::kScalar;
    const impl::Dispatch d = impl::MakeDispatch(cap);
    const impl::LaneBench& b = *d.lane_bench;
    // Calibrate: double the steps until one timing takes 50 ms.
    int64_t iters = 1 << 16;
    while (iters < (int64_t(1) << 40) &&
           double(iters) * b.muladd_chains * b.f32_lanes * 2.0 / impl::MulAddRate(b, iters, 1) < 0.05)
      iters *= 2;
    const double rate = impl::MulAddRate(b, iters, reps);
    MulAddPeak p;
    p.target = impl::IsaName(d.isa);
    p.lanes = b.f32_lanes;
    p.gflops = rate / 1e9;
    return p;
  } catch (...) {
    Rethrow();
  }
}

}  // namespace onemodel
