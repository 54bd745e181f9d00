// What the libFuzzer harnesses share (tools/fuzz.sh, docs/reliability.md): the limits a
// fuzzed session runs under, and the rule that every failure must be a typed
// onemodel::Error other than kInternal (anything else is a finding: the harness traps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "onemodel/onemodel.h"

namespace onemodel::fuzz {

// Limits that keep one execution small: a fuzzed model may declare anything.
inline SessionOptions FuzzOptions(const char* isa = "") {
  SessionOptions o;
  o.threads = 1;
  o.isa = isa;
  o.max_model_bytes = 4u << 20;
  o.max_tensor_bytes = 16u << 20;
  o.max_session_bytes = 128u << 20;
  o.max_graph_depth = 8;
  o.max_nodes = 2000;
  return o;
}

inline RunOptions FuzzRunOptions() {
  RunOptions r;
  r.time_limit_ms = 2000;
  return r;
}

// The harnesses' bodies: one input each, 0 when it was handled (tools/fuzz.sh runs them
// under libFuzzer; tests/test_regress.cpp runs tests/regress/<harness>/* through them on
// every test row).
int FuzzModel(const uint8_t* data, size_t size);
int FuzzNpy(const uint8_t* data, size_t size);
int FuzzCli(const uint8_t* data, size_t size);
int FuzzOp(const uint8_t* data, size_t size);
int FuzzOpMore(const uint8_t* data, size_t size);  // the `opmore` harness (fuzz_op.cpp)

// A finding: an error the library must never give (kInternal), or an exception that
// is not an onemodel::Error.
[[noreturn]] inline void Finding(const char* what) {
  std::fprintf(stderr, "FINDING: %s\n", what);
  std::fflush(stderr);
  __builtin_trap();
}

// Runs f; a typed error other than kInternal is an accepted outcome.
template <typename F>
void Typed(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kInternal) Finding(e.what());
  } catch (const std::exception& e) {
    Finding(e.what());
  }
}

}  // namespace onemodel::fuzz
