// Session and executor (see session.h).
#include "runtime/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/error.h"
#include "core/fpenv.h"
#include "core/golden.h"
#include "onnx/import.h"
#include "passes/passes.h"
#include "core/per_thread.h"
#include "core/threadpool.h"
#include "ops/op_context.h"

namespace onemodel::impl {

// A graph's schedule, computed once per graph (the session's graphs are cached in
// GraphPlans; a function body's instance gets its own): every name the graph reads or
// writes has a slot; per node its operator, its input and output slots and the slots
// whose last reader it is (freed after it: graph outputs and initializers stay;
// subgraphs' references to this graph's names count as reads by their node).
struct GraphPlan {
  static constexpr size_t kNoSlot = ~size_t(0);
  std::unordered_map<std::string, size_t> slot;
  std::vector<Value> init;  // per slot: the initializer's value (kind kNone for others)
  struct Step {
    OpFn fn = nullptr;
    const Function* func = nullptr;
    std::vector<size_t> in, out, free_after;
    std::unique_ptr<NodeStateSlot> state = std::make_unique<NodeStateSlot>();  // the operator's prepared state
  };
  std::vector<Step> steps;
  std::vector<size_t> outputs;
};

// A graph run's working vectors (slot values, the operators' inputs and outputs), kept
// by the session between runs so that their capacity is reused.
struct RunBuffers {
  std::vector<Value> vals;
  std::vector<const Value*> in;
  std::vector<Value> out;
};

struct GraphPlans {
  std::mutex mu;
  std::unordered_map<const Graph*, std::unique_ptr<GraphPlan>> by_graph;
  std::vector<std::unique_ptr<RunBuffers>> spare;  // RunBuffers not in use
};

// Takes a RunBuffers from the session's spares (or a new one) and gives it back,
// emptied (no value kept alive), when the run of the graph ends.
class RunBuffersLease {
 public:
  explicit RunBuffersLease(GraphPlans* plans) : plans_(plans) {
    if (plans_) {
      std::lock_guard<std::mutex> lock(plans_->mu);
      if (!plans_->spare.empty()) {
        b_ = std::move(plans_->spare.back());
        plans_->spare.pop_back();
      }
    }
    if (!b_) b_ = std::make_unique<RunBuffers>();
  }
  ~RunBuffersLease() {
    b_->vals.clear();
    b_->in.clear();
    b_->out.clear();
    if (!plans_) return;
    std::lock_guard<std::mutex> lock(plans_->mu);
    plans_->spare.push_back(std::move(b_));
  }
  RunBuffers& operator*() { return *b_; }

