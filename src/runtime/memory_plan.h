// Memory plans: a session's activation buffers laid out ahead of time in one arena.
//
// A run records the tensor buffers its calling thread allocates, in order, with the
// moment each is freed (a clock that counts allocations and frees). From that record
// the planner places every buffer freed within the run at an offset of one arena, so
// that buffers alive at the same time never share bytes (largest first, each at the
// lowest offset free over its lifetime). The next run with the same input shapes and
// element types replays the plan: its k-th allocation takes its planned slice of the
// arena when its size is the recorded one, so steady-state runs take no tensor buffer
// from the heap and their working set is the arena (the peak of live activations plus
// packing gaps). Buffers that outlive the run (outputs, tensors cached by the session)
// are not planned; they come from the recycled buffers (core/tensor.h).
//
// Safety does not rest on the plan being right: the arena tracks which slices are in
// use, and an allocation whose slice is still held (a run that takes another course, an
// output kept from an earlier run that was planned) is served elsewhere; such a run is
// recorded and replaces the plan. After 3 runs in a row that leave a plan, planning
// stops for those input shapes (models whose allocations change from run to run).
// Thread pool chunks allocate outside the plan (core/threadpool.cpp), so the thread
// count never changes it. Sessions plan unless ONEMODEL_MEMORY_PLAN=0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace onemodel::impl {

struct MemoryPlanStats {
  uint64_t runs = 0;           // runs that went through the planner
  uint64_t plans_built = 0;    // plans made (first run of a shape, runs that left a plan)
  size_t arena_bytes = 0;      // the current plan's arena
  size_t planned_buffers = 0;  // buffers it places
  size_t planned_bytes = 0;    // their sizes summed (what they would take unshared)
  size_t peak_live_bytes = 0;  // the most of them alive at one time (the arena's floor)
  bool disabled = false;       // planning stopped for the current input shapes
  // The last run:
  bool last_replayed = false;  // it followed the plan to its end
  size_t last_from_arena = 0;  // buffers it took from the arena
  size_t last_elsewhere = 0;   // buffers of its calling thread that came from elsewhere
};

class MemoryPlanner {
 public:
  class RunScope;
  // Disabled, Begin never begins a run.
  explicit MemoryPlanner(bool enabled);
  ~MemoryPlanner();

  // Begins a run whose inputs have signature `key` in *scope (the caller's storage, so
  // that beginning a run takes nothing from the heap) and installs the run's allocator on
  // the calling thread until the scope ends. False, *scope left empty, when plans are
  // off or another run of the session holds the planner (that run then allocates as
  // usual).
  bool Begin(const std::string& key, std::optional<RunScope>* scope);
  MemoryPlanStats stats() const;

  struct Arena;
  struct Record;
  struct BlockPool;
  struct Entry {
    size_t bytes = 0;
    int64_t offset = -1;  // -1: not planned
  };

 private:
  friend class RunScope;
  void Finish(RunScope& run);

  bool enabled_;
  std::mutex run_mu_;  // held by the run in progress
  mutable std::mutex stats_mu_;
  std::string key_;
  std::string run_key_;  // the key of the run in progress (its capacity reused)
  std::vector<Entry> plan_;
  bool have_plan_ = false;
  size_t arena_bytes_ = 0;
  std::shared_ptr<Arena> arena_;                  // made with the plan (its pages touched)
  std::vector<std::shared_ptr<Record>> records_;  // reused by later runs once free
  std::shared_ptr<BlockPool> blocks_;             // the buffers' control blocks
  bool trimmed_ = false;                          // the recycled buffers were freed for this plan
  int failures_ = 0;
  std::string disabled_key_;
  MemoryPlanStats stats_;
};

class MemoryPlanner::RunScope : public TensorAllocator {
 public:
  ~RunScope() override;
  std::shared_ptr<uint8_t> Allocate(size_t bytes) override;
  // Ends a run that succeeded: keeps the plan it followed or makes one from its record.
  void Finish();

 private:
  friend class MemoryPlanner;
  struct Token {};  // only MemoryPlanner::Begin makes one

 public:
  RunScope(Token, MemoryPlanner* p, std::unique_lock<std::mutex> lock, const std::string& key);
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

 private:
  MemoryPlanner* planner_;
  std::unique_lock<std::mutex> lock_;
  TensorAllocator* prev_ = nullptr;
  std::shared_ptr<Record> record_;
  std::shared_ptr<Arena> arena_;  // the plan's arena when the key matches
  const std::vector<Entry>* plan_ = nullptr;
  bool deviated_ = false;
  bool finished_ = false;
  size_t from_arena_ = 0, elsewhere_ = 0;
};

}  // namespace onemodel::impl
