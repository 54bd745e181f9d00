// OneModel's public C++ API: the one header a C++ user includes (docs/api.md).
//
//   onemodel::Session s("model.onnx");                       // exact mode by default
//   onemodel::Tensor x(onemodel::ElementType::kFloat, {1, 3, 224, 224});
//   auto out = s.Run({{"input", x}});                          // [{name, value}, ...]
//   std::string h = onemodel::GoldenHash(out);                 // the exact-mode hash
//
// Every failure is a thrown onemodel::Error with a code and a message naming the model,
// node or input involved; the library never aborts, exits or prints on bad input. Nothing
// here exposes an internal type: the engine behind it is free to change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <string>
#include <utility>
#include <vector>

#if defined(_WIN32) && defined(ONEMODEL_SHARED_LIBRARY)
#if defined(ONEMODEL_BUILDING)
#define ONEMODEL_API __declspec(dllexport)
#else
#define ONEMODEL_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define ONEMODEL_API __attribute__((visibility("default")))
#else
#define ONEMODEL_API
#endif

namespace onemodel {

// ---------------------------------------------------------------------------- errors

// What went wrong, stable across versions (the C ABI's OmStatus has the same values
// plus one: OM_OK = 0, so each code here is its C value).
enum class ErrorCode : int {
  kInvalidArgument = 1,   // a caller-supplied option or value is not acceptable
  kInvalidModel = 2,      // the model bytes are not a well-formed ONNX model
  kUnsupportedOp = 3,     // an operator (or domain) this runtime does not implement
  kUnsupportedOpset = 4,  // an opset version beyond what is supported
  kTypeMismatch = 5,      // an input or value of the wrong element type
  kShapeMismatch = 6,     // an input of the wrong shape, or inconsistent shapes
  kMissingInput = 7,      // a required input was not given
  kGraphCycle = 8,        // the graph's nodes cannot be ordered
  kOutOfRange = 9,        // sizes that overflow or exceed what can be allocated
  kIo = 10,               // a file could not be read or written
  kUnsupportedIsa = 11,   // an instruction set was requested that this CPU or build lacks
  kInternal = 12,         // a bug in OneModel: please report it
  kLimitExceeded = 13,    // a limit of SessionOptions (max_*) would be exceeded; the message names it
  kCancelled = 14,        // the run was terminated (RunOptions::Terminate) or ran past its time limit
  kOutOfMemory = 15,      // the system (or the wasm memory) refused an allocation
};

// Returns the code's stable lower-case name ("invalid_model", ...).
ONEMODEL_API const char* ErrorCodeName(ErrorCode code);

class ONEMODEL_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  ErrorCode code() const { return code_; }
  // The message without the code's name in front (what() is "<code name>: <message>").
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

// ------------------------------------------------------------------ element types

// ONNX's TensorProto.DataType numbering. In memory every type has its natural size;
// float16 and bfloat16 are uint16_t bit patterns, bool one byte (0 or 1), the 8-bit
// floats one byte each, and the 4- and 2-bit types one element per byte (low bits).
enum class ElementType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// Returns ONNX's name of the type ("FLOAT", "INT64", "FLOAT16", ...).
ONEMODEL_API std::string ElementTypeName(ElementType type);
// Bytes per element in memory (strings and kUndefined: 0).
ONEMODEL_API size_t ElementSize(ElementType type);

// The element type of a C++ type: float, double, int8_t .. uint64_t, bool.
template <typename T>
struct ElementTypeOf;
template <>
struct ElementTypeOf<float> {
  static constexpr ElementType value = ElementType::kFloat;
};
template <>
struct ElementTypeOf<double> {
  static constexpr ElementType value = ElementType::kDouble;
};
template <>
struct ElementTypeOf<int8_t> {
  static constexpr ElementType value = ElementType::kInt8;
};
template <>
struct ElementTypeOf<uint8_t> {
  static constexpr ElementType value = ElementType::kUInt8;
};
template <>
struct ElementTypeOf<int16_t> {
  static constexpr ElementType value = ElementType::kInt16;
};
template <>
struct ElementTypeOf<uint16_t> {
  static constexpr ElementType value = ElementType::kUInt16;
};
template <>
struct ElementTypeOf<int32_t> {
  static constexpr ElementType value = ElementType::kInt32;
};
template <>
struct ElementTypeOf<uint32_t> {
  static constexpr ElementType value = ElementType::kUInt32;
};
template <>
struct ElementTypeOf<int64_t> {
  static constexpr ElementType value = ElementType::kInt64;
};
template <>
struct ElementTypeOf<uint64_t> {
  static constexpr ElementType value = ElementType::kUInt64;
};
template <>
struct ElementTypeOf<bool> {
  static constexpr ElementType value = ElementType::kBool;
};

// ----------------------------------------------------------------------- tensors

namespace detail {
struct Access;
}
namespace impl {
struct RunControl;
}

// A tensor: an element type, a shape and its elements in row-major order. Owning
// tensors have value semantics: copies share the elements until one of them is written
// through mutable_data() (copy on write). A view (Tensor::View) reads and writes the
// caller's memory, which must stay valid and unchanged while a Run reads it; a Run
// never returns an output that points into a view.
class ONEMODEL_API Tensor {
 public:
  Tensor();  // empty: type kUndefined, no elements
  // Zero-filled (strings: empty strings). Negative dimensions, or an element count or
  // byte size past what this build can hold, are kOutOfRange errors.
  Tensor(ElementType type, std::vector<int64_t> shape);
  // A copy of `bytes` bytes at `data`, which must be exactly the tensor's byte size.
  static Tensor FromBytes(ElementType type, std::vector<int64_t> shape, const void* data, size_t bytes);
  // A copy of values (whose size must be the shape's element count).
  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, std::vector<int64_t> shape);
  // A string tensor (values.size() must be the shape's element count).
  static Tensor FromStrings(std::vector<std::string> values, std::vector<int64_t> shape);
  // A view of the caller's memory: no copy is made. `bytes` must be the tensor's byte
  // size. Not for strings.
  static Tensor View(ElementType type, std::vector<int64_t> shape, void* data, size_t bytes);

