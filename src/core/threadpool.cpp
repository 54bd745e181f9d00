// Thread pool (see threadpool.h). Chunks are fixed by (n, grain, threads) alone.
#include "core/threadpool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "core/fpenv.h"
#include "core/tensor.h"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define ONEMODEL_NO_THREADS 1
#elif defined(__EMSCRIPTEN__)
#define ONEMODEL_WASM_THREADS 1
#include <emscripten/emscripten.h>
#endif

namespace onemodel::impl {
namespace {
// Set while a thread runs a chunk: nested ParallelFor calls then run inline.
thread_local bool tl_in_chunk = false;
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
// Chunks run without the calling thread's tensor allocator (a memory plan follows the
// calling thread's allocations, which must not depend on who runs which chunk).
struct ChunkScope {
  bool saved = tl_in_chunk;
  TensorAllocator* saved_alloc = SetThreadTensorAllocator(nullptr);
  ChunkScope() { tl_in_chunk = true; }
  ~ChunkScope() {
    tl_in_chunk = saved;
    SetThreadTensorAllocator(saved_alloc);
  }
};
}  // namespace

// The worker threads (threads - 1 of them: the caller is the other) and the one call
// they are serving. Calls from several pools sharing them take turns.
class ThreadPool::Workers {
 public:
  explicit Workers(int threads);
  ~Workers();
  int threads() const { return threads_; }
  // Runs fn over `chunks` (2 <= chunks <= threads()) equal parts of [0, n).
  void Run(int64_t n, int64_t chunks, const FunctionRef<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop(int index);
  // Runs chunk c of the current call (claimed by this thread, mu_ not held).
  void RunChunk(int64_t c, int64_t n, int64_t chunks, const FunctionRef<void(int64_t, int64_t)>& fn);
  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::mutex call_mu_;  // one call at a time
  std::condition_variable cv_work_, cv_done_;
  const FunctionRef<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunks_ = 0;
  // Chunk c belongs to thread c (the caller is thread 0, worker i thread i), so that
  // consecutive operators split alike find their chunk's data in their own core's
  // cache; claimed_[c] is set (an atomic exchange) by whoever starts it: its owner, or
  // the caller once its own chunk is done and the owner has not started (a late or
  // sleeping worker). Which thread runs a chunk never changes its bits.
  std::unique_ptr<std::atomic<int>[]> claimed_;  // int: RISC-V has no 1-byte atomic exchange without libatomic
  // Counted without the lock: the caller polls it, and a worker finishing the last chunk
  // takes mu_ only to wake a caller that stopped polling (caller_waiting_). A call thus
  // costs one lock by the caller (publishing) and one by each worker (reading the call).
  std::atomic<int64_t> done_chunks_{0};
  std::atomic<bool> caller_waiting_{false};
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

namespace {
#if defined(ONEMODEL_WASM_THREADS)
// The Web Workers the module was started with (js/loader.mjs sets Module.onemodelWorkers
// to numThreads - 1 and Emscripten's PTHREAD_POOL_SIZE reads it): pthread_create on the
// main browser thread cannot wait for a new Worker to start, so a pool never asks for
// more than these.
int WasmSharedThreads() {
  static const int n = 1 + EM_ASM_INT({ return Module['onemodelWorkers'] | 0; });
  return n;
}
std::shared_ptr<ThreadPool::Workers> SharedWorkers() {
  // Made once, never destroyed (the Workers outlive every session; the process or page
  // ends them).
  static auto* shared = new std::shared_ptr<ThreadPool::Workers>(
      WasmSharedThreads() > 1 ? std::make_shared<ThreadPool::Workers>(WasmSharedThreads()) : nullptr);
  return *shared;
}
#endif
}  // namespace

int ThreadPool::DefaultThreads() {
#if defined(ONEMODEL_NO_THREADS)
  return 1;
#elif defined(ONEMODEL_WASM_THREADS)
  return WasmSharedThreads();
#else
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? int(hw) : 1;
#endif
}

int ThreadPool::MaxThreads() {
#if defined(ONEMODEL_NO_THREADS)
  return 1;
#elif defined(ONEMODEL_WASM_THREADS)
  return WasmSharedThreads();
#else
  return INT32_MAX;
#endif
}

ThreadPool::ThreadPool(int threads) : threads_(threads < 1 ? 1 : threads) {
#if defined(ONEMODEL_NO_THREADS)
  threads_ = 1;
#elif defined(ONEMODEL_WASM_THREADS)
  threads_ = std::min(threads_, MaxThreads());
  if (threads_ > 1) workers_ = SharedWorkers();
#else
  if (threads_ > 1) workers_ = std::make_shared<Workers>(threads_);
#endif
}

ThreadPool::~ThreadPool() = default;

std::shared_ptr<ThreadPool> ThreadPool::Create(int threads) { return std::make_shared<ThreadPool>(threads); }

void ThreadPool::ParallelFor(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  int64_t chunks = (n + grain - 1) / grain;
  if (chunks > threads_) chunks = threads_;
  if (chunks <= 1 || tl_in_chunk || !workers_) {
    FpEnvGuard env;
    ChunkScope scope;
    fn(0, n);
    return;
  }
  workers_->Run(n, chunks, fn);
}

ThreadPool::Workers::Workers(int threads) : threads_(threads) {
  const unsigned hw = std::thread::hardware_concurrency();
  spin_ = hw != 0 && unsigned(threads_) <= hw;
  claimed_.reset(new std::atomic<int>[size_t(threads_)]);
  for (int i = 0; i < threads_; ++i) claimed_[size_t(i)].store(0, std::memory_order_relaxed);
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::Workers::~Workers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    stopping_.store(true);
  }
  cv_work_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Workers::RunChunk(int64_t c, int64_t n, int64_t chunks,
                                   const FunctionRef<void(int64_t, int64_t)>& fn) {
  try {
    FpEnvGuard env;
    ChunkScope scope;
    fn(n * c / chunks, n * (c + 1) / chunks);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_) error_ = std::current_exception();
  }
  // The last chunk wakes the caller if it sleeps. seq_cst on both sides (this increment
  // then the flag's load; the caller's flag store then the count's load): at least one
  // of the two sees the other, so no wake-up is lost.
  if (done_chunks_.fetch_add(1, std::memory_order_seq_cst) + 1 == chunks &&
      caller_waiting_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_done_.notify_all();
  }
}

void ThreadPool::Workers::Run(int64_t n, int64_t chunks, const FunctionRef<void(int64_t, int64_t)>& fn) {
  std::lock_guard<std::mutex> call(call_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    for (int i = 1; i < threads_; ++i) claimed_[size_t(i)].store(0, std::memory_order_relaxed);
    claimed_[0].store(1, std::memory_order_relaxed);  // the caller's own chunk
    done_chunks_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    ++generation_;
  }
  // Published once mu_ is free: a polling worker then takes it at once (glibc's mutex
  // sleeps in the kernel when it finds it held, a wake-up costing several microseconds).
  published_.store(generation_, std::memory_order_release);
  cv_work_.notify_all();
  RunChunk(0, n, chunks, fn);
  // Then the chunks whose owners have not started them.
  for (int64_t c = 1; c < chunks; ++c) {
    if (claimed_[size_t(c)].exchange(1, std::memory_order_acq_rel)) continue;
    RunChunk(c, n, chunks, fn);
  }
  if (spin_) {
    // Up to 200 us of polling for the workers' last chunks before sleeping.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
    for (int i = 0; done_chunks_.load(std::memory_order_acquire) != chunks; ++i) {
      CpuRelax();
      if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
    }
  }
  std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
  if (done_chunks_.load(std::memory_order_acquire) != chunks) {
    lock.lock();
    caller_waiting_.store(true, std::memory_order_seq_cst);
    cv_done_.wait(lock, [&] { return done_chunks_.load(std::memory_order_seq_cst) == chunks; });
    caller_waiting_.store(false, std::memory_order_relaxed);
  }
  // Every chunk is done: no worker reads fn or writes error_ for this call any more (a
  // late worker finds its chunk claimed). The next call resets the fields under mu_.
  if (error_) {
    if (!lock.owns_lock()) lock.lock();
    std::exception_ptr e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::Workers::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    if (spin_) {
      // Up to 2 ms of polling for the next call (without the lock) before sleeping.
      const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2000);
      for (int i = 0;; ++i) {
        if (published_.load(std::memory_order_acquire) != seen || stopping_.load(std::memory_order_relaxed)) break;
        if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) break;
        CpuRelax();
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_work_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    // This worker's own chunk of the call, unless the call has none for it, is over, or
    // the caller took it.
    if (!fn_ || index >= chunks_ || claimed_[size_t(index)].exchange(1, std::memory_order_acq_rel)) continue;
    const int64_t n = n_, chunks = chunks_;
    const auto* fn = fn_;
    lock.unlock();
    RunChunk(index, n, chunks, *fn);
  }
}

}  // namespace onemodel::impl
