// What the CLI's commands share (cli.cpp and target_commands.cpp).
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
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

// The session options of a command: the global options plus the ONEMODEL_* variables.
SessionOptions MakeSessionOptions(const Options& o);
// A session of model under o (ONEMODEL_VERBOSE=1: the kernels chosen, once a process).
Session LoadSession(const Options& o, const std::string& model, std::ostream& err);
// Runs s, printing the run's profile on err when ONEMODEL_PROFILE asked for one.
std::vector<NamedValue> RunSession(const Session& s, const std::vector<NamedValue>& feeds, std::ostream& err);
// "[1,3,224,224]".
std::string ShapeText(const std::vector<int64_t>& s);

// ONNX node-case folders (cases.cpp).
struct CaseCounts {
  int passed = 0, failed = 0, skipped = 0, expected_failures = 0;
};
// Runs every case folder of dir (name order) whose name contains filter; prints one
// `case/<name> <hash>` line per case on out. A failing case named in expected_fail
// counts as an expected failure.
CaseCounts RunCaseFolders(const Options& o, const std::string& dir, const std::string& filter, bool verbose,
                          std::ostream& out, std::ostream& err, const std::set<std::string>& expected_fail = {});
int CmdCases(const Options& o, std::ostream& out, std::ostream& err);
// Greedy decoding of a decoder-only LLM with its KV cache (generate.cpp).
int CmdGenerate(const Options& o, std::ostream& out, std::ostream& err);

// The commands about targets and what the build holds (target_commands.cpp).
int CmdTargets(const Options& o, std::ostream& out, std::ostream& err);
int CmdBenchLanes(const Options& o, std::ostream& out, std::ostream& err);
int CmdBenchPeak(const Options& o, std::ostream& out);
// The operator families' tables (target_commands.cpp).
int CmdFamilies(const Options& o, std::ostream& out);

}  // namespace onemodel::cli