  ElementType type() const { return type_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return int64_t(shape_.size()); }
  int64_t size() const { return size_; }  // element count
  size_t byte_size() const { return size_t(size_) * ElementSize(type_); }
  bool empty() const { return type_ == ElementType::kUndefined; }
  bool is_view() const { return view_; }

  // The elements (null for strings and empty tensors).
  const void* data() const { return data_; }
  // Writable elements: a view's own memory; an owning tensor's elements, copied first
  // when they are shared with another Tensor or with a session.
  void* mutable_data();
  // Typed access; a kTypeMismatch error when T is not the element type (uint16_t
  // serves float16 and bfloat16, uint8_t bool, the 8-bit floats and sub-byte types).
  template <typename T>
  const T* data() const {
    CheckAccess(sizeof(T), ElementTypeOf<T>::value);
    return static_cast<const T*>(data_);
  }
  template <typename T>
  T* mutable_data() {
    CheckAccess(sizeof(T), ElementTypeOf<T>::value);
    return static_cast<T*>(mutable_data());
  }
  // A string tensor's elements (kTypeMismatch for other types).
  const std::vector<std::string>& strings() const;
  // Element i (row-major) as a binary64: integers exactly (64-bit ones past 2^53
  // rounded), every float format decoded exactly, bool 0 or 1. kTypeMismatch for
  // strings and complex types; kOutOfRange for i outside [0, size()).
  double ElementAsDouble(int64_t i) const;
  // A deep, owning copy.
  Tensor Clone() const;

 private:
  friend struct detail::Access;
  void CheckAccess(size_t elem_size, ElementType want) const;
  ElementType type_ = ElementType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t size_ = 0;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;  // keeps data_ alive (null for views)
  bool view_ = false;
  bool shared_ = false;  // data_ is also held elsewhere (a session's weights): copy before writing
  std::shared_ptr<std::vector<std::string>> strings_;
};

// A model value: a tensor, a sequence of tensors, or an optional without a value.
class ONEMODEL_API Value {
 public:
  enum class Kind { kTensor, kSequence, kNone };
  Value() : kind_(Kind::kNone) {}
  Value(Tensor t) : kind_(Kind::kTensor), tensor_(std::move(t)) {}  // NOLINT: implicit by design
  static Value Sequence(std::vector<Tensor> tensors);
  static Value None() { return Value(); }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  // The tensor (kTypeMismatch when the value is not one).
  const Tensor& tensor() const;
  Tensor& tensor();
  // The sequence's tensors (kTypeMismatch when the value is not a sequence).
  const std::vector<Tensor>& sequence() const;

