// Declarations of every reference kernel (from ops.inc).
#pragma once

#include "ref/op_context.h"

namespace onemodel::impl {
namespace ref {
#define ONEMODEL_OP(domain, op, fn) void fn(OpContext& ctx);
#include "ref/ops.inc"
#undef ONEMODEL_OP
void ModFloat(OpContext& ctx);  // Mod for floating-point types (fmod=1), from Mod
}  // namespace ref
}  // namespace onemodel::impl
