/* OneModel's C ABI (docs/api.md): opaque handles, status codes with messages, explicit
 * free functions. No C++ exception crosses it: every function that can fail returns an
 * OmStatus, and om_last_error() gives the failed call's message on the calling thread.
 * Handles are not thread-safe objects except OmSession, whose om_session_run may be
 * called from several threads at once. Strings returned are owned by their handle and
 * valid while it lives, unless said otherwise. */
#ifndef ONEMODEL_ONEMODEL_C_H_
#define ONEMODEL_ONEMODEL_C_H_

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32) && defined(ONEMODEL_SHARED_LIBRARY)
#if defined(ONEMODEL_BUILDING)
#define OM_API __declspec(dllexport)
#else
#define OM_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define OM_API __attribute__((visibility("default")))
#else
#define OM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* OM_OK, or what went wrong: the values of onemodel::ErrorCode. */
typedef enum OmStatus {
  OM_OK = 0,
  OM_INVALID_ARGUMENT = 1,
  OM_INVALID_MODEL = 2,
  OM_UNSUPPORTED_OP = 3,
  OM_UNSUPPORTED_OPSET = 4,
  OM_TYPE_MISMATCH = 5,
  OM_SHAPE_MISMATCH = 6,
  OM_MISSING_INPUT = 7,
  OM_GRAPH_CYCLE = 8,
  OM_OUT_OF_RANGE = 9,
  OM_IO = 10,
  OM_UNSUPPORTED_ISA = 11,
  OM_INTERNAL = 12,
  OM_LIMIT_EXCEEDED = 13,
  OM_CANCELLED = 14,
  OM_OUT_OF_MEMORY = 15
} OmStatus;

/* ONNX's TensorProto.DataType numbering (onemodel::ElementType). */
typedef enum OmElementType {
  OM_UNDEFINED = 0,
  OM_FLOAT = 1,
  OM_UINT8 = 2,
  OM_INT8 = 3,
  OM_UINT16 = 4,
  OM_INT16 = 5,
  OM_INT32 = 6,
  OM_INT64 = 7,
  OM_STRING = 8,
  OM_BOOL = 9,
  OM_FLOAT16 = 10,
  OM_DOUBLE = 11,
  OM_UINT32 = 12,
  OM_UINT64 = 13,
  OM_COMPLEX64 = 14,
  OM_COMPLEX128 = 15,
  OM_BFLOAT16 = 16,
  OM_FLOAT8E4M3FN = 17,
  OM_FLOAT8E4M3FNUZ = 18,
  OM_FLOAT8E5M2 = 19,
  OM_FLOAT8E5M2FNUZ = 20,
  OM_UINT4 = 21,
  OM_INT4 = 22,
  OM_FLOAT4E2M1 = 23,
  OM_FLOAT8E8M0 = 24,
  OM_UINT2 = 25,
  OM_INT2 = 26
} OmElementType;

typedef struct OmSessionOptions OmSessionOptions;
typedef struct OmSession OmSession;
typedef struct OmTensor OmTensor;
typedef struct OmRunOptions OmRunOptions;

/* ------------------------------------------------------------------ errors, build */
OM_API const char* om_version(void);                /* "0.1.0" */
OM_API const char* om_status_name(OmStatus status); /* "invalid_model", ...; "ok" */
/* The message of the last call that failed on this thread ("<code>: <message>"), or ""
 * before any failure. Valid until the next failing call on this thread. */
OM_API const char* om_last_error(void);
/* The best target this build and CPU have ("avx512", "wasm128", ...): a static string. */
OM_API const char* om_best_target(void);

