// What a reference kernel sees: its node, the opset in force, its input values
// (null for omitted optional inputs), typed attribute access with defaults, and the
// outputs it fills. Kernels throw onemodel::Error naming the node on bad input.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/function_ref.h"
#include "graph/graph.h"
#include "core/value.h"
#include "kernels/kernels.h"

namespace onemodel::impl {

class ThreadPool;

// Looks a name up in the enclosing graphs (for subgraphs); null when absent.
using Scope = FunctionRef<const Value*(const std::string&)>;

// What runs a subgraph for an operator (If, Loop, Scan, a function body): the runtime's
// executor implements it, so operators reach the runtime only through this.
class SubgraphRunner {
 public:
  // Runs g with inputs bound to its inputs in order (null: an omitted input), seeing
  // `scope` for outer names; assigns the outputs to *out (its capacity reused).
  virtual void RunInto(const Graph& g, const std::vector<const Value*>& inputs, const Scope& scope,
                       std::vector<Value>* out) = 0;

 protected:
  ~SubgraphRunner() = default;
};

// Runs subgraph g with the given input bindings through `runner`, seeing `scope` for
// outer names; kInternal when there is no runner.
std::vector<Value> RunSubgraph(SubgraphRunner* runner, const Graph& g, const std::vector<Value>& inputs,
                               const Scope& scope);
// The same with the inputs by pointer (null: none) and the outputs assigned to *out
// (its capacity reused), which takes nothing from the heap in steady state.
void RunSubgraphInto(SubgraphRunner* runner, const Graph& g, const std::vector<const Value*>& inputs,
                     const Scope& scope, std::vector<Value>* out);

// Tensors derived once from a node's constant inputs (a weight stored transposed, ...)
// and kept for the session's life: made on the first run, reused by the later ones. A
// layout change only: what an operator computes from a derived tensor has the bits it
// computes from the original. Thread-safe.
class DerivedCache {
 public:
  // The tensor cached for (node, key), made by make() when absent.
  const Tensor& Get(const Node* node, const std::string& key, FunctionRef<Tensor()> make);
  size_t size();

 private:
  std::mutex mu_;
  std::map<std::pair<const Node*, std::string>, std::unique_ptr<Tensor>> map_;
};

// What an operator prepares for its node from the node's attributes and its inputs'
// shapes and types (never their values): a convolution's geometry, a compiled chain, a
// resize's coordinate tables. The session keeps one per node (its graph plan) so that
// later runs with the same shapes reuse it instead of rebuilding it: steady-state runs
// then take nothing from the heap for it, and since it depends on nothing a run can
// change but what the operator checks before reusing it, reuse never changes a result.
struct NodeState {
  virtual ~NodeState() = default;
};
struct NodeStateSlot {
  std::mutex mu;
  std::shared_ptr<const NodeState> state;
  // The row of its family's table the node's plan runs (ops/family.h PlanIndex; null
  // until planned, and for operators without a table), under mu.
  const char* family = nullptr;
  const char* row = nullptr;
  bool fast_row = false;
};

struct OpContext {
  const Node& node;
  int64_t opset;
  std::vector<const Value*> inputs;
  std::vector<Value> outputs;
  SubgraphRunner* executor = nullptr;  // for control flow (subgraphs)
  // The session's kernels (its ISA cap; never null, the oracle's table by default). An
  // operator hands its inner loops to them; each is bitwise equal to its reference
  // kernel (tests/test_kernels.cpp).
  const KernelTable* kernels = &ReferenceKernelTable();
  bool vector_kernels = false;  // kernels is a vector target's table (VectorKernels)
  // The session runs in fast mode: plans may take the families' fast rows (ops/family.h).
  bool fast = false;
  // The session's algorithm choices by operator type (SessionOptions::algorithms), or
  // null: each plan chooses its own.
  const std::map<std::string, std::string>* algorithms = nullptr;
  // The session's threads; null: one thread. Operators split independent outputs
  // over it (ops/parallel.h); the split never changes a fold.
  ThreadPool* pool = nullptr;
  const Scope* scope = nullptr;  // this node's view of every visible value
  // The graph this node runs in (its initializers are the constant inputs, unless a feed
  // replaces them) and the session's cache of tensors derived from them (null: none).
  const Graph* graph = nullptr;
  DerivedCache* derived = nullptr;
  // The session's slot for this node's prepared state (null: none is kept, e.g. in a
  // function body; Prepared then makes it every time).
  NodeStateSlot* state = nullptr;
  // Whether constant GEMM weights may be kept packed for the session's kernel
  // (SessionOptions::prepack; ops/parallel.h PackedConstB).
  bool prepack = true;

