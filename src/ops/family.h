// An operator family is a table of algorithms (docs/exact-mode.md, "Operator families").
// Each row is one way to compute the family's operators: its name, whether it keeps the
// oracle's bits (exact) or not (fast), the device it runs on, the kernels it calls,
// `fits` (whether it computes this node: shapes, attributes, options), `chosen` (whether
// automatic planning takes it when it fits) and `run`. Row 0 is the reference, the
// oracle's algorithm (src/ref). One planner (PlanRow) reads a family's table when a node
// is prepared and keeps the row in the node's plan:
//  - the oracle session (ISA ref) plans row 0 everywhere;
//  - an exact session sees only exact rows, a fast session every row: a fast row cannot
//    be planned by an exact session, forced or not;
//  - SessionOptions::algorithms forces a row by name (it must be visible and fit);
//  - otherwise the first visible row after the reference, in table order, that fits and
//    is chosen; the reference when none is.
// The operator tests, the coverage check, `onemodel info --plan` and the docs read the same
// tables (Families()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_context.h"

namespace onemodel::impl {
namespace ops {

// Whether a row gives the reference's bits on every target (exact) or only within a
// stated tolerance of them (fast: exact sessions never see it).
enum class Exactness : uint8_t { kExact, kFast };
// Where a row runs. Every row runs on the CPU today; a GPU backend adds rows of its own.
enum class Device : uint8_t { kCpu };

const char* ExactnessName(Exactness e);
const char* DeviceName(Device d);

// One algorithm of a family whose validated parameters are P (the plan a node keeps).
// Run is the family's run signature (a function pointer type).
template <class P, class Run>
struct AlgorithmRow {
  const char* name;
  Exactness exactness;
  // The KernelTable entries the row calls, ", "-separated ("" for none: the reference's
  // own loops in src/ref). tests/ops/coverage_test.cpp checks each names a kernel.
  const char* kernels;
  bool (*fits)(const P&);    // whether the row computes this node; null: every node
  bool (*chosen)(const P&);  // whether automatic planning takes it when it fits; null: yes
  Run run;
  Device device = Device::kCpu;
};

// A family's table: its name (the tests/ops/<family>_test.cpp family that checks it), the
// operator types that plan with it (Node::QualifiedType: "LayerNormalization",
// "com.microsoft.SkipLayerNormalization"), and its rows (the reference first).
template <class P, class Run>
struct FamilyTable {
  const char* family;
  std::span<const char* const> op_types;
  std::span<const AlgorithmRow<P, Run>> rows;
};

// What the planner sees of a session and what it records: the session's rules above.
struct PlanRules {
  bool oracle = false;      // ISA ref: the reference row only
  bool fast = false;        // a fast-mode session: fast rows are visible too
  std::string_view forced;  // the row forced by name ("" none)
};
PlanRules RulesOf(const OpContext& ctx);

// Records the planned row in the node's state slot (for `info --plan`, verbose output).
void RecordPlan(const OpContext& ctx, const char* family, const char* row, Exactness e);

namespace detail {
[[noreturn]] void ThrowPlanError(const OpContext& ctx, const std::string& msg);
// kInternal: the node's operator type plans with a table that does not list it (the
// tests, the coverage check and `families` would not see it).
[[noreturn]] void ThrowUnlisted(const OpContext& ctx, const char* family);
}  // namespace detail

// The index of the row a node plans (the rules at the top). `usable(i)`, when given, takes
// rows out of automatic planning (a family's own run-time condition, e.g. Conv's GEMM rows
// when it plans the fall-back for weights that are not finite); forced rows ignore it.
template <class P, class Run, class Usable>
size_t PlanIndex(const OpContext& ctx, const FamilyTable<P, Run>& t, const P& p, Usable usable, bool record = true) {
  const PlanRules r = RulesOf(ctx);
  bool listed = false;
  for (const char* op : t.op_types) listed = listed || ctx.node.HasQualifiedType(op);
  if (!listed) detail::ThrowUnlisted(ctx, t.family);
  auto visible = [&](const AlgorithmRow<P, Run>& row) {
    return row.device == Device::kCpu && (row.exactness == Exactness::kExact || r.fast);
  };
  auto fits = [&](const AlgorithmRow<P, Run>& row) { return !row.fits || row.fits(p); };
  size_t pick = 0;
  if (!r.forced.empty()) {
    size_t i = 0;
    while (i < t.rows.size() && r.forced != t.rows[i].name) ++i;
    if (i == t.rows.size()) {
      std::string known;
      for (const auto& row : t.rows) known += std::string(known.empty() ? "" : ", ") + row.name;
      detail::ThrowPlanError(ctx,
                             "unknown algorithm '" + std::string(r.forced) + "' (this operator has: " + known + ")");
    }
    if (!visible(t.rows[i]))
      detail::ThrowPlanError(ctx, "algorithm '" + std::string(r.forced) + "' is " + ExactnessName(t.rows[i].exactness) +
                                      " and this session is exact");
    if (!fits(t.rows[i]))
      detail::ThrowPlanError(ctx, "algorithm '" + std::string(r.forced) + "' does not fit this node");
    pick = i;
  } else if (!r.oracle) {
    for (size_t i = 1; i < t.rows.size(); ++i) {
      const auto& row = t.rows[i];
      if (visible(row) && usable(i) && fits(row) && (!row.chosen || row.chosen(p))) {
        pick = i;
        break;
      }
    }
  }
  if (record) RecordPlan(ctx, t.family, t.rows[pick].name, t.rows[pick].exactness);
  return pick;
}
template <class P, class Run>
size_t PlanIndex(const OpContext& ctx, const FamilyTable<P, Run>& t, const P& p) {
  return PlanIndex(ctx, t, p, [](size_t) { return true; });
}
// The planned row itself.
template <class P, class Run>
const AlgorithmRow<P, Run>& PlanRow(const OpContext& ctx, const FamilyTable<P, Run>& t, const P& p) {
  return t.rows[PlanIndex(ctx, t, p)];
}

// What the tests, the coverage check, `info` and the docs read of every family.
struct RowInfo {
  std::string name;
  Exactness exactness;
  Device device;
  std::string kernels;
};
struct FamilyInfo {
  std::string family;
  std::vector<std::string> op_types;
  std::vector<RowInfo> rows;
};
template <class P, class Run>
FamilyInfo Describe(const FamilyTable<P, Run>& t) {
  FamilyInfo f{t.family, {}, {}};
  for (const char* op : t.op_types) f.op_types.push_back(op);
  for (const auto& row : t.rows) f.rows.push_back({row.name, row.exactness, row.device, row.kernels});
  return f;
}
// Every family of the operator layer (ops/families.cpp lists them).
const std::vector<FamilyInfo>& Families();
// The family an operator type plans with, or null.
const FamilyInfo* FamilyOf(std::string_view op_type);

}  // namespace ops
}  // namespace onemodel::impl
