// Fuzz harness: bytes -> ReadNpy (the .npy reader, versions 1-3); a tensor read is
// written back and read again, which must give the same tensor.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tests/fuzz/fuzz_common.h"

using namespace onemodel;

int onemodel::fuzz::FuzzNpy(const uint8_t* data, size_t size) {
  fuzz::Typed([&] {
    Tensor t = ReadNpy(data, size, "fuzz.npy");
    const std::vector<uint8_t> again = WriteNpy(t);
    Tensor u = ReadNpy(again.data(), again.size(), "again.npy");
    if (u.type() != t.type() || u.shape() != t.shape() || u.byte_size() != t.byte_size() ||
        (t.byte_size() && std::memcmp(u.data(), t.data(), t.byte_size()) != 0)) {
      fuzz::Finding("a .npy written by WriteNpy does not read back as the same tensor");
    }
  });
  return 0;
}

#ifndef ONEMODEL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return onemodel::fuzz::FuzzNpy(data, size); }
#endif
