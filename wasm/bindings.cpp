// Embind bindings: the wasm module's JS surface. No logic here; see src/cli/cli.h.
#include <emscripten/bind.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"

namespace {

// Runs the CLI with args; returns {code, stdout, stderr}.
emscripten::val RunCliJs(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = onemodel::RunCli(args, out, err);
  emscripten::val r = emscripten::val::object();
  r.set("code", code);
  r.set("stdout", out.str());
  r.set("stderr", err.str());
  return r;
}

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel) {
  emscripten::register_vector<std::string>("StringVector");
  emscripten::function("runCli", &RunCliJs);
}