 private:
  Kind kind_;
  Tensor tensor_;
  std::vector<Tensor> sequence_;
};

struct NamedValue {
  std::string name;
  Value value;
};

// A declared (or inferred) input or output: kind, element type and shape. Dimensions
// are >= 0 when fixed and -1 when not; symbolic() names the symbolic ones ("" where a
// dimension has no name). A sequence or optional describes its element in element[0].
struct ValueInfo {
  enum class Kind { kTensor, kSequence, kOptional, kMap, kUnknown };
  std::string name;
  Kind kind = Kind::kUnknown;
  ElementType type = ElementType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> shape;
  std::vector<std::string> symbolic;
  std::vector<ValueInfo> element;

  // "FLOAT[1,3,height,width]", "INT64[?]", "sequence<FLOAT[?]>", ... (unknown rank: "[?]").
  ONEMODEL_API std::string ToString() const;
};

// --------------------------------------------------------------------- sessions

enum class Mode { kExact, kFast };
enum class Profiling { kOff, kByOpType, kByNode };

// How a session runs. Nothing here changes a bit of an exact-mode output: threads, ISA
// cap, prepacking, the memory plan and the exact-mode passes are all held to the oracle's
// bits (docs/exact-mode.md).
// An external-data file given in memory instead of read from the model's folder (ONNX
// models keep weights in files beside them, all of them past 2 GiB). `path` is the
// location the model's tensors name ("model.onnx.data"; "./x" and "a\\b" name "x" and
// "a/b"); it must be relative without "..", like the locations themselves.
struct ExternalData {
  ExternalData() = default;
  ExternalData(std::string path_, const void* data_, size_t size_, std::shared_ptr<const void> keep_ = nullptr)
      : path(std::move(path_)), data(data_), size(size_), keep(std::move(keep_)) {}
  std::string path;
  const void* data = nullptr;
  size_t size = 0;
  // Null: the session copies the ranges its tensors use while it loads, so the bytes
  // need only live until the Session exists. Set: the weights borrow the bytes where
  // they are 8-byte aligned (no copy) and the session keeps `keep` alive while any of
  // them lives (a buffer it now shares, a memory-mapped file, ...).
  std::shared_ptr<const void> keep;
};

struct SessionOptions {
  Mode mode = Mode::kExact;  // kFast: plans may take the families' fast rows (docs/graph-passes.md)
  int threads = 0;           // worker threads, 1 .. 1024; 0: every core
  // The instruction-set cap: "ref" (the reference kernels), "scalar", "sse41", "avx2",
  // "avxvnni", "avx512", "avx512vnni", "neon", "neondot", "wasm128"; "": the best this build and CPU have.
  std::string isa;
  bool prepack = true;  // keep constant GEMM weights packed (their memory once more)
  // The AVX-512 targets' GEMM tiles: 0 by the core's measured 512-bit width (`onemodel
  // targets` prints the choice), 256 or 512 forces them (tests, benchmarks); else
  // kInvalidArgument.
  int avx512_tile_bits = 0;
  bool memory_plan = true;  // steady-state runs take intermediates from one arena
  // Graph passes to leave out: the exact ones "constant-folding", "quantize-dequantize",
  // "dynamic-quant-matmul", "conv-activation", "conv-quantize-dequantize", "conv-residual",
  // "attention", "elementwise-chain", and fast mode's "conv-batchnorm", "div-reciprocal", "conv-input-grid"
  // (docs/graph-passes.md; unknown names are kInvalidArgument).
  std::vector<std::string> disabled_passes;
  Profiling profiling = Profiling::kOff;  // each Run's time per op type or node: last_profile()
  // Symbolic input dimensions fixed to a size (name -> size >= 0): inputs() shows the
  // size and runs check it. A name that no input dimension has is kInvalidArgument.
  std::map<std::string, int64_t> free_dimension_overrides;
  // External-data files in memory, looked up by name before the model's folder
  // (Session(path)) or instead of it (FromBytes, which has no folder). Two entries with
  // one name, an absolute or ".." name, or null data with a size are kInvalidArgument.
  std::vector<ExternalData> external_data;