 private:
  GraphPlans* plans_;
  std::unique_ptr<RunBuffers> b_;
};

class Executor final : public SubgraphRunner {
 public:
  // SubgraphRunner: binds the inputs to g's inputs by position and runs it.
  void RunInto(const Graph& g, const std::vector<const Value*>& inputs, const Scope& scope,
               std::vector<Value>* out) override {
    if (inputs.size() != g.inputs.size()) {
      throw Error(ErrorCode::kInvalidModel, "subgraph '" + g.name + "' takes " + std::to_string(g.inputs.size()) +
                                                " inputs, given " + std::to_string(inputs.size()));
    }
    auto bind = [&](const GraphPlan& plan, std::vector<Value>& vals) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        auto it = plan.slot.find(g.inputs[i].name);
        if (it != plan.slot.end()) vals[it->second] = inputs[i] ? *inputs[i] : Value();
      }
    };
    RunGraphInto(g, bind, &scope, true, out);
  }

  // Stops the run (kCancelled) when its control says so; `node` names where.
  void CheckControl(const Node* node, const Graph& g) const {
    if (!control_) return;
    if (const int why = control_->Stop()) control_->Throw(why, node ? node->Describe() : "graph '" + g.name + "'");
  }
  void SetControl(const RunControl* c) { control_ = c && c->active() ? c : nullptr; }

  // vector_kernels: kernels is a vector target's table (any ISA but ref), so operators may
  // plan their vector algorithms; false: every plan is the reference (the oracle).
  Executor(const Model& m, const KernelTable* kernels, bool vector_kernels, ThreadPool* pool, DerivedCache* derived,
           GraphPlans* plans)
      : model_(m), kernels_(kernels), vector_kernels_(vector_kernels), pool_(pool), derived_(derived), plans_(plans) {}

  std::unique_ptr<GraphPlan> MakePlan(const Graph& g) const {
    auto p = std::make_unique<GraphPlan>();
    auto slot_of = [&](const std::string& name) { return p->slot.emplace(name, p->slot.size()).first->second; };
    for (const auto& in : g.inputs) slot_of(in.name);
    for (const auto& [name, t] : g.initializers) slot_of(name);
    std::vector<size_t> last_use;
    auto read = [&](const std::string& name, size_t i) {
      const size_t s = slot_of(name);
      if (last_use.size() <= s) last_use.resize(s + 1, GraphPlan::kNoSlot);
      last_use[s] = i;
      return s;
    };
    p->steps.resize(g.nodes.size());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& node = g.nodes[i];
      GraphPlan::Step& st = p->steps[i];
      st.fn = FindRefOp(node.domain, node.op_type);
      st.func = st.fn ? nullptr : FindFunction(node);
      for (const auto& n : node.inputs) st.in.push_back(n.empty() ? GraphPlan::kNoSlot : read(n, i));
      for (const auto& [k, a] : node.attributes) {
        if (a.g)
          for (const auto& r : a.g->outer_refs) read(r, i);
        for (const auto& sg : a.graphs)
          for (const auto& r : sg->outer_refs) read(r, i);
      }
      for (const auto& n : node.outputs) st.out.push_back(n.empty() ? GraphPlan::kNoSlot : slot_of(n));
    }
    for (const auto& o : g.outputs) p->outputs.push_back(slot_of(o.name));
    p->init.resize(p->slot.size());
    for (const auto& [name, t] : g.initializers) p->init[p->slot.at(name)] = Value::FromTensor(t);
    std::vector<bool> keep(p->slot.size(), false);
    for (size_t s : p->outputs) keep[s] = true;
    for (const auto& [name, t] : g.initializers) keep[p->slot.at(name)] = true;
    for (size_t s = 0; s < last_use.size(); ++s) {
      if (last_use[s] != GraphPlan::kNoSlot && !keep[s]) p->steps[last_use[s]].free_after.push_back(s);
    }
    return p;
  }

  // The cached plan of one of the session's graphs (made on first use).
  const GraphPlan& PlanFor(const Graph& g) {
    std::lock_guard<std::mutex> lock(plans_->mu);
    auto& p = plans_->by_graph[&g];
    if (!p) p = MakePlan(g);
    return *p;
  }

  // Runs graph g with the given bindings (inputs), seeing `outer` for names defined
  // in enclosing graphs. `cached`: g belongs to the session (its plan is kept).
  std::vector<Value> RunGraph(const Graph& g, std::unordered_map<std::string, Value> env, const Scope* outer,
                              bool cached = true) {
    auto bind = [&](const GraphPlan& plan, std::vector<Value>& vals) {
      for (auto& [name, v] : env) {
        auto it = plan.slot.find(name);
        if (it != plan.slot.end()) vals[it->second] = std::move(v);
      }
    };
    return RunGraph(g, bind, outer, cached);
  }
  // The same with bind(plan, slot values) placing the bindings in their slots.
  std::vector<Value> RunGraph(const Graph& g, FunctionRef<void(const GraphPlan&, std::vector<Value>&)> bind,
                              const Scope* outer, bool cached = true) {
    std::vector<Value> out;
    RunGraphInto(g, bind, outer, cached, &out);
    return out;
  }
  // The same with the graph's outputs assigned to *out (resized; its capacity reused).
  void RunGraphInto(const Graph& g, FunctionRef<void(const GraphPlan&, std::vector<Value>&)> bind, const Scope* outer,
                    bool cached, std::vector<Value>* out) {
    CheckControl(nullptr, g);  // a Loop or Scan whose body has no node stops here too
    std::unique_ptr<GraphPlan> own;
    if (!cached || !plans_) own = MakePlan(g);
    const GraphPlan& plan = own ? *own : PlanFor(g);
    // Slot values: bindings (feeds override initializers), then node outputs.
    RunBuffersLease lease(plans_);
    std::vector<Value>& vals = (*lease).vals;
    vals.resize(plan.slot.size());
    bind(plan, vals);
    auto at = [&](size_t s) -> const Value* {
      if (vals[s].kind != Value::Kind::kNone) return &vals[s];
      if (plan.init[s].kind != Value::Kind::kNone) return &plan.init[s];
      return nullptr;
    };
    auto scope_fn = [&](const std::string& name) -> const Value* {
      auto it = plan.slot.find(name);
      if (it != plan.slot.end()) {
        if (const Value* v = at(it->second)) return v;
      }
      return outer ? (*outer)(name) : nullptr;
    };
    const Scope scope = scope_fn;
    std::vector<const Value*>& in_buf = (*lease).in;  // the contexts' input and output vectors, reused
    std::vector<Value>& out_buf = (*lease).out;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& node = g.nodes[i];
      const GraphPlan::Step& st = plan.steps[i];
      if (!st.fn && !st.func) throw UnsupportedOpError(model_.origin, node);
      CheckControl(&node, g);
      OpContext ctx(node, OpsetFor(node.domain), std::move(in_buf), std::move(out_buf));
      ctx.executor = this;
      ctx.kernels = kernels_;
      ctx.vector_kernels = vector_kernels_;
      ctx.fast = fast_;
      ctx.algorithms = algorithms_;
      ctx.pool = pool_;
      ctx.scope = &scope;
      ctx.derived = derived_;
      ctx.graph = &g;
      ctx.state = st.state.get();
      ctx.prepack = prepack_;
      ctx.inputs.reserve(st.in.size());
      for (size_t k = 0; k < st.in.size(); ++k) {
        if (st.in[k] == GraphPlan::kNoSlot) {
          ctx.inputs.push_back(nullptr);
          continue;
        }
        const Value* v = at(st.in[k]);
        if (!v && outer) v = (*outer)(node.inputs[k]);
        if (!v) {
          throw Error(ErrorCode::kInvalidModel, node.Describe() + ": value '" + node.inputs[k] +
                                                    "' was not produced (its node names more outputs than it gives)");
        }
        ctx.inputs.push_back(v);
      }
      const auto t0 = profile_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      if (st.fn) {
        try {
          st.fn(ctx);
        } catch (const std::logic_error& e) {
          // An operator's checked access (.at()) or size (length_error) refused what the
          // model gave it: the model's fault, named, not a crash or an internal error.
          throw Error(ErrorCode::kInvalidModel, node.Describe() + ": " + e.what());
        }
      } else {
        std::vector<Value> outs = CallFunction(*st.func, node, ctx.inputs);
        for (size_t k = 0; k < outs.size() && k < ctx.outputs.size(); ++k) ctx.outputs[k] = std::move(outs[k]);
      }
      if (profile_) {
        auto& e = profile_->by_op[profile_->per_node ? node.op_type + " " + node.name : node.op_type];
        e.first += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        e.second += 1;
      }
      for (size_t k = 0; k < st.out.size(); ++k) {
        if (st.out[k] != GraphPlan::kNoSlot) vals[st.out[k]] = std::move(ctx.outputs[k]);
      }
      ctx.outputs.clear();  // what an output slot does not take is released here
      in_buf = std::move(ctx.inputs);
      out_buf = std::move(ctx.outputs);
      for (size_t s : st.free_after) vals[s] = Value();
    }
    out->clear();
    out->reserve(plan.outputs.size());
    for (size_t k = 0; k < plan.outputs.size(); ++k) {
      const Value* v = at(plan.outputs[k]);
      if (!v && outer) v = (*outer)(g.outputs[k].name);
      if (!v) {
        throw Error(ErrorCode::kInvalidModel, "graph output '" + g.outputs[k].name +
                                                  "' was not produced (its node names more outputs than it gives)");
      }
      out->push_back(*v);
    }
  }

  const Function* FindFunction(const Node& n) const {
    auto it = model_.functions.find(n.domain + ":" + n.op_type);
    return it == model_.functions.end() ? nullptr : &it->second;
  }

  // Runs a model-local function: its body with the caller's inputs bound to the formal
  // inputs and attribute references (ref_attr_name) resolved from the calling node. The
  // body sees nothing of the caller's graph but what is passed in.
  std::vector<Value> CallFunction(const Function& f, const Node& call, const std::vector<const Value*>& inputs) {
    Graph g;
    g.name = f.name;
    for (const std::string& in : f.inputs) g.inputs.push_back({in, {}});
    for (const std::string& out : f.outputs) g.outputs.push_back({out, {}});
    for (Node n : f.nodes) {
      std::map<std::string, Attribute, std::less<>> attrs;
      for (auto& [name, a] : n.attributes) {
        if (a.ref_attr_name.empty()) {
          attrs[name] = a;
          continue;
        }
        const Attribute* given = call.attr(a.ref_attr_name);
        if (given) {
          Attribute c = *given;
          c.name = name;
          attrs[name] = c;
        }
      }
      n.attributes = std::move(attrs);
      g.nodes.push_back(std::move(n));
    }
    std::unordered_map<std::string, Value> env;
    for (size_t i = 0; i < f.inputs.size() && i < inputs.size(); ++i) {
      if (inputs[i]) env[f.inputs[i]] = *inputs[i];
    }
    if (++depth_ > 64) {
      --depth_;
      throw Error(ErrorCode::kInvalidModel, "function '" + f.name + "' recurses too deeply");
    }
    try {
      auto out = RunGraph(g, std::move(env), nullptr, /*cached=*/false);
      --depth_;
      return out;
    } catch (...) {
      --depth_;
      throw;
    }
  }

  // ONEMODEL_PROFILE=1: time per operator type (subgraph and function bodies count
  // inside their caller's node too), printed to stderr when the run ends; =2: per node.
  struct Profile {
    bool per_node = false;
    std::map<std::string, std::pair<double, int64_t>> by_op;
  };
  void EnableProfile(Profile* p) { profile_ = p; }
  void SetPrepack(bool on) { prepack_ = on; }
  void SetAlgorithms(const std::map<std::string, std::string>* a) { algorithms_ = a->empty() ? nullptr : a; }
  void SetFast(bool fast) { fast_ = fast; }

  int64_t OpsetFor(const std::string& domain) const {
    auto it = model_.opsets.find(domain);
    return it == model_.opsets.end() ? 1 : it->second;
  }

 private:
  const Model& model_;
  const KernelTable* kernels_;
  bool vector_kernels_ = false;
  bool fast_ = false;  // SessionOptions::mode is kFast: plans may take fast rows
  const std::map<std::string, std::string>* algorithms_ = nullptr;  // SessionOptions::algorithms
  ThreadPool* pool_;
  DerivedCache* derived_;
  GraphPlans* plans_;
  Profile* profile_ = nullptr;
  const RunControl* control_ = nullptr;
  bool prepack_ = true;
  int depth_ = 0;
};

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Session Session::Load(const std::string& path, const SessionOptions& opts,
                      const std::map<std::string, ExternalBytes>& external) {
  Session s;
  LimitScope limits(&opts.limits, nullptr);
  s.model_ = std::make_shared<Model>(LoadModelFile(path, opts.limits, external));
  s.Prepare(opts);
  return s;
}

