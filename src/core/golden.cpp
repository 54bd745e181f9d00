// Golden hash serialisation (exact-contract section 8; decisions in docs/exact-mode.md).
#include "core/golden.h"

#include <cstring>

#include "core/error.h"
#include "core/minifloat.h"

namespace onemodel::impl {
namespace {

constexpr size_t kChunk = 4096;

// Buffers little-endian bytes and feeds them to the hash in chunks.
class Writer {
 public:
  explicit Writer(Sha256& h) : h_(h) {}
  ~Writer() { Flush(); }
  void Byte(uint8_t b) {
    if (n_ == kChunk) Flush();
    buf_[n_++] = b;
  }
  void LE(uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) Byte(uint8_t(v >> (8 * k)));
  }
  void Bytes(const void* p, size_t len) {
    Flush();
    h_.Update(p, len);
  }
  void Flush() {
    if (n_) h_.Update(buf_, n_);
    n_ = 0;
  }

 private:
  Sha256& h_;
  uint8_t buf_[kChunk];
  size_t n_ = 0;
};

template <typename U>
U Load(const void* p, int64_t i) {
  U u;
  std::memcpy(&u, static_cast<const uint8_t*>(p) + i * sizeof(U), sizeof(U));
  return u;
}

uint32_t CanonF32(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC00000u : u; }
uint64_t CanonF64(uint64_t u) {
  return (u & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull ? 0x7FF8000000000000ull : u;
}

// Elements [0, n) of width U, canon(u) the canonical code for u: the first index whose
// code changes (n when none), and from there the rewrite into `out`.
template <typename U, typename F>
int64_t FirstToCanon(const void* p, int64_t n, F canon) {
  for (int64_t i = 0; i < n; ++i) {
    const U u = Load<U>(p, i);
    if (canon(u) != u) return i;
  }
  return n;
}
template <typename U, typename F>
void Canonicalize(void* p, int64_t from, int64_t n, F canon) {
  for (int64_t i = from; i < n; ++i) {
    const U u = canon(Load<U>(p, i));
    std::memcpy(static_cast<uint8_t*>(p) + i * sizeof(U), &u, sizeof(U));
  }
}

// A sole-owned buffer for t (a copy when it is shared or borrowed).
void* Writable(Tensor& t) {
  if (!t.SoleOwner()) {
    Tensor c = Tensor::Uninitialized(t.dtype(), t.shape(), "output");
    std::memcpy(c.mutable_data<uint8_t>(), t.raw(), t.nbytes());
    t = std::move(c);
  }
  return t.mutable_data<uint8_t>();
}

template <typename U, typename F>
bool CanonicalizeAs(Tensor& t, int64_t n, F canon) {
  const int64_t first = FirstToCanon<U>(t.raw(), n, canon);
  if (first == n) return false;
  Canonicalize<U>(Writable(t), first, n, canon);
  return true;
}

}  // namespace

bool CanonicalizeNaNs(Tensor& t) {
  const int64_t n = t.numel();
  const MiniFormat* mini = MiniFormatOf(t.dtype());
  switch (t.dtype()) {
    case DType::kFloat: return CanonicalizeAs<uint32_t>(t, n, CanonF32);
    case DType::kComplex64: return CanonicalizeAs<uint32_t>(t, 2 * n, CanonF32);
    case DType::kDouble: return CanonicalizeAs<uint64_t>(t, n, CanonF64);
    case DType::kComplex128: return CanonicalizeAs<uint64_t>(t, 2 * n, CanonF64);
    case DType::kFloat16:
    case DType::kBFloat16:
      return CanonicalizeAs<uint16_t>(
          t, n, [&](uint16_t c) { return uint16_t(MiniIsNaN(c, *mini) ? MiniCanonicalNaN(*mini) : c); });
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
      return CanonicalizeAs<uint8_t>(
          t, n, [&](uint8_t c) { return uint8_t(MiniIsNaN(c, *mini) ? MiniCanonicalNaN(*mini) : c); });
    default: return false;
  }
}

void GoldenSerialize(const Tensor& t, Sha256& hash) {
  Writer w(hash);
  w.LE(uint64_t(int64_t(t.dtype())), 8);
  w.LE(uint64_t(t.rank()), 8);
  for (int64_t d : t.shape()) w.LE(uint64_t(d), 8);
  const int64_t n = t.numel();
  const void* p = t.raw();
  const MiniFormat* mini = MiniFormatOf(t.dtype());
  switch (t.dtype()) {
    case DType::kFloat:
      for (int64_t i = 0; i < n; ++i) w.LE(CanonF32(Load<uint32_t>(p, i)), 4);
      break;
    case DType::kComplex64:
      for (int64_t i = 0; i < 2 * n; ++i) w.LE(CanonF32(Load<uint32_t>(p, i)), 4);
      break;
    case DType::kDouble:
      for (int64_t i = 0; i < n; ++i) w.LE(CanonF64(Load<uint64_t>(p, i)), 8);
      break;
    case DType::kComplex128:
      for (int64_t i = 0; i < 2 * n; ++i) w.LE(CanonF64(Load<uint64_t>(p, i)), 8);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t c = Load<uint16_t>(p, i);
        w.LE(MiniIsNaN(c, *mini) ? MiniCanonicalNaN(*mini) : c, 2);
      }
      break;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
      for (int64_t i = 0; i < n; ++i) {
        const uint8_t c = Load<uint8_t>(p, i);
        w.Byte(uint8_t(MiniIsNaN(c, *mini) ? MiniCanonicalNaN(*mini) : c));
      }
      break;
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) w.Byte(Load<uint8_t>(p, i) ? 1 : 0);
      break;
    case DType::kString:
      for (const std::string& s : t.strings()) {
        w.LE(uint64_t(s.size()), 8);
        w.Bytes(s.data(), s.size());
      }
      break;
    case DType::kUInt4:
    case DType::kInt4:
    case DType::kFloat4E2M1:
    case DType::kUInt2:
    case DType::kInt2: {
      // ONNX's packed wire layout: element i in the low bits first, zero padding.
      const int bits = DTypeBits(t.dtype()), per = 8 / bits;
      const uint8_t mask = uint8_t((1u << bits) - 1);
      for (int64_t i = 0; i < n; i += per) {
        uint8_t b = 0;
        for (int k = 0; k < per && i + k < n; ++k) b |= uint8_t((Load<uint8_t>(p, i + k) & mask) << (k * bits));
        w.Byte(b);
      }
      break;
    }
    case DType::kUInt8:
    case DType::kInt8:
    case DType::kFloat8E8M0: w.Bytes(p, size_t(n)); break;
    case DType::kUInt16:
    case DType::kInt16:
      for (int64_t i = 0; i < n; ++i) w.LE(Load<uint16_t>(p, i), 2);
      break;
    case DType::kInt32:
    case DType::kUInt32:
      for (int64_t i = 0; i < n; ++i) w.LE(Load<uint32_t>(p, i), 4);
      break;
    case DType::kInt64:
    case DType::kUInt64:
      for (int64_t i = 0; i < n; ++i) w.LE(Load<uint64_t>(p, i), 8);
      break;
    case DType::kUndefined: throw Error(ErrorCode::kInternal, "golden hash of an undefined tensor");
  }
}

void GoldenSerializeSequence(const std::vector<Tensor>& seq, Sha256& hash) {
  hash.UpdateI64(-2);
  hash.UpdateI64(int64_t(seq.size()));
  for (const Tensor& t : seq) GoldenSerialize(t, hash);
}

void GoldenSerializeEmptyOptional(Sha256& hash) { hash.UpdateI64(-3); }

std::string GoldenHash(const std::vector<Tensor>& outputs) {
  Sha256 h;
  for (const Tensor& t : outputs) GoldenSerialize(t, h);
  return h.HexDigest();
}

std::string GoldenSkipMarker() {
  static const char kText[] = "onemodel:skipped";
  return Sha256Hex(kText, sizeof(kText) - 1);
}

}  // namespace onemodel::impl
