// Limits and run control (see limits.h).
#include "core/limits.h"

#include <cstdio>

#include "core/error.h"
#include "core/index.h"
#include "core/per_thread.h"

namespace onemodel::impl {
namespace {
thread_local const Limits* tl_limits = nullptr;
std::shared_ptr<MemoryBudget>& TlBudget() { return ONEMODEL_PER_THREAD(std::shared_ptr<MemoryBudget>); }
thread_local uint64_t tl_model_bytes = 0;
thread_local bool tl_model_active = false;
}  // namespace

void CheckModelBytes(uint64_t bytes, const Limits& limits, const std::string& origin) {
  if (limits.max_model_bytes > 0 && bytes > limits.max_model_bytes) {
    throw Error(ErrorCode::kLimitExceeded, origin + ": the model is " + std::to_string(bytes) +
                                               " bytes, over max_model_bytes (" +
                                               std::to_string(limits.max_model_bytes) + ")");
  }
}

ModelBytesScope::ModelBytesScope(uint64_t model_bytes) : prev_(tl_model_bytes), prev_active_(tl_model_active) {
  tl_model_bytes = model_bytes;
  tl_model_active = true;
}
ModelBytesScope::~ModelBytesScope() {
  tl_model_bytes = prev_;
  tl_model_active = prev_active_;
}

void AddModelBytes(uint64_t bytes, const std::string& what) {
  const Limits* l = tl_limits;
  if (l && l->max_tensor_bytes > 0 && bytes > l->max_tensor_bytes) {
    throw Error(ErrorCode::kLimitExceeded, what + ": external data of " + std::to_string(bytes) +
                                               " bytes is over max_tensor_bytes (" +
                                               std::to_string(l->max_tensor_bytes) + ")");
  }
  if (!tl_model_active) return;
  tl_model_bytes += bytes;
  if (l && l->max_model_bytes > 0 && tl_model_bytes > l->max_model_bytes) {
    throw Error(ErrorCode::kLimitExceeded, what + ": the model with its external data reaches " +
                                               std::to_string(tl_model_bytes) + " bytes, over max_model_bytes (" +
                                               std::to_string(l->max_model_bytes) + ")" +
                                               (sizeof(void*) <= 4 ? ": a wasm32 memory holds at most 4 GiB" : ""));
  }
}

LimitScope::LimitScope(const Limits* limits, std::shared_ptr<MemoryBudget> budget)
    : prev_limits_(tl_limits), prev_budget_(std::move(TlBudget())) {
  tl_limits = limits;
  TlBudget() = std::move(budget);
}

LimitScope::~LimitScope() {
  tl_limits = prev_limits_;
  TlBudget() = std::move(prev_budget_);
}

const Limits* ThreadLimits() { return tl_limits; }
const std::shared_ptr<MemoryBudget>& ThreadBudget() { return TlBudget(); }

namespace {
thread_local const RunControl* tl_run_control = nullptr;
thread_local uint32_t tl_poll_count = 0;
}  // namespace
const RunControl* ThreadRunControl() { return tl_run_control; }
uint32_t& ThreadPollCount() { return tl_poll_count; }

void ThrowProductOverflow() { throw Error(ErrorCode::kOutOfRange, "a product of sizes overflows 64 bits"); }

RunControl BoundedRunControl(const RunControl* outer, double ms) {
  RunControl c;
  if (outer) c = *outer;
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::milli>(ms));
  if (!c.has_deadline || deadline < c.deadline) {
    c.has_deadline = true;
    c.deadline = deadline;
    c.time_limit_ms = ms;
  }
  return c;
}

RunControlScope::RunControlScope(const RunControl* c) : prev_(tl_run_control) {
  tl_run_control = c && c->active() ? c : nullptr;
}
RunControlScope::~RunControlScope() { tl_run_control = prev_; }

void RunControl::Throw(int reason, const std::string& where) const {
  if (reason == 1) throw Error(ErrorCode::kCancelled, "the run was terminated (at " + where + ")");
  char ms[32];
  std::snprintf(ms, sizeof ms, "%g", time_limit_ms);
  throw Error(ErrorCode::kCancelled,
              std::string("the run exceeded its time limit of ") + ms + " ms (at " + where + ")");
}

}  // namespace onemodel::impl