Session Session::FromBytes(const uint8_t* data, size_t size, const SessionOptions& opts, const std::string& name,
                           const std::map<std::string, ExternalBytes>& external) {
  Session s;
  LimitScope limits(&opts.limits, nullptr);
  s.model_ = std::make_shared<Model>(ImportModel(data, size, name, ExternalSource{"", external}, opts.limits));
  s.Prepare(opts);
  return s;
}

namespace {
// The bytes of a graph's initializers, its subgraphs' included.
uint64_t WeightBytes(const Graph& g) {
  uint64_t n = 0;
  for (const auto& [name, t] : g.initializers) n += t.nbytes();
  for (const Node& node : g.nodes) {
    for (const auto& [k, a] : node.attributes) {
      if (a.g) n += WeightBytes(*a.g);
      for (const auto& sg : a.graphs) n += WeightBytes(*sg);
    }
  }
  return n;
}
}  // namespace

namespace {
void CheckOps(const Model& m, const Graph& g) {
  for (const Node& n : g.nodes) {
    if (!FindRefOp(n.domain, n.op_type) && !m.functions.count(n.domain + ":" + n.op_type)) {
      throw UnsupportedOpError(m.origin, n);
    }
    for (const auto& [k, a] : n.attributes) {
      if (a.g) CheckOps(m, *a.g);
      for (const auto& sg : a.graphs) CheckOps(m, *sg);
    }
  }
}
}  // namespace

