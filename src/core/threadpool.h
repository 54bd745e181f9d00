// A fixed pool of worker threads. Work is split into contiguous chunks of independent
// outputs; which thread computes a chunk never changes what it computes, so the thread
// count changes speed, never bits (exact-contract section 3).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>

#include "core/function_ref.h"
#include <mutex>
#include <thread>
#include <vector>

namespace onemodel::impl {

class ThreadPool {
 public:
  // threads >= 1; the calling thread is one of them. Builds without thread support
  // (wasm without pthreads) run everything on the caller and report 1.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // Calls fn(begin, end) over contiguous chunks covering [0, n), each at least `grain`
  // long (except when n < grain), on up to threads() threads; returns when all are
  // done. An exception thrown by fn is rethrown here (the first one). Calls from
  // several threads take turns; a call made from inside fn runs inline on its thread.
  void ParallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);

  // Returns the default thread count: the number of hardware threads (at least 1; 1
  // in builds without threads).
  static int DefaultThreads();

 private:
  void WorkerLoop(int index);
  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::mutex call_mu_;  // one ParallelFor at a time
  std::condition_variable cv_work_, cv_done_;
  const FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunks_ = 0, next_chunk_ = 0, done_chunks_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  // Workers spin on this (generation_, published) for a short while before sleeping,
  // so back-to-back operators do not pay a wake-up each; only when the pool has no
  // more threads than the machine has cores.
  std::atomic<uint64_t> published_{0};
  std::atomic<bool> stopping_{false};
  bool spin_ = false;
  std::exception_ptr error_;
};

}  // namespace onemodel::impl