  // Limits (docs/reliability.md). Going over one is a kLimitExceeded error naming it,
  // raised before the allocation or the work it would take; 0 turns a limit off.
  // The model's bytes plus its external data. Default 16 GiB (wasm: 4 GiB).
  uint64_t max_model_bytes = sizeof(void*) <= 4 ? (uint64_t(4) << 30) : (uint64_t(16) << 30);
  // One tensor's bytes (weights, inputs' copies, intermediates, outputs). Default 16 GiB
  // (wasm: 4 GiB - 1).
  uint64_t max_tensor_bytes = sizeof(void*) <= 4 ? (uint64_t(4) << 30) - 1 : (uint64_t(16) << 30);
  // The session's weights plus the tensors its runs hold at once. Default: no limit.
  uint64_t max_session_bytes = 0;
  int max_graph_depth = 32;       // nested If / Loop / Scan bodies
  int64_t max_nodes = 4'000'000;  // nodes of every graph, subgraph and function together
};

// Per-run options. Copies share one terminate flag: Terminate() on any copy, from any
// thread, stops every run given one of them (now or later, until Reset()) with a
// kCancelled error at its next node or loop iteration. A single long kernel (one large
// MatMul) is not interrupted; the check follows it.
class ONEMODEL_API RunOptions {
 public:
  RunOptions();
  void Terminate();
  void Reset();
  bool terminated() const;
  // > 0: the run stops with kCancelled once it has taken this long (checked like
  // Terminate). 0: no limit.
  double time_limit_ms = 0;

 private:
  friend struct detail::Access;
  std::shared_ptr<void> flag_;
};

// Where the last run's tensor buffers came from (the memory plan, docs/exact-mode.md).
struct MemoryPlanStats {
  size_t runs = 0;             // runs that used the plan's bookkeeping
  bool disabled = false;       // off for the last run's shapes
  bool last_replayed = false;  // the last run followed a plan made earlier
  size_t arena_bytes = 0, peak_live_bytes = 0, planned_buffers = 0, planned_bytes = 0;
  size_t last_from_arena = 0, last_elsewhere = 0;
};

// One run's profile (SessionOptions::profiling): milliseconds per operator type (or
// per "OpType node-name"), slowest first.
struct RunProfile {
  struct Entry {
    std::string name;
    double ms = 0;
    int64_t count = 0;  // nodes of that type (or 1 per node)
  };
  double total_ms = 0;
  std::vector<Entry> entries;
  size_t recycled_buffer_bytes = 0;  // the tensor buffers kept for reuse
  MemoryPlanStats memory_plan;
  // The lines ONEMODEL_PROFILE prints: "[onemodel] profile: ..." then one per entry.
  ONEMODEL_API std::string ToString() const;
};

// The algorithm a node of the model's graph runs: a row of its operator family's table
// (docs/exact-mode.md, "Operator families"). Exact rows give the oracle's bits; a fast
// row (fast mode only) is within its family's stated tolerance.
struct NodePlan {
  std::string node;       // the node's name
  std::string op_type;    // its operator type ("com.microsoft.X" outside the default domain)
  std::string family;     // the family's table ("conv", "softmax", ...)
  std::string algorithm;  // the row ("reference", "im2col-gemm", ...)
  bool fast = false;      // a fast row
};

// A loaded model, ready to run. Run may be called from several threads at once (they
// take turns in the session's thread pool); every call gives the same bits for the same
// inputs. A moved-from session is empty: using it is a kInvalidArgument error.
class ONEMODEL_API Session {
 public:
  explicit Session(const std::string& path, const SessionOptions& options = {});
  // From model bytes (copied; the caller's buffer is not kept). `name` names the model
  // in messages. External data comes from options.external_data only: a location not
  // given there is a kInvalidModel error naming it.
  static Session FromBytes(const void* data, size_t size, const SessionOptions& options = {},
                           const std::string& name = "<bytes>");
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  // The inputs a caller feeds (graph inputs that are not initializers), and the outputs.
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  // The target the kernels were chosen for ("avx512", "wasm128", "ref", ...) and the
  // worker count.
  std::string target() const;
  int threads() const;

