// See cache_info.h.
#include "core/cache_info.h"

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <unistd.h>
#elif defined(__APPLE__)
#include <sys/sysctl.h>
#include <sys/types.h>
#endif

namespace onemodel::impl {
namespace {

CacheInfo DetectCaches() {
  CacheInfo c;
  int64_t l1 = 0, l2 = 0;
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(_SC_LEVEL1_DCACHE_SIZE)
  l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#elif defined(__APPLE__)
  int64_t v = 0;
  size_t len = sizeof v;
  if (sysctlbyname("hw.l1dcachesize", &v, &len, nullptr, 0) == 0) l1 = v;
  len = sizeof v;
  if (sysctlbyname("hw.l2cachesize", &v, &len, nullptr, 0) == 0) l2 = v;
#endif
  // Values outside what any current core has are ignored (a VM may report 0 or nonsense).
  if (l1 >= 8 * 1024 && l1 <= 1024 * 1024 && l2 >= 64 * 1024 && l2 <= 256 * 1024 * 1024) {
    c.l1d = l1;
    c.l2 = l2;
    c.reported = true;
  }
  return c;
}

}  // namespace

const CacheInfo& Caches() {
  static const CacheInfo c = DetectCaches();
  return c;
}

}  // namespace onemodel::impl
