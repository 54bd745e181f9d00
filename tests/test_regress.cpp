// The regression corpus: every input the fuzzers ever turned into a finding
// (tests/regress/<harness>/, docs/reliability.md), run through its harness's body on
// every test row (native ISAs, sanitizers, arm64 under qemu, wasm under node). A
// regression crashes the run or fails here; a clean pass means each input gave a value
// or a typed error, and, for the operator harness, the oracle's bits on the best target.
#include "tests/catch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_common.h"

namespace {

std::vector<uint8_t> Slurp(const std::string& path) {
  std::vector<uint8_t> b;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return b;
  uint8_t buf[65536];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) b.insert(b.end(), buf, buf + n);
  std::fclose(f);
  return b;
}

std::string RegressDir() {
  if (const char* d = std::getenv("ONEMODEL_REGRESS_DIR")) return d;
  return "tests/regress";
}

}  // namespace

TEST_CASE("regress: every input of tests/regress runs through its harness", "[regress]") {
  namespace fs = std::filesystem;
  const std::string root = RegressDir();
  REQUIRE(fs::is_directory(root));  // run from the repository's root, or set ONEMODEL_REGRESS_DIR
  struct Harness {
    const char* dir;
    int (*fn)(const uint8_t*, size_t);
  };
  const Harness harnesses[] = {{"model", onemodel::fuzz::FuzzModel},
                               {"npy", onemodel::fuzz::FuzzNpy},
                               {"cli", onemodel::fuzz::FuzzCli},
                               {"op", onemodel::fuzz::FuzzOp},
                               {"opmore", onemodel::fuzz::FuzzOpMore}};
  size_t total = 0;
  for (const Harness& h : harnesses) {
    const fs::path dir = fs::path(root) / h.dir;
    if (!fs::is_directory(dir)) continue;
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) {
      INFO("regression input " << f);
      const std::vector<uint8_t> bytes = Slurp(f);
      CHECK(h.fn(bytes.data(), bytes.size()) == 0);
      ++total;
    }
  }
  CHECK(total > 0);
}
