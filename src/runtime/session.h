// The C++ session API: load a model (path or bytes) with options, then run it with
// named inputs. Exact mode runs the nodes in topological order with the kernels of the
// session's ISA cap, splitting independent outputs over its threads; every ISA and
// thread count gives the oracle's bits (exact-contract section 1).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/limits.h"
#include "onnx/tensor_proto.h"
#include "graph/graph.h"
#include "ops/op_context.h"
#include "runtime/dispatch.h"
#include "runtime/memory_plan.h"
#include "core/value.h"

namespace onemodel::impl {

enum class Mode { kExact, kFast };

// The engine's options (the public API's onemodel::SessionOptions maps onto these; the
// engine reads no environment variable).
struct SessionOptions {
  Mode mode = Mode::kExact;
  int threads = 0;           // 0: every core
  std::string isa;           // "": the best the CPU has
  bool prepack = true;       // constant GEMM weights kept packed (ops/parallel.h)
  int avx512_tile_bits = 0;  // 0: by the core's measured width (runtime/dispatch.h); 256 or 512
  bool memory_plan = true;
  std::vector<std::string> disabled_passes;  // names from ExactPassNames() or FastPassNames()
  int profiling = 0;                         // 0 off, 1 per operator type, 2 per node (last_profile())
  // Symbolic input dimensions fixed to a size (checked against the inputs in Prepare).
  std::map<std::string, int64_t> free_dimension_overrides;
  // Operator type (Node::QualifiedType: "Conv", "com.microsoft.MatMulNBits") -> algorithm
  // name: forces the plans' choice (the operator tests run every algorithm this way;
  // benchmarks compare them). A name the family does not know, or an algorithm the node's
  // geometry cannot take, is kInvalidArgument at that node.
  std::map<std::string, std::string> algorithms;
  Limits limits;  // core/limits.h: checked while loading and running
};

// One run's profile: milliseconds and node counts per operator type (or per node),
// slowest first, with the memory figures of that run.
struct RunProfile {
  double total_ms = 0;
  std::vector<std::tuple<std::string, double, int64_t>> entries;  // name, ms, nodes
  size_t recycled_bytes = 0;
  MemoryPlanStats plan;
};

// The algorithm a node of the main graph runs: its family's table and row (ops/family.h).
struct NodePlan {
  std::string node, op_type, family, row;
  bool fast = false;  // a fast row
};

class Executor;
class ThreadPool;
struct GraphPlans;

class Session {
 public:
  // `external`: external-data files given as bytes (by NormalizeLocation of their
  // names), read before the model's folder (Load) or instead of it (FromBytes).
  static Session Load(const std::string& path, const SessionOptions& opts = {},
                      const std::map<std::string, ExternalBytes>& external = {});
  static Session FromBytes(const uint8_t* data, size_t size, const SessionOptions& opts = {},
                           const std::string& name = "<bytes>",
                           const std::map<std::string, ExternalBytes>& external = {});
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
  // `control` (may be null) stops the run at a node or loop iteration (kCancelled).
  std::vector<Value> Run(const std::map<std::string, Value>& feeds, const RunControl* control = nullptr) const;

  // The memory plan's figures (runtime/memory_plan.h): arena size, buffers placed, and
  // where the last run's buffers came from. Zero before the first run, and at ISA ref
  // (the oracle runs without a plan).
  MemoryPlanStats memory_plan_stats() const;
  // The rows the main graph's nodes planned in the runs so far (nodes whose operator
  // has a family table; empty before the first run).
  std::vector<NodePlan> plans() const;
  // The profile of the last run that finished (profiling on), else empty.
  RunProfile last_profile() const;
  const SessionOptions& options() const { return opts_; }
  Isa isa() const { return dispatch_.isa; }
  int threads() const;

 private:
  Session() = default;
  void Prepare(const SessionOptions& opts);
  std::shared_ptr<Model> model_;
  std::vector<ValueInfo> inputs_;
  SessionOptions opts_;
  Dispatch dispatch_;
  // Shared by moved-from copies; concurrent Run calls take turns inside it.
  std::shared_ptr<ThreadPool> pool_;
  std::shared_ptr<DerivedCache> derived_;   // tensors derived from constant inputs (not at ISA ref)
  std::shared_ptr<Graph> run_graph_;        // the graph Run executes (after exact-mode passes)
  std::shared_ptr<MemoryPlanner> planner_;  // null at ISA ref
  std::shared_ptr<GraphPlans> plans_;       // each graph's schedule, made on its first run
  struct ProfileBox;
  std::shared_ptr<ProfileBox> profile_;   // the last run's profile, under its mutex
  std::shared_ptr<MemoryBudget> budget_;  // max_session_bytes (null: no limit)
};

}  // namespace onemodel::impl
