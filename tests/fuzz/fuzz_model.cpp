// Fuzz harness: model bytes -> InspectModelBytes (load and static inference) ->
// Session::FromBytes under the fuzz limits -> one run with generated inputs (at most
// 2^20 elements each) under a time limit. Any crash, sanitizer report, leak, untyped or
// internal error is a finding.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_common.h"

using namespace onemodel;

int onemodel::fuzz::FuzzModel(const uint8_t* data, size_t size) {
  fuzz::Typed([&] { InspectModelBytes(data, size, "fuzz.onnx"); });
  fuzz::Typed([&] {
    Session s = Session::FromBytes(data, size, fuzz::FuzzOptions(), "fuzz.onnx");
    std::vector<NamedValue> feeds;
    for (const ValueInfo& in : s.inputs()) {
      if (in.kind != ValueInfo::Kind::kTensor) continue;
      int64_t n = 1;
      for (int64_t d : in.shape) {
        if (d > 0 && n <= (int64_t(1) << 20) / d)
          n *= d;
        else if (d > 0)
          n = int64_t(1) << 21;
      }
      if (n > (int64_t(1) << 20)) return;  // too big to feed under the fuzz limits
      feeds.push_back({in.name, MakeGoldenInput(in)});
    }
    s.Run(feeds, {}, fuzz::FuzzRunOptions());
  });
  return 0;
}

#ifndef ONEMODEL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return onemodel::fuzz::FuzzModel(data, size);
}
#endif
