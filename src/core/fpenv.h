// The floating-point control state exact mode computes under: round to nearest even,
// no flush-to-zero, no denormals-are-zero (exact-contract section 2). A host program
// may have changed it; FpEnvGuard sets it for a scope and restores the caller's.
#pragma once

#include <cstdint>

namespace onemodel::impl {

class FpEnvGuard {
 public:
  FpEnvGuard();
  ~FpEnvGuard();
  FpEnvGuard(const FpEnvGuard&) = delete;
  FpEnvGuard& operator=(const FpEnvGuard&) = delete;
  // True when the state on entry differed from exact mode's (and was corrected).
  bool corrected() const { return corrected_; }

 private:
  uint64_t saved_ = 0;
  bool corrected_ = false;
};

// Test hook: sets FTZ/DAZ (x86) or FZ (arm64) on this thread, as a careless host might.
// Returns false where the target has no such mode (wasm).
bool SetFlushToZeroForTesting(bool on);

}  // namespace onemodel::impl
