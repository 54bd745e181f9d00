// The operator tests cover every algorithm: each operator type whose plans choose among
// algorithms (ops::AlgorithmTable) belongs to a registered family, whose test fails
// unless each of its algorithms ran on one of the family's cases (op_test.cpp).
#include "tests/catch.h"

#include <set>
#include <string>

#include "ops/algorithm.h"
#include "tests/ops/op_test.h"

namespace onemodel::impl {
namespace test {

TEST_CASE("ops: every operator type with algorithms has a family of oracle tests", "[ops]") {
  std::set<std::string> claimed;
  for (const OpFamily& f : Families()) claimed.insert(f.op_types.begin(), f.op_types.end());
  for (const auto& e : ops::AlgorithmTable()) {
    INFO(e.op_type << " has algorithms but no family in tests/ops claims it");
    CHECK(claimed.count(e.op_type) == 1);
    CHECK(!e.algorithms.empty());
    CHECK(e.algorithms[0] == "reference");
  }
}

}  // namespace test
}  // namespace onemodel::impl
