// How an operator's plan names and chooses its algorithm. Every family with more than one
// way to compute its bits has an enum of algorithms whose first member is kReference, the
// oracle's (every plan of an ISA ref session is its reference), a name for each (what
// SessionOptions::algorithms forces and the tests and benchmarks print), and the table
// below, which the operator tests check they cover (tests/ops/coverage_test.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_context.h"

namespace onemodel::impl {
namespace ops {

// The algorithm a plan runs: the one the session forces for this operator type (one of
// `all`, by name, and it must fit), else `automatic` in a vector session, else all[0]
// (the reference). A forced name that is unknown or does not fit is kInvalidArgument
// naming the node.
template <class Algo, size_t N, class Name, class Fits>
Algo ChooseAlgorithm(const OpContext& ctx, const Algo (&all)[N], Name name, Algo automatic, Fits fits) {
  const std::string_view forced = ctx.ForcedAlgorithm();
  if (forced.empty()) return ctx.VectorKernels() ? automatic : all[0];
  for (Algo a : all) {
    if (forced != name(a)) continue;
    if (!fits(a))
      throw ctx.Fail(ErrorCode::kInvalidArgument, "algorithm '" + std::string(forced) + "' does not fit this node");
    return a;
  }
  std::string known;
  for (Algo a : all) known += std::string(known.empty() ? "" : ", ") + name(a);
  throw ctx.Fail(ErrorCode::kInvalidArgument,
                 "unknown algorithm '" + std::string(forced) + "' (this operator has: " + known + ")");
}

// For a site that can run one alternative to the reference (all[0]) when `fits`: whether
// the plan runs it (ChooseAlgorithm with that alternative as the automatic choice).
template <class Algo, size_t N, class Name>
bool UseAlgorithm(const OpContext& ctx, const Algo (&all)[N], Name name, Algo alternative, bool fits) {
  return ChooseAlgorithm(ctx, all, name, fits ? alternative : all[0],
                         [&](Algo a) { return a == all[0] || (a == alternative && fits); }) == alternative;
}

// The names of an enum's algorithms, in order.
template <class Algo, size_t N, class Name>
std::vector<std::string> AlgorithmNames(const Algo (&all)[N], Name name) {
  std::vector<std::string> v;
  for (Algo a : all) v.push_back(name(a));
  return v;
}

// Every operator type whose plans choose among algorithms, with their names (the
// reference first). Defined in ops/algorithm.cpp from the families' enums.
struct OperatorAlgorithms {
  std::string op_type;
  std::vector<std::string> algorithms;
};
const std::vector<OperatorAlgorithms>& AlgorithmTable();

}  // namespace ops
}  // namespace onemodel::impl