struct Session::ProfileBox {
  std::mutex mu;
  RunProfile last;
};

void Session::Prepare(const SessionOptions& opts) {
  opts_ = opts;
  if (opts.avx512_tile_bits != 0 && opts.avx512_tile_bits != 256 && opts.avx512_tile_bits != 512) {
    throw Error(ErrorCode::kInvalidArgument,
                "avx512_tile_bits must be 0 (by the core), 256 or 512, got " + std::to_string(opts.avx512_tile_bits));
  }
  const Avx512Tiles tiles = opts.avx512_tile_bits == 256   ? Avx512Tiles::k256
                            : opts.avx512_tile_bits == 512 ? Avx512Tiles::k512
                                                           : Avx512Tiles::kAuto;
  dispatch_ = MakeDispatch(opts.isa.empty() ? BestIsa() : ParseIsa(opts.isa), tiles);
  if (opts.threads < 0 || opts.threads > 1024) {
    throw Error(ErrorCode::kInvalidArgument,
                "threads must be 0 (every core) or 1 .. 1024, got " + std::to_string(opts.threads));
  }
  if (opts.profiling < 0 || opts.profiling > 2) {
    throw Error(ErrorCode::kInvalidArgument, "profiling must be 0 (off), 1 (per operator type) or 2 (per node), got " +
                                                 std::to_string(opts.profiling));
  }
  for (const std::string& name : opts.disabled_passes) {
    std::vector<std::string> known = ExactPassNames();
    known.insert(known.end(), FastPassNames().begin(), FastPassNames().end());
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw Error(ErrorCode::kInvalidArgument, "unknown graph pass '" + name + "' to disable (passes: " + list + ")");
    }
  }
  pool_ = ThreadPool::Create(opts.threads ? opts.threads : ThreadPool::DefaultThreads());
  plans_ = std::make_shared<GraphPlans>();
  profile_ = std::make_shared<ProfileBox>();
  // Fast mode: the operators' plans may take their families' fast rows (ops/family.h);
  // every other choice is exact mode's.
  CheckOps(*model_, *model_->graph);
  if (opts.limits.max_session_bytes > 0) {
    budget_ = std::make_shared<MemoryBudget>();
    budget_->limit = opts.limits.max_session_bytes;
    const uint64_t weights = WeightBytes(*model_->graph);
    if (weights > budget_->limit) {
      throw Error(ErrorCode::kLimitExceeded, model_->origin + ": the weights are " + std::to_string(weights) +
                                                 " bytes, over max_session_bytes (" + std::to_string(budget_->limit) +
                                                 ")");
    }
    budget_->live = weights;  // held for the session's life
  }
  // The graph that runs: the model's own at ISA ref (the oracle, unfused), else a copy
  // rewritten by the exact-mode passes (passes/passes.h, docs/graph-passes.md); either
  // with the free-dimension overrides written into its inputs' shapes.
  run_graph_ = model_->graph;
  if (!opts.free_dimension_overrides.empty()) {
    auto g = std::make_shared<Graph>(*model_->graph);
    std::map<std::string, bool> used;
    for (auto& in : g->inputs) {
      if (in.type.kind != ValueType::Kind::kTensor || !in.type.tensor.has_shape) continue;
      TensorType& tt = in.type.tensor;
      for (size_t k = 0; k < tt.dims.size(); ++k) {
        auto it = opts.free_dimension_overrides.find(tt.dim_params[k]);
        if (tt.dim_params[k].empty() || it == opts.free_dimension_overrides.end()) continue;
        if (it->second < 0) {
          throw Error(ErrorCode::kInvalidArgument,
                      "free dimension override '" + it->first + "' must be >= 0, got " + std::to_string(it->second));
        }
        tt.dims[k] = it->second;
        used[it->first] = true;
      }
    }
    for (const auto& [name, v] : opts.free_dimension_overrides) {
      if (used.count(name)) continue;
      std::string have;
      for (const auto& in : model_->graph->inputs) {
        if (in.type.kind != ValueType::Kind::kTensor) continue;
        for (const std::string& d : in.type.tensor.dim_params) {
          if (!d.empty() && have.find("'" + d + "'") == std::string::npos)
            have += (have.empty() ? "'" : ", '") + d + "'";
        }
      }
      throw Error(ErrorCode::kInvalidArgument, model_->origin + ": free dimension override '" + name +
                                                   "' names no symbolic dimension of the model's inputs (they have: " +
                                                   (have.empty() ? std::string("none") : have) + ")");
    }
    run_graph_ = g;
  }
  for (const auto& in : run_graph_->inputs) {
    if (!run_graph_->initializers.count(in.name)) inputs_.push_back(in);
  }
  if (dispatch_.isa != Isa::kRef) {
    derived_ = std::make_shared<DerivedCache>();
    auto g = std::make_shared<Graph>(*run_graph_);
    int rewrites = opts.mode == Mode::kFast ? RunFastGraphPasses(*g, model_->opsets, opts.disabled_passes) : 0;
    rewrites += RunExactPasses(*g, model_->opsets, opts.disabled_passes);
    if (opts.mode == Mode::kFast) rewrites += RunFastPasses(*g, opts.disabled_passes);
    if (rewrites > 0) run_graph_ = g;
    planner_ = std::make_shared<MemoryPlanner>(opts.memory_plan);
  }
}

