// The planner's rules and records (ops/family.h).
#include "ops/family.h"

#include <mutex>

namespace onemodel::impl {
namespace ops {

const char* ExactnessName(Exactness e) { return e == Exactness::kFast ? "fast" : "exact"; }
const char* DeviceName(Device) { return "cpu"; }

PlanRules RulesOf(const OpContext& ctx) {
  PlanRules r;
  r.oracle = !ctx.VectorKernels();
  r.fast = ctx.fast;
  r.forced = ctx.ForcedAlgorithm();
  return r;
}

void RecordPlan(const OpContext& ctx, const char* family, const char* row, Exactness e) {
  if (!ctx.state) return;
  std::lock_guard<std::mutex> lock(ctx.state->mu);
  ctx.state->family = family;
  ctx.state->row = row;
  ctx.state->fast_row = e == Exactness::kFast;
}

namespace detail {
void ThrowPlanError(const OpContext& ctx, const std::string& msg) { throw ctx.Fail(ErrorCode::kInvalidArgument, msg); }
void ThrowUnlisted(const OpContext& ctx, const char* family) {
  throw ctx.Fail(ErrorCode::kInternal, std::string("plans with the ") + family +
                                           " table, which does not list this operator type: please report it");
}
}  // namespace detail

const FamilyInfo* FamilyOf(std::string_view op_type) {
  for (const FamilyInfo& f : Families())
    for (const std::string& op : f.op_types)
      if (op == op_type) return &f;
  return nullptr;
}

}  // namespace ops
}  // namespace onemodel::impl
