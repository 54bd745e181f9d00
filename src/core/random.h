// A small seeded generator (SplitMix64) for test data, benchmarks and generated model
// inputs. Same sequence on every target; never seeded from the environment.
#pragma once

#include <cstdint>

namespace onemodel::impl {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t NextU32() { return uint32_t(Next() >> 32); }
  // Returns a float in [lo, hi): 24 random bits scaled (exact, no libm).
  float Uniform(float lo, float hi) {
    const float u = float(NextU32() >> 8) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
  }

 private:
  uint64_t s_;
};

}  // namespace onemodel::impl
