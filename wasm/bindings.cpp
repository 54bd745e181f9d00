// Embind bindings: the wasm module's JS surface. No logic here; see src/cli/cli.h.
#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli.h"

namespace {

// stderr that reaches the host as it is written (each flush), so long commands show
// progress: node's process.stderr, or the page's console. It also keeps all of it.
class LiveErr : public std::stringbuf {
 protected:
  int sync() override {
    const std::string s = str();
    if (s.size() > shown_) {
      const std::string part = s.substr(shown_);
      shown_ = s.size();
      EM_ASM({
        const t = UTF8ToString($0);
        if (typeof process !== 'undefined' && process.stderr) process.stderr.write(t);
        else console.log(t);
      }, part.c_str());
    }
    return 0;
  }

 private:
  size_t shown_ = 0;
};

// Runs the CLI with args; returns {code, stdout, stderr}. stderr has also been written
// to the host as the command ran.
emscripten::val RunCliJs(const std::vector<std::string>& args) {
  std::ostringstream out;
  LiveErr errbuf;
  std::ostream err(&errbuf);
  const int code = onemodel::cli::RunCli(args, out, err);
  err.flush();
  emscripten::val r = emscripten::val::object();
  r.set("code", code);
  r.set("stdout", out.str());
  r.set("stderr", errbuf.str());
  return r;
}

}  // namespace

EMSCRIPTEN_BINDINGS(onemodel) {
  emscripten::register_vector<std::string>("StringVector");
  emscripten::function("runCli", &RunCliJs);
}
