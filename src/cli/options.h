// What the CLI's commands share (cli.cpp and target_commands.cpp).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "onemodel/onemodel.h"

namespace onemodel::cli {

// The global options and the command's own arguments.
struct Options {
  std::string isa;  // as given (or from ONEMODEL_ISA); "" = best
  int threads = 0;
  Mode mode = Mode::kExact;
  std::vector<std::string> rest;
};

// flag's value as a whole number in [lo, hi]; kInvalidArgument naming the flag otherwise.
int64_t ParseInt(const std::string& flag, const std::string& v, int64_t lo, int64_t hi);
// The environment variable's value, "" when unset.
std::string Env(const char* name);

// The commands about targets and what the build holds (target_commands.cpp).
int CmdTargets(const Options& o, std::ostream& out, std::ostream& err);
int CmdBenchLanes(const Options& o, std::ostream& out, std::ostream& err);
int CmdBenchPeak(const Options& o, std::ostream& out);
// The operator families' tables (target_commands.cpp).
int CmdFamilies(const Options& o, std::ostream& out);

}  // namespace onemodel::cli
