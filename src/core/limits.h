// Resource limits and run control (docs/reliability.md): what a session may load and
// allocate, and the flag and deadline that stop a run. Going over a limit is a
// kLimitExceeded error naming it, raised before the allocation; a stopped run is
// kCancelled. The checks reach the allocation sites through thread-local scopes set by
// the session while it loads and runs (core/tensor.cpp reads them).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace onemodel::impl {

struct Limits {
  // The model's bytes plus its external data (0: none). Default 16 GiB (wasm: 4 GiB).
  uint64_t max_model_bytes = sizeof(size_t) <= 4 ? (uint64_t(4) << 30) : (uint64_t(16) << 30);
  // One tensor's bytes (0: only the build's own cap, MaxTensorBytes()). Default 16 GiB
  // (wasm: 4 GiB).
  uint64_t max_tensor_bytes = sizeof(size_t) <= 4 ? (uint64_t(4) << 30) - 1 : (uint64_t(16) << 30);
  // The session's weights plus the tensors its runs hold at once (0: no limit, the default).
  uint64_t max_session_bytes = 0;
  int max_graph_depth = 32;       // nested If / Loop / Scan bodies (0: no limit)
  int64_t max_nodes = 4'000'000;  // nodes of every graph and function together (0: no limit)
};

// A session's live tensor bytes against max_session_bytes; shared by its concurrent
// runs and by the tensors they return (which may outlive the session).
struct MemoryBudget {
  uint64_t limit = 0;
  std::atomic<uint64_t> live{0};
};

// While alive, the calling thread's tensor allocations are checked against `limits`
// (max_tensor_bytes) and counted in `budget` (may be null). Scopes nest.
class LimitScope {
 public:
  LimitScope(const Limits* limits, std::shared_ptr<MemoryBudget> budget);
  ~LimitScope();
  LimitScope(const LimitScope&) = delete;
  LimitScope& operator=(const LimitScope&) = delete;

 private:
  const Limits* prev_limits_;
  std::shared_ptr<MemoryBudget> prev_budget_;
};
const Limits* ThreadLimits();

// Model bytes against max_model_bytes: CheckModelBytes for the model itself (before it
// is read); while a ModelBytesScope lives, AddModelBytes counts each external-data read
// on top of the model's size (before the read), against the thread's limits.
void CheckModelBytes(uint64_t bytes, const Limits& limits, const std::string& origin);
class ModelBytesScope {
 public:
  explicit ModelBytesScope(uint64_t model_bytes);
  ~ModelBytesScope();

 private:
  uint64_t prev_;
  bool prev_active_;
};
void AddModelBytes(uint64_t bytes, const std::string& what);
const std::shared_ptr<MemoryBudget>& ThreadBudget();

// What stops a run: a flag another thread sets, and a deadline. Executors call
// Stop() at every node and loop iteration (no allocation) and Throw() when it is not 0.
struct RunControl {
  std::shared_ptr<const std::atomic<bool>> terminate;  // may be null
  bool has_deadline = false;
  std::chrono::steady_clock::time_point deadline;
  double time_limit_ms = 0;
  bool active() const { return terminate || has_deadline; }
  // 0: go on; 1: terminated; 2: past the deadline.
  int Stop() const {
    if (terminate && terminate->load(std::memory_order_relaxed)) return 1;
    if (has_deadline && std::chrono::steady_clock::now() >= deadline) return 2;
    return 0;
  }
  // kCancelled naming the reason and where the run stopped.
  [[noreturn]] void Throw(int reason, const std::string& where) const;
};

// The run control of the run on this thread (set by the executor; null elsewhere, in
// worker threads too). Long reference loops (ForEachIndex) read it and the thread's
// iteration counter once per loop and check the control every 65536 iterations of all
// loops together (PollStop; nested loops share the count): one model-sized loop nest
// inside a single node (a pooling window of 10^10 taps) stops with its run as well.
class RunControlScope {
 public:
  explicit RunControlScope(const RunControl* c);
  ~RunControlScope();
  RunControlScope(const RunControlScope&) = delete;
  RunControlScope& operator=(const RunControlScope&) = delete;

 private:
  const RunControl* prev_;
};
const RunControl* ThreadRunControl();
// A control for work a session does outside any run's limits (constant folding, which
// runs reference kernels while the session is prepared): `outer` (may be null) with a
// deadline `ms` from now at the latest. The passes leave a fold that passes it to run
// time, where the caller's time limit applies.
RunControl BoundedRunControl(const RunControl* outer, double ms);
// The time each constant fold may take (1 s).
inline constexpr double kFoldTimeLimitMs = 1000;
uint32_t& ThreadPollCount();
// Counts one iteration; every 65536th throws kCancelled when c (the thread's control,
// may be null) says stop.
inline void PollStop(const RunControl* c, uint32_t& count) {
  if (c && (++count & 0xFFFF) == 0) {
    if (const int why = c->Stop()) c->Throw(why, "a loop inside an operator");
  }
}

}  // namespace onemodel::impl