  // Runs the model. Every input without a default must be fed, with the declared
  // element type and a shape matching its fixed dimensions. Returns `output_names` in
  // that order, or every output in graph order when it is empty.
  std::vector<NamedValue> Run(const std::vector<NamedValue>& inputs,
                              const std::vector<std::string>& output_names = {}) const;
  // The same under run options (terminate flag, time limit).
  std::vector<NamedValue> Run(const std::vector<NamedValue>& inputs, const std::vector<std::string>& output_names,
                              const RunOptions& run_options) const;
  // Static type and shape inference of every output for inputs like these (their
  // element types and shapes are used, not their values), without running the model.
  std::vector<ValueInfo> InferOutputs(const std::vector<NamedValue>& inputs) const;

  MemoryPlanStats memory_plan_stats() const;
  // The profile of the last Run that finished (empty when profiling is off).
  RunProfile last_profile() const;
  // The algorithm each node of the graph planned in the runs so far (nodes whose
  // operator has a family table; each node planned for the shapes it last ran with), in
  // graph order; empty before the first Run.
  std::vector<NodePlan> plans() const;

  struct Impl;

 private:
  Session();
  std::vector<NamedValue> RunWith(const std::vector<NamedValue>& inputs, const std::vector<std::string>& output_names,
                                  const impl::RunControl* control) const;
  const Impl& impl() const;
  std::unique_ptr<Impl> impl_;
};

// ----------------------------------------------------------- models without a session

struct OperatorUse {
  std::string domain;  // "" for ai.onnx
  std::string op_type;
  int64_t count = 0;  // nodes, subgraphs included
  bool supported = false;
};

// What a model file declares, and what static inference says of its outputs.
struct ModelInfo {
  int64_t ir_version = 0;
  std::string producer;
  std::vector<std::pair<std::string, int64_t>> opsets;  // domain ("" for ai.onnx), version
  std::vector<ValueInfo> inputs;                        // inputs that are not initializers
  std::vector<ValueInfo> outputs;                       // as declared
  std::vector<ValueInfo> inferred_outputs;              // as static inference gives them
  size_t initializer_count = 0, initializer_bytes = 0;
  std::vector<OperatorUse> operators;  // by domain and type
};
ONEMODEL_API ModelInfo InspectModel(const std::string& path);
ONEMODEL_API ModelInfo InspectModelBytes(const void* data, size_t size, const std::string& name = "<bytes>");

// The operator families' tables (docs/operator-families.md): each family's operator types
// and its algorithms, the reference first. Exact algorithms give the oracle's bits on
// every target; fast ones (fast mode only) are within the family's stated tolerance.
struct AlgorithmInfo {
  std::string name;     // what SessionOptions::algorithms forces and NodePlan::algorithm names
  bool fast = false;    // a fast row
  std::string device;   // "cpu"
  std::string kernels;  // the dispatch table's kernels it calls, ", "-separated ("" none)
};
struct OperatorFamily {
  std::string family;
  std::vector<std::string> op_types;
  std::vector<AlgorithmInfo> algorithms;
};
ONEMODEL_API std::vector<OperatorFamily> OperatorFamilies();

// ------------------------------------------------------------------ golden hashes

// The exact-mode hash (docs/exact-mode.md, "hash format"): SHA-256 over each value's
// element type, rank, dimensions and little-endian elements, NaNs canonical; a sequence
// as int64 -2, its length and its tensors; an empty optional as int64 -3.
class ONEMODEL_API GoldenHasher {
 public:
  GoldenHasher();
  ~GoldenHasher();
  GoldenHasher(const GoldenHasher&) = delete;
  GoldenHasher& operator=(const GoldenHasher&) = delete;
  void Add(const Value& v);
  std::string HexDigest();  // 64 lower-case hex digits; the hasher starts again

