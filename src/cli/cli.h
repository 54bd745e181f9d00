// The command-line interface shared by the native CLI (native/main.cpp) and the node
// CLI (js/bin/onemodel.mjs, through the wasm build): same commands, same output.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace onemodel::cli {

// Runs `onemodel <args...>` (args excludes the program name). Results go to out,
// progress and errors to err. Returns the process exit code: 0 success, 1 a failed
// check or error, 2 a usage error. Never throws.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The text of a <model>.inputs file: `NAME=PATH` lines (PATH relative to dir unless
// absolute; empty lines and # comments skipped) -> name -> path. A line without a NAME=
// is kInvalidArgument naming `where`.
std::map<std::string, std::string> ParseInputList(const std::string& text, const std::string& dir,
                                                  const std::string& where);

}  // namespace onemodel::cli
