// Declarations of every reference kernel (from ops.inc).
#pragma once

#include "ops/op_context.h"

namespace onemodel::impl {
namespace ops {
#define ONEMODEL_OP(domain, op, fn) void fn(OpContext& ctx);
#include "ops/ops.inc"
#undef ONEMODEL_OP
void ModFloat(OpContext& ctx);  // Mod for floating-point types (fmod=1), from Mod
}  // namespace ops
}  // namespace onemodel::impl