  OpContext(const Node& n, int64_t op) : node(n), opset(op), outputs(n.outputs.size()) {}
  // The same, taking over the executor's buffers for inputs and outputs (emptied here,
  // outputs then sized), so that their capacity is reused from node to node.
  OpContext(const Node& n, int64_t op, std::vector<const Value*>&& in_buf, std::vector<Value>&& out_buf)
      : node(n), opset(op), inputs(std::move(in_buf)), outputs(std::move(out_buf)) {
    inputs.clear();
    outputs.clear();
    outputs.resize(n.outputs.size());
  }

  size_t num_inputs() const { return inputs.size(); }
  bool has_input(size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  // The i-th input as a tensor; throws kMissingInput / kTypeMismatch naming the node.
  const Tensor& in(size_t i) const;
  // Creates output i as a zero-filled tensor and returns it.
  Tensor& out(size_t i, DType dtype, const Shape& shape);
  // The same with unspecified contents, for kernels that write every element.
  Tensor& out_uninit(size_t i, DType dtype, const Shape& shape);
  // A new tensor (zeroed, or uninitialised) for this node; its size errors name the
  // node and `label` (e.g. "output 0").
  Tensor NewTensor(DType dtype, const Shape& shape, bool zero, const std::string& label) const;
  void set_out(size_t i, Tensor t);
  bool wants_output(size_t i) const { return i < node.outputs.size() && !node.outputs[i].empty(); }

  int64_t attr_i(std::string_view name, int64_t dflt) const;
  float attr_f(std::string_view name, float dflt) const;
  std::string attr_s(std::string_view name, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(std::string_view name, const std::vector<int64_t>& dflt = {}) const;
  // The same as a Shape: short lists (axes, perms) take nothing from the heap.
  Shape attr_dims(std::string_view name, const Shape& dflt = {}) const;
  std::vector<float> attr_floats(std::string_view name, const std::vector<float>& dflt = {}) const;
  bool has_attr(std::string_view name) const { return node.attr(name) != nullptr; }
  const Attribute& attr_required(std::string_view name) const;

  // A tensor derived from constant input i by make(input), made once per session and
  // kept under `key`; null when input i is not constant or there is no cache (the caller
  // then uses the input itself).
  const Tensor* ConstDerived(size_t i, const std::string& key, FunctionRef<Tensor(const Tensor&)> make) const;
  // Whether input i is a constant in ConstDerived's sense (this graph's initializer, not
  // replaced by a feed) and the session keeps derived tensors: for tensors derived from
  // several inputs, each of which must be constant.
  bool IsConstInput(size_t i) const;
  // Whether the session runs vector kernels (any ISA cap but ref): only then may an
  // operator's plan choose an algorithm other than its reference (the same operations on
  // each value, so the same bits); the oracle keeps the reference loops, and the tests
  // compare the two.
  bool VectorKernels() const { return vector_kernels; }
  // The algorithm the session forces for this node's operator type (the name of a row of
  // the operator's family table), or "" when the plan chooses.
  std::string_view ForcedAlgorithm() const;

  // The node's prepared state of type T: the kept one when fits(it) says it was made
  // for these inputs (same shapes and types), else make() (a shared_ptr<T>), which is
  // then kept. Concurrent runs of a session each get a whole one.
  template <class T, class Fits, class Make>
  std::shared_ptr<const T> Prepared(Fits&& fits, Make&& make) const {
    if (state) {
      std::lock_guard<std::mutex> lock(state->mu);
      if (auto p = std::dynamic_pointer_cast<const T>(state->state); p && fits(*p)) return p;
    }
    std::shared_ptr<const T> made = make();
    if (state) {
      std::lock_guard<std::mutex> lock(state->mu);
      state->state = made;
    }
    return made;
  }

  // An error naming this node: "<op> node 'n': <msg>".
  Error Fail(ErrorCode code, const std::string& msg) const;
  // The checks operators share before they index an input: kShapeMismatch "<name> must
  // have rank >= <min>" unless t has that rank; kTypeMismatch "<name> must have the
  // input's element type" unless t is of `want` (input 0's type, as callers pass it).
  void RequireRank(const Tensor& t, int64_t min_rank, const char* name = "input") const;
  void RequireInputType(const Tensor& t, DType want, const char* name) const;
};

using OpFn = void (*)(OpContext&);

// Returns the reference kernel for (domain, op_type), or null.
OpFn FindRefOp(const std::string& domain, const std::string& op_type);
// Adds an operator outside ops.inc (a test's family; FindRefOp finds it after ops.inc's).
// Returns false when (domain, op_type) already has one. Thread-safe.
bool RegisterOp(const std::string& domain, const std::string& op_type, OpFn fn);

// The typed error for a node whose operator has no reference kernel. For operators that
// are out of scope by decision (docs/exact-mode.md, "Operators left out"), the message
// says why.
Error UnsupportedOpError(const std::string& origin, const Node& node);
// All (domain, op_type) pairs with a reference kernel, for `onemodel ops`.
std::vector<std::string> ListRefOps();

}  // namespace onemodel::impl
