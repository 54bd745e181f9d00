// Fuzz harness: the CLI's argument parser and its .inputs parser. The first byte picks
// which; for arguments the rest is split at '\n' into argv (commands limited to run,
// hash, info, version, help, targets; no argument may hold a '/' or be --save, so a
// fuzzed command line reads only the small model and .npy file the harness writes into
// an empty working folder, and writes nothing; no --threads, whose 1024 workers only
// slow the search). Commands run on one thread (the harness puts --threads 1 first, as
// the other harnesses' sessions run): a worker thread's coverage depends on timing, which made the
// fixed-seed smoke search differ between a busy machine and an idle one.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "tests/fuzz/fuzz_model_builder.h"
#include "tests/fuzz/fuzz_common.h"

using namespace onemodel;

namespace {
// True when `a` holds a decimal number (leading zeros aside) from 1000 to 18 digits long.
bool HasCostlyNumber(const std::string& a) {
  for (size_t i = 0; i < a.size();) {
    if (a[i] < '0' || a[i] > '9') {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < a.size() && a[j] == '0') ++j;
    const size_t first = j;
    while (j < a.size() && a[j] >= '0' && a[j] <= '9') ++j;
    const size_t digits = j - first;
    if (digits >= 4 && digits <= 18) return true;
    i = j;
  }
  return false;
}

// The working folder of the fuzzed command lines (made once; the caller's working folder
// is restored after each command).
const std::string& Folder() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/onemodel-fuzz-cli-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    return std::string(tmpl);
  }();
  return dir;
}

bool Prepared() {
  static const bool done = [] {
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd) || chdir(Folder().c_str()) != 0) std::abort();
    // m.onnx: Y = Relu(X), X float[2, N]; x.npy: float32 [2, 3]; m.inputs naming it.
    const std::string model = fuzz::OneNodeModel("Relu", {{"X", 1, {2, -1}}}, {"Y"}).SerializeAsString();
    std::FILE* f = std::fopen("m.onnx", "wb");
    std::fwrite(model.data(), 1, model.size(), f);
    std::fclose(f);
    const Tensor x = Tensor::FromVector<float>({1, -2, 3, -4, 5, -6}, {2, 3});
    SaveNpy("x.npy", x);
    f = std::fopen("m.inputs", "wb");
    std::fputs("X=x.npy\n", f);
    std::fclose(f);
    if (chdir(cwd) != 0) std::abort();
    return true;
  }();
  return done;
}
}  // namespace

int onemodel::fuzz::FuzzCli(const uint8_t* data, size_t size) {
  Prepared();
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) {
    fuzz::Typed([&] { cli::ParseInputList(text, "dir", "fuzz.inputs"); });
    return 0;
  }
  std::vector<std::string> args = {"--threads", "1"};
  std::stringstream ss(text);
  for (std::string a; std::getline(ss, a, '\n');) {
    if (a.find('/') != std::string::npos || a.find("--save") != std::string::npos ||
        a.find("--threads") != std::string::npos || HasCostlyNumber(a))
      return 0;
    args.push_back(a);
  }
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.empty() || a[0] == '-') continue;
    static const char* kAllowed[] = {"run", "hash", "info", "version", "help", "targets"};
    bool ok = false;
    for (const char* c : kAllowed) ok |= a == c;
    if (!ok) return 0;  // the first word that is not an option is the command
    break;
  }
  std::ostringstream out, err;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd) || chdir(Folder().c_str()) != 0) std::abort();
  const int rc = cli::RunCli(args, out, err);
  if (chdir(cwd) != 0) std::abort();
  if (rc < 0 || rc > 2) fuzz::Finding("RunCli returned an exit code outside 0..2");
  const std::string e = err.str();
  if (e.rfind("onemodel: internal error:", 0) == 0 || e.rfind("onemodel: error: internal: ", 0) == 0)
    fuzz::Finding(e.c_str());
  return 0;
}

#ifndef ONEMODEL_FUZZ_NO_MAIN
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return onemodel::fuzz::FuzzCli(data, size); }
#endif
