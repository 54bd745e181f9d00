// The C++ session API: load a model (path or bytes) with options, then run it with
// named inputs. Exact mode runs the nodes in topological order with the kernels of the
// session's ISA cap, splitting independent outputs over its threads; every ISA and
// thread count gives the oracle's bits (exact-contract section 1).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "ref/op_context.h"
#include "runtime/dispatch.h"
#include "runtime/memory_plan.h"
#include "runtime/value.h"

namespace onemodel {

enum class Mode { kExact, kFast };

struct SessionOptions {
  Mode mode = Mode::kExact;
  int threads = 0;       // 0: ONEMODEL_THREADS, else all cores
  std::string isa;       // "": ONEMODEL_ISA, else the best the CPU has
};

class Executor;
class ThreadPool;
struct GraphPlans;

class Session {
 public:
  static Session Load(const std::string& path, const SessionOptions& opts = {});
  static Session FromBytes(const uint8_t* data, size_t size, const SessionOptions& opts = {},
                           const std::string& name = "<bytes>");
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  const Model& model() const { return *model_; }
  // The graph inputs the caller must (or may) feed: inputs that are not initializers.
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return model_->graph->outputs; }

  // Runs the model. Every required input must be given with the declared element type
  // and a shape that matches the declared static dimensions; typed errors otherwise.
  // Returns the outputs in graph order.
  std::vector<Value> Run(const std::map<std::string, Value>& feeds) const;

  // The memory plan's figures (runtime/memory_plan.h): arena size, buffers placed, and
  // where the last run's buffers came from. Zero before the first run, and at ISA ref
  // (the oracle runs without a plan).
  MemoryPlanStats memory_plan_stats() const;

 private:
  Session() = default;
  void Prepare(const SessionOptions& opts);
  std::shared_ptr<Model> model_;
  std::vector<ValueInfo> inputs_;
  SessionOptions opts_;
  Dispatch dispatch_;
  // Shared by moved-from copies; concurrent Run calls take turns inside it.
  std::shared_ptr<ThreadPool> pool_;
  std::shared_ptr<DerivedCache> derived_;  // tensors derived from constant inputs (not at ISA ref)
  std::shared_ptr<Graph> run_graph_;  // the graph Run executes (after exact-mode passes)
  std::shared_ptr<MemoryPlanner> planner_;  // null at ISA ref
  std::shared_ptr<GraphPlans> plans_;  // each graph's schedule, made on its first run
};

}  // namespace onemodel
