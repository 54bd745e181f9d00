// The data cache sizes of the CPU the process runs on, read once (sysconf on Linux, whose
// C library reads cpuid's cache leaves; sysctl on macOS). Where the platform does not
// say (wasm engines, Windows), the values are typical of current x86-64 and arm64 cores:
// 32 KiB L1 data, 1 MiB L2. Kernels size their cache blocks from these.
#pragma once

#include <cstdint>

namespace onemodel::impl {

struct CacheInfo {
  int64_t l1d = 32 * 1024;   // bytes of L1 data cache per core
  int64_t l2 = 1024 * 1024;  // bytes of L2 per core
  bool reported = false;     // false: the defaults above
};

const CacheInfo& Caches();

}  // namespace onemodel::impl