/* ------------------------------------------------------------------ session options */
OM_API OmStatus om_session_options_create(OmSessionOptions** out);
OM_API void om_session_options_free(OmSessionOptions* options);                     /* NULL is a no-op */
OM_API OmStatus om_session_options_set_mode(OmSessionOptions* o, const char* mode); /* "exact" | "fast" */
OM_API OmStatus om_session_options_set_threads(OmSessionOptions* o, int threads);   /* 0: every core */
OM_API OmStatus om_session_options_set_isa(OmSessionOptions* o, const char* isa);   /* "" or NULL: best */
OM_API OmStatus om_session_options_set_prepack(OmSessionOptions* o, int on);
// 0: the AVX-512 targets' GEMM tiles by the core's measured width; 256 or 512 forces them
// (SessionOptions::avx512_tile_bits; a bad value is an error at session creation).
OM_API OmStatus om_session_options_set_avx512_tile_bits(OmSessionOptions* o, int bits);
OM_API OmStatus om_session_options_set_memory_plan(OmSessionOptions* o, int on);
OM_API OmStatus om_session_options_disable_pass(OmSessionOptions* o, const char* pass);
OM_API OmStatus om_session_options_set_profiling(OmSessionOptions* o, int level); /* 0 off, 1 op type, 2 node */
OM_API OmStatus om_session_options_set_free_dimension(OmSessionOptions* o, const char* name, int64_t size);
/* A limit of SessionOptions by name: "max_model_bytes", "max_tensor_bytes",
 * "max_session_bytes", "max_graph_depth", "max_nodes" (0: no limit; docs/reliability.md).
 * Going over one is OM_LIMIT_EXCEEDED; an unknown name or a value out of range is
 * OM_INVALID_ARGUMENT. */
OM_API OmStatus om_session_options_set_limit(OmSessionOptions* o, const char* name, uint64_t value);
/* An external-data file in memory (SessionOptions::external_data): `path` is the location
 * the model's tensors name ("model.onnx.data"), data/size its bytes. The bytes are read
 * (and the ranges the weights use copied) when a session is created with these options:
 * keep them alive until then; after that the caller may free them. Looked up before the
 * model's folder (om_session_create) or instead of it (om_session_create_from_bytes). */
OM_API OmStatus om_session_options_add_external_data(OmSessionOptions* o, const char* path, const void* data,
                                                     size_t size);

/* ------------------------------------------------------------------------ sessions */
/* options may be NULL (the defaults: exact mode, every core, the best target). */
OM_API OmStatus om_session_create(const char* path, const OmSessionOptions* options, OmSession** out);
OM_API OmStatus om_session_create_from_bytes(const void* data, size_t size, const OmSessionOptions* options,
                                             OmSession** out);
OM_API void om_session_free(OmSession* session); /* NULL is a no-op */

OM_API size_t om_session_input_count(const OmSession* s);
OM_API size_t om_session_output_count(const OmSession* s);
/* NULL when i is out of range. */
OM_API const char* om_session_input_name(const OmSession* s, size_t i);
OM_API const char* om_session_output_name(const OmSession* s, size_t i);
/* A declared input's or output's element type and shape: *dims has *rank entries, -1 for
 * a dimension that is not fixed (om_session_*_dim_name names a symbolic one). A value
 * that is not a tensor, or has no declared shape, gives OM_UNDEFINED / rank 0 with
 * *has_shape 0. Any out pointer may be NULL. */
OM_API OmStatus om_session_input_info(const OmSession* s, size_t i, OmElementType* type, int* has_shape, size_t* rank,
                                      const int64_t** dims);
OM_API OmStatus om_session_output_info(const OmSession* s, size_t i, OmElementType* type, int* has_shape, size_t* rank,
                                       const int64_t** dims);
/* The symbolic name of dimension d ("" when it has none; NULL when out of range). */
OM_API const char* om_session_input_dim_name(const OmSession* s, size_t i, size_t d);
OM_API const char* om_session_output_dim_name(const OmSession* s, size_t i, size_t d);
/* The target the session's kernels were chosen for. */
OM_API const char* om_session_target(const OmSession* s);
/* The profile of the session's last finished run (om_session_options_set_profiling): the
 * lines ONEMODEL_PROFILE prints, "" when profiling is off or no run has finished. Valid
 * until the next call of this function on the calling thread. */
OM_API const char* om_session_last_profile(const OmSession* s);