 private:
  struct State;
  std::unique_ptr<State> s_;
};
// The hash of the values in order.
ONEMODEL_API std::string GoldenHash(const std::vector<NamedValue>& values);
ONEMODEL_API std::string GoldenHash(const Value& value);
// SHA-256 of "onemodel:skipped": what a golden row prints for a case it cannot run.
ONEMODEL_API std::string GoldenSkipMarker();
// The documented input generator of `onemodel hash` (README): unknown dimensions are
// `dims[name]` or 1; floats uniform in [-1, 1), integers in [0, 64), bools alternating;
// SplitMix64 seeded with the FNV-1a hash of the input's name.
ONEMODEL_API Tensor MakeGoldenInput(const ValueInfo& input, const std::map<std::string, int64_t>& dims = {});

// ------------------------------------------------------------------- tensor files

// NumPy .npy (versions 1-3, little-endian numeric and bool) from bytes or a file.
ONEMODEL_API Tensor ReadNpy(const void* data, size_t size, const std::string& name = "<bytes>");
ONEMODEL_API Tensor LoadNpy(const std::string& path);
ONEMODEL_API std::vector<uint8_t> WriteNpy(const Tensor& t);
ONEMODEL_API void SaveNpy(const std::string& path, const Tensor& t);
// A serialised ONNX TensorProto (sequence: SequenceProto; optional: OptionalProto), as
// ONNX's test data stores values.
ONEMODEL_API Value ReadOnnxValue(const void* data, size_t size, ValueInfo::Kind kind,
                                 const std::string& name = "<bytes>");

// -------------------------------------------------------------------- the build

ONEMODEL_API const char* Version();  // "0.1.0"
// "x86-64 gcc 12.2.0", "wasm32 clang ...": the build's architecture and compiler.
ONEMODEL_API std::string BuildDescription();
struct TargetInfo {
  std::string name;        // as SessionOptions::isa takes it
  bool supported = false;  // this CPU (or wasm engine) runs it
};
// The targets compiled into this build, "ref" and "scalar" first, in upgrade order.
ONEMODEL_API std::vector<TargetInfo> CompiledTargets();
// The best target this build and CPU have (what SessionOptions::isa = "" picks).
ONEMODEL_API std::string BestTarget();
// The CPU features the build detected, one line.
ONEMODEL_API std::string CpuDescription();
// The worker count of SessionOptions::threads = 0: the hardware threads (1 without threads).
ONEMODEL_API int DefaultThreads();
// The canonical lane count L of exact-mode reductions (docs/exact-mode.md).
ONEMODEL_API int CanonicalLanes();
// Which kernels the target `isa` ("" = best) provides: a "[onemodel] target: ..." line,
// then one line per kernel naming its provider (what ONEMODEL_VERBOSE=1 prints).
ONEMODEL_API std::string DescribeKernels(const std::string& isa = "");

// Frees the tensor buffers the library keeps for reuse between runs (those of 64 KiB and
// more, shared by all sessions; ONEMODEL_PROFILE shows their total): for a process that
// has released its sessions and wants the memory back. Buffers in use are not touched.
ONEMODEL_API void ReleaseCachedBuffers();
// The bytes of those buffers, in use or waiting for reuse.
ONEMODEL_API size_t CachedBufferBytes();

// The benchmark that chose L: the canonical L-lane float sum for L = 16, 32, 64, 128 on
// target `isa`, compared bit for bit with the reference kernel.
struct LaneBenchRow {
  std::string target;
  int lanes = 0;
  size_t n = 0;
  double ns_per_element = 0;
  bool equals_reference = false;
};
ONEMODEL_API std::vector<LaneBenchRow> BenchCanonicalSums(const std::string& isa, size_t n, int reps);

// The register-only peak of exact mode's float arithmetic on target `isa` ("" the best),
// one thread: independent chains of a separate multiply and add on whole vectors, no
// memory traffic; the best of `reps` timings of about 50 ms each. What a kernel's
// GFLOP/s is compared with (tools/bench.mjs).
struct MulAddPeak {
  std::string target;
  int lanes = 0;  // f32 lanes per vector
  double gflops = 0;
};
ONEMODEL_API MulAddPeak MeasureMulAddPeak(const std::string& isa, int reps);

// -------------------------------------------------------------- template bodies

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, std::vector<int64_t> shape) {
  static_assert(!std::is_same<T, bool>::value, "std::vector<bool> has no contiguous storage: use uint8_t and kBool");
  return FromBytes(ElementTypeOf<T>::value, std::move(shape), values.data(), values.size() * sizeof(T));
}

}  // namespace onemodel
