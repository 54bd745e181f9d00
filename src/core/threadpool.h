// A pool of worker threads. Work is split into contiguous chunks of independent outputs;
// which thread computes a chunk never changes what it computes, so the thread count
// changes speed, never bits (exact-contract section 3).
//
// A ThreadPool is a thread count over a set of workers. Natively each pool owns its
// workers. In the threaded wasm build (Emscripten pthreads) a page or process has a fixed
// number of Web Workers, made when the module starts (the loader's numThreads - 1); every
// pool made by Create() shares them, with a thread count capped at their number + 1.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>

#include "core/function_ref.h"
#include <mutex>
#include <thread>
#include <vector>

namespace onemodel::impl {

class ThreadPool {
 public:
  // threads >= 1; the calling thread is one of them. Natively a pool with its own
  // workers; in the threaded wasm build one over the module's shared workers, with
  // min(threads, MaxThreads()) threads; builds without thread support (wasm without
  // pthreads) run everything on the caller and report 1.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The pool a session uses (as the constructor makes it).
  static std::shared_ptr<ThreadPool> Create(int threads);

  int threads() const { return threads_; }

  // Calls fn(begin, end) over contiguous chunks covering [0, n), each at least `grain`
  // long (except when n < grain), on up to threads() threads; returns when all are
  // done. An exception thrown by fn is rethrown here (the first one). Calls from
  // several threads take turns; a call made from inside fn runs inline on its thread.
  void ParallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);

  // The default thread count: the number of hardware threads (at least 1); in the
  // threaded wasm build the number of shared workers + 1; 1 in builds without threads.
  static int DefaultThreads();
  // The most threads a pool can have: unbounded (INT32_MAX) natively, the shared
  // workers + 1 in the threaded wasm build, 1 without threads.
  static int MaxThreads();

  // The workers and the current call's chunks (threadpool.cpp).
  class Workers;

 private:
  int threads_;
  std::shared_ptr<Workers> workers_;
};

}  // namespace onemodel::impl