int Session::threads() const { return pool_ ? pool_->threads() : 0; }

RunProfile Session::last_profile() const {
  if (!profile_) return {};
  std::lock_guard<std::mutex> lock(profile_->mu);
  return profile_->last;
}

namespace {

// Every NaN leaving a session is its type's canonical quiet NaN (exact contract, section
// 5): inside the graph a NaN's sign and payload are whatever each target's instructions
// give (x86's and wasm's min/max, for one, differ), so the outputs are rewritten here.
void CanonicalOutputs(std::vector<Value>& out) {
  for (Value& v : out) {
    if (v.is_tensor()) CanonicalizeNaNs(v.tensor);
    for (Tensor& t : v.sequence) CanonicalizeNaNs(t);
  }
}

}  // namespace

std::vector<Value> Session::Run(const std::map<std::string, Value>& feeds, const RunControl* control) const {
  FpEnvGuard env_guard;
  LimitScope limits(&opts_.limits, budget_);
  const Graph& g = *run_graph_;
  // Feeds the model does not name are ignored, as onnxruntime-node ignores them
  // (docs/api.md, "What a run accepts").
  for (const auto& in : g.inputs) {
    auto it = feeds.find(in.name);
    if (it == feeds.end()) {
      if (g.initializers.count(in.name)) continue;               // default from the initializer
      if (in.type.kind == ValueType::Kind::kOptional) continue;  // bound as an empty optional below
      throw Error(ErrorCode::kMissingInput, model_->origin + ": input '" + in.name + "' was not given");
    }
    const Value& v = it->second;
    if (in.type.kind == ValueType::Kind::kTensor && v.is_tensor()) {
      const TensorType& tt = in.type.tensor;
      if (tt.dtype != DType::kUndefined && tt.dtype != v.tensor.dtype()) {
        throw Error(ErrorCode::kTypeMismatch, model_->origin + ": input '" + in.name + "' must be " +
                                                  DTypeName(tt.dtype) + ", got " + DTypeName(v.tensor.dtype()));
      }
      // A declared scalar takes a tensor of any shape, as ONNX Runtime does (models declare
      // [] where exporters feed [1]); any other declared shape is checked.
      if (tt.has_shape && !tt.dims.empty()) {
        bool ok = tt.dims.size() == v.tensor.shape().size();
        for (size_t k = 0; ok && k < tt.dims.size(); ++k) ok = tt.dims[k] < 0 || tt.dims[k] == v.tensor.shape()[k];
        if (!ok) {
          std::string want = "[";
          for (size_t k = 0; k < tt.dims.size(); ++k) {
            want += (k ? "," : "") + (tt.dims[k] >= 0 ? std::to_string(tt.dims[k])
                                                      : (tt.dim_params[k].empty() ? "?" : tt.dim_params[k]));
          }
          want += "]";
          throw Error(ErrorCode::kShapeMismatch, model_->origin + ": input '" + in.name + "' must have shape " + want +
                                                     ", got " + ShapeToString(v.tensor.shape()));
        }
      }
    }
  }
  // The inputs in their slots: the feeds, and an empty optional for an optional input
  // neither fed nor defaulted by an initializer.
  auto bind = [&](const GraphPlan& plan, std::vector<Value>& vals) {
    for (const auto& in : g.inputs) {
      auto s = plan.slot.find(in.name);
      if (s == plan.slot.end()) continue;
      auto it = feeds.find(in.name);
      if (it != feeds.end()) {
        vals[s->second] = it->second;
      } else if (!g.initializers.count(in.name) && in.type.kind == ValueType::Kind::kOptional) {
        vals[s->second] = Value();
        vals[s->second].kind = Value::Kind::kOptionalEmpty;
      }
    }
  };
  Executor ex(*model_, &dispatch_.kernels, dispatch_.isa != Isa::kRef, pool_.get(), derived_.get(), plans_.get());
  ex.SetPrepack(opts_.prepack);
  ex.SetAlgorithms(&opts_.algorithms);
  ex.SetFast(opts_.mode == Mode::kFast);
  ex.SetControl(control);
  RunControlScope control_scope(control);
  // The memory plan is keyed by the inputs' element types and shapes (the key's text is
  // built in a buffer kept by the thread, so that steady runs allocate nothing for it).
  std::optional<MemoryPlanner::RunScope> plan;
  auto& key = ONEMODEL_PER_THREAD(std::string);
  if (planner_) {
    key.clear();
    auto number = [&key](int64_t v) {
      char digits[24];
      const int n = std::snprintf(digits, sizeof digits, "%lld", static_cast<long long>(v));
      key.append(digits, size_t(n));
    };
    for (const auto& in : g.inputs) {
      auto it = feeds.find(in.name);
      if (it == feeds.end()) {
        key += g.initializers.count(in.name) ? "-;" : "v;";
        continue;
      }
      if (!it->second.is_tensor()) {
        key += "v;";
        continue;
      }
      number(int64_t(it->second.tensor.dtype()));
      key += '[';
      for (int64_t d : it->second.tensor.shape()) {
        number(d);
        key += ',';
      }
      key += "];";
    }
    planner_->Begin(key, &plan);
  }
  if (opts_.profiling == 0) {
    auto out = ex.RunGraph(g, bind, nullptr);
    if (plan) plan->Finish();
    CanonicalOutputs(out);
    return out;
  }
  Executor::Profile p;
  p.per_node = opts_.profiling == 2;
  ex.EnableProfile(&p);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = ex.RunGraph(g, bind, nullptr);
  if (plan) plan->Finish();
  RunProfile r;
  r.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& [op, e] : p.by_op) r.entries.emplace_back(op, e.first, e.second);
  std::stable_sort(r.entries.begin(), r.entries.end(),
                   [](const auto& a, const auto& b) { return std::get<1>(a) > std::get<1>(b); });
  r.recycled_bytes = RecycledTensorBytes();
  if (planner_) r.plan = planner_->stats();
  std::lock_guard<std::mutex> lock(profile_->mu);
  profile_->last = std::move(r);
  CanonicalOutputs(out);
  return out;
}

std::vector<NodePlan> Session::plans() const {
  std::vector<NodePlan> out;
  std::lock_guard<std::mutex> lock(plans_->mu);
  const auto it = plans_->by_graph.find(run_graph_.get());
  if (it == plans_->by_graph.end() || !it->second) return out;
  const Graph& g = *run_graph_;
  for (size_t i = 0; i < g.nodes.size() && i < it->second->steps.size(); ++i) {
    NodeStateSlot& slot = *it->second->steps[i].state;
    std::lock_guard<std::mutex> slot_lock(slot.mu);
    if (!slot.row) continue;
    out.push_back({g.nodes[i].name, g.nodes[i].QualifiedType(), slot.family, slot.row, slot.fast_row});
  }
  return out;
}

MemoryPlanStats Session::memory_plan_stats() const { return planner_ ? planner_->stats() : MemoryPlanStats{}; }

}  // namespace onemodel::impl