/* Runs the session. inputs[k] is fed as input_names[k]. With output_names NULL, every
 * output is returned in graph order and n_outputs must be om_session_output_count(s);
 * else the named ones, in that order. Each outputs[k] receives a new tensor the caller
 * frees with om_tensor_free; on failure none is returned (all are set to NULL). Outputs
 * that are not tensors (sequences, optionals) are OM_TYPE_MISMATCH in this ABI. */
OM_API OmStatus om_session_run(const OmSession* s, const char* const* input_names, const OmTensor* const* inputs,
                               size_t n_inputs, const char* const* output_names, size_t n_outputs, OmTensor** outputs);

/* Run options: a terminate flag and a time limit. om_run_options_terminate may be called
 * from any thread while runs given these options are under way: they fail with
 * OM_CANCELLED at their next node or loop iteration (until om_run_options_reset). */
OM_API OmStatus om_run_options_create(OmRunOptions** out);
OM_API void om_run_options_free(OmRunOptions* o); /* NULL is a no-op; not while a run uses it */
OM_API OmStatus om_run_options_terminate(OmRunOptions* o);
OM_API OmStatus om_run_options_reset(OmRunOptions* o);
/* > 0: a run stops with OM_CANCELLED after this many milliseconds; 0: no limit. */
OM_API OmStatus om_run_options_set_time_limit_ms(OmRunOptions* o, double ms);
/* om_session_run under run options (NULL: none). */
OM_API OmStatus om_session_run_with_options(const OmSession* s, const OmRunOptions* run_options,
                                            const char* const* input_names, const OmTensor* const* inputs,
                                            size_t n_inputs, const char* const* output_names, size_t n_outputs,
                                            OmTensor** outputs);

/* ------------------------------------------------------------------------- tensors */
/* Zero-filled (strings: empty). dims may be NULL when rank is 0 (a scalar). */
OM_API OmStatus om_tensor_create(OmElementType type, const int64_t* dims, size_t rank, OmTensor** out);
/* A copy of `bytes` bytes at data (exactly the tensor's byte size). */
OM_API OmStatus om_tensor_create_copy(OmElementType type, const int64_t* dims, size_t rank, const void* data,
                                      size_t bytes, OmTensor** out);
/* A view of the caller's memory, which must outlive every run reading it (no copy). */
OM_API OmStatus om_tensor_create_view(OmElementType type, const int64_t* dims, size_t rank, void* data, size_t bytes,
                                      OmTensor** out);
/* A string tensor of `count` NUL-terminated strings (count: the shape's element count). */
OM_API OmStatus om_tensor_create_strings(const char* const* values, size_t count, const int64_t* dims, size_t rank,
                                         OmTensor** out);
OM_API void om_tensor_free(OmTensor* t); /* NULL is a no-op */

OM_API OmElementType om_tensor_type(const OmTensor* t);
OM_API size_t om_tensor_rank(const OmTensor* t);
OM_API const int64_t* om_tensor_dims(const OmTensor* t);
OM_API int64_t om_tensor_size(const OmTensor* t);     /* element count */
OM_API size_t om_tensor_byte_size(const OmTensor* t); /* 0 for strings */
OM_API const void* om_tensor_data(const OmTensor* t); /* NULL for strings */
/* Writable elements (a copy is made first if the elements are shared); NULL for strings. */
OM_API void* om_tensor_mutable_data(OmTensor* t);
/* String i of a string tensor and its length in bytes; NULL when t is not a string
 * tensor or i is out of range. */
OM_API const char* om_tensor_string(const OmTensor* t, int64_t i, size_t* length);

/* ------------------------------------------------------------------ hashes and files */
/* The exact-mode golden hash of the tensors in order: 64 hex digits and a NUL in out. */
OM_API OmStatus om_golden_hash(const OmTensor* const* tensors, size_t n, char out[65]);
/* A NumPy .npy file as a new tensor, and a tensor written as one. */
OM_API OmStatus om_npy_load(const char* path, OmTensor** out);
OM_API OmStatus om_npy_save(const char* path, const OmTensor* t);

#ifdef __cplusplus
}
#endif

#endif /* ONEMODEL_ONEMODEL_C_H_ */
