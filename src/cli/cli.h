// The command-line interface shared by the native CLI (native/main.cpp) and the node
// CLI (js/bin/onemodel.mjs, through the wasm build): same commands, same output.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace onemodel::cli {

// Runs `onemodel <args...>` (args excludes the program name). Results go to out,
// progress and errors to err. Returns the process exit code: 0 success, 1 a failed
// check or error, 2 a usage error. Never throws.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace onemodel::cli
