// SHA-256 (FIPS 180-4) in the shape of Brad Conte's public-domain crypto-algorithms:
// a context, init, update, final. Written for OneModel from the standard's text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onemodel::impl {

constexpr size_t kSha256BlockSize = 32;  // digest bytes (Conte's SHA256_BLOCK_SIZE)

struct Sha256Ctx {
  uint8_t data[64];   // the pending message block
  uint32_t datalen;   // bytes pending in data
  uint64_t bitlen;    // message bits already compressed
  uint32_t state[8];  // H0..H7
};

void Sha256Init(Sha256Ctx* ctx);
void Sha256Update(Sha256Ctx* ctx, const uint8_t* data, size_t len);
void Sha256Final(Sha256Ctx* ctx, uint8_t hash[kSha256BlockSize]);

// Convenience wrapper used by the golden hash.
class Sha256 {
 public:
  Sha256() { Sha256Init(&ctx_); }
  void Update(const void* data, size_t len) { Sha256Update(&ctx_, static_cast<const uint8_t*>(data), len); }
  void UpdateI64(int64_t v);  // little-endian int64
  // Returns the lower-case hex digest; the object must not be updated afterwards.
  std::string HexDigest();

 private:
  Sha256Ctx ctx_;
};

// Returns the lower-case hex SHA-256 of bytes.
std::string Sha256Hex(const void* data, size_t len);

}  // namespace onemodel::impl
