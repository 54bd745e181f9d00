// Memory plans (see memory_plan.h).
#include "runtime/memory_plan.h"

#include <algorithm>
#include <cstring>
#include <atomic>
#include <cstddef>
#include <new>
#include <map>

namespace onemodel::impl {
namespace {
constexpr size_t kAlign = 64;
// Buffers a plan places at most (the largest ones of a run); placing is quadratic in it.
constexpr size_t kMaxPlanned = 16384;
constexpr int kMaxFailures = 3;
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

struct MemoryPlanner::Arena {
  Arena(size_t n, size_t slices) : bytes(n), mem(new uint8_t[n + kAlign]) {
    // Touched once here (the run that made the plan, already the slow one), so that the
    // first run following the plan does not take the pages' first-touch faults
    // (measured on a Zen 5 VM: 1.4 ms for mobilenet_v3_large's 3.8 MiB, a third of a run).
    std::memset(mem.get(), 0, n + kAlign);
    base = mem.get() + (kAlign - reinterpret_cast<uintptr_t>(mem.get()) % kAlign) % kAlign;
    live.reserve(slices);  // a plan's run never grows it (no heap in steady state)
  }
  // The slice [offset, offset + n) when no buffer in use overlaps it, else null.
  uint8_t* Take(size_t offset, size_t n) {
    std::lock_guard<std::mutex> lock(mu);
    // Slices in use, sorted by offset and disjoint: the first starting after offset
    // must start at or after its end, the one before must end at or before offset.
    auto it = std::upper_bound(live.begin(), live.end(), offset,
                               [](size_t o, const std::pair<size_t, size_t>& s) { return o < s.first; });
    if (it != live.end() && it->first < offset + n) return nullptr;
    if (it != live.begin() && std::prev(it)->second > offset) return nullptr;
    live.insert(it, {offset, offset + n});
    return base + offset;
  }
  void Give(size_t offset) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = std::lower_bound(live.begin(), live.end(), offset,
                               [](const std::pair<size_t, size_t>& s, size_t o) { return s.first < o; });
    if (it != live.end() && it->first == offset) live.erase(it);
  }
  size_t bytes;
  std::unique_ptr<uint8_t[]> mem;
  uint8_t* base = nullptr;
  std::mutex mu;
  std::vector<std::pair<size_t, size_t>> live;  // [offset, end) of the slices in use, by offset
};

// A run's allocations in order. Records are reused from run to run (MemoryPlanner keeps
// the ones no buffer refers to any more), and their entries live in chunks that never
// move or shrink, so recording a run like the last one takes nothing from the heap.
struct MemoryPlanner::Record {
  struct Alloc {
    size_t bytes = 0;
    int64_t t_alloc = 0;
    std::atomic<int64_t> t_free{-1};
  };
  static constexpr size_t kChunk = 256;
  std::atomic<int64_t> clock{0};
  std::vector<std::unique_ptr<Alloc[]>> chunks;
  size_t count = 0;

  Alloc& Add(size_t bytes) {
    if (count / kChunk == chunks.size()) chunks.emplace_back(new Alloc[kChunk]);
    Alloc& a = chunks[count / kChunk][count % kChunk];
    ++count;
    a.bytes = bytes;
    a.t_alloc = clock.fetch_add(1);
    a.t_free.store(-1);
    return a;
  }
  const Alloc& at(size_t k) const { return chunks[k / kChunk][k % kChunk]; }
  size_t size() const { return count; }
  void Reset() {
    clock.store(0);
    count = 0;
  }
};

// Fixed-size blocks for the control blocks of the buffers a run hands out (shared_ptr's
// allocator): freed blocks wait in a list for the next run. Held by every block's
// allocator, so it outlives the planner while buffers it served are alive.
struct MemoryPlanner::BlockPool {
  static constexpr size_t kPerChunk = 64;
  void* Get(size_t n) {
    std::lock_guard<std::mutex> lock(mu);
    if (block == 0) block = (n + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) * alignof(std::max_align_t);
    if (n > block) return ::operator new(n);  // not the size this pool serves
    if (!free_list) {
      // operator new[]'s storage suits any fundamental alignment; blocks are multiples of it.
      chunks.emplace_back(new unsigned char[kPerChunk * block]);
      unsigned char* base = chunks.back().get();
      for (size_t i = 0; i < kPerChunk; ++i) Put(base + i * block);
    }
    void* p = free_list;
    free_list = *static_cast<void**>(p);
    return p;
  }
  void Release(void* p, size_t n) {
    if (n > block) {
      ::operator delete(p);
      return;
    }
    std::lock_guard<std::mutex> lock(mu);
    Put(p);
  }
  void Put(void* p) {
    *static_cast<void**>(p) = free_list;
    free_list = p;
  }
  std::mutex mu;
  size_t block = 0;
  void* free_list = nullptr;
  std::vector<std::unique_ptr<unsigned char[]>> chunks;
};

namespace {
// The deleter of every buffer a run's calling thread allocates: stamps the free in the
// record, then returns the slice to the arena or the buffer to its own owner.
struct PlanDeleter {
  std::shared_ptr<MemoryPlanner::Record> record;
  MemoryPlanner::Record::Alloc* alloc;
  std::shared_ptr<MemoryPlanner::Arena> arena;  // set for arena slices
  size_t offset = 0;
  std::shared_ptr<uint8_t> inner;  // set for buffers from elsewhere
  void operator()(uint8_t*) {
    alloc->t_free.store(record->clock.fetch_add(1));
    if (arena) arena->Give(offset);
    inner.reset();
  }
};

// shared_ptr's allocator for those deleters' control blocks (MemoryPlanner::BlockPool).
template <class T>
struct PoolAllocator {
  using value_type = T;
  std::shared_ptr<MemoryPlanner::BlockPool> pool;
  explicit PoolAllocator(std::shared_ptr<MemoryPlanner::BlockPool> p) : pool(std::move(p)) {}
  template <class U>
  PoolAllocator(const PoolAllocator<U>& o) : pool(o.pool) {}
  T* allocate(size_t n) { return static_cast<T*>(pool->Get(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { pool->Release(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>& o) const {
    return pool == o.pool;
  }
  template <class U>
  bool operator!=(const PoolAllocator<U>& o) const {
    return pool != o.pool;
  }
};
}  // namespace

MemoryPlanner::MemoryPlanner(bool enabled) : enabled_(enabled), blocks_(std::make_shared<BlockPool>()) {}
MemoryPlanner::~MemoryPlanner() = default;

bool MemoryPlanner::Begin(const std::string& key, std::optional<RunScope>* scope) {
  if (!enabled_) return false;
  std::unique_lock<std::mutex> lock(run_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (key == disabled_key_) return false;
  scope->emplace(RunScope::Token{}, this, std::move(lock), key);
  return true;
}

MemoryPlanStats MemoryPlanner::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

MemoryPlanner::RunScope::RunScope(Token, MemoryPlanner* p, std::unique_lock<std::mutex> lock, const std::string& key)
    : planner_(p), lock_(std::move(lock)) {
  p->run_key_.assign(key);  // the planner is this run's until the scope ends
  // A record no buffer of an earlier run refers to any more, else a new one.
  for (auto& r : p->records_) {
    if (r.use_count() == 1) {
      record_ = r;
      break;
    }
  }
  if (record_) {
    record_->Reset();
  } else {
    record_ = std::make_shared<Record>();
    if (p->records_.size() < 4) p->records_.push_back(record_);
  }
  if (p->have_plan_ && p->key_ == key) {
    if (!p->arena_) p->arena_ = std::make_shared<Arena>(p->arena_bytes_, p->plan_.size());
    arena_ = p->arena_;
    plan_ = &p->plan_;
  }
  prev_ = SetThreadTensorAllocator(this);
}

MemoryPlanner::RunScope::~RunScope() { SetThreadTensorAllocator(prev_); }

std::shared_ptr<uint8_t> MemoryPlanner::RunScope::Allocate(size_t bytes) {
  const size_t k = record_->size();
  PlanDeleter d;
  d.record = record_;
  d.alloc = &record_->Add(bytes);
  uint8_t* p = nullptr;
  if (plan_ && !deviated_) {
    const Entry* e = k < plan_->size() ? &(*plan_)[k] : nullptr;
    if (!e || e->bytes != bytes) {
      deviated_ = true;
    } else if (e->offset >= 0) {
      p = arena_->Take(size_t(e->offset), bytes);
      if (p) {
        d.arena = arena_;
        d.offset = size_t(e->offset);
      } else {
        deviated_ = true;  // its slice is still held
      }
    }
  }
  if (p) {
    ++from_arena_;
  } else {
    d.inner = RecycledTensorBuffer(bytes, false);
    p = d.inner.get();
    ++elsewhere_;
  }
  return std::shared_ptr<uint8_t>(p, std::move(d), PoolAllocator<uint8_t>(planner_->blocks_));
}

void MemoryPlanner::RunScope::Finish() {
  if (finished_) return;
  finished_ = true;
  planner_->Finish(*this);
}

void MemoryPlanner::Finish(RunScope& run) {
  const Record& allocs = *run.record_;
  const bool replayed = run.plan_ && !run.deviated_ && allocs.size() == plan_.size();
  MemoryPlanStats st;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    st = stats_;
  }
  st.runs += 1;
  st.last_replayed = replayed;
  st.last_from_arena = run.from_arena_;
  st.last_elsewhere = run.elsewhere_;
  if (replayed) {
    failures_ = 0;
    st.disabled = false;
    // Buffers recycled before this plan was followed would otherwise wait unused; once
    // per plan, so shapes that alternate keep their recycled buffers.
    if (!trimmed_) {
      TrimRecycledTensorBuffers();
      trimmed_ = true;
    }
  } else {
    if (run.plan_)
      ++failures_;  // a plan for these shapes that the run left
    else
      failures_ = 0;
    // Place the buffers freed within the run: largest first, each at the lowest offset
    // that no buffer placed before it and alive at the same time occupies.
    struct Item {
      size_t k, bytes;
      int64_t t0, t1;
      size_t off = 0;
    };
    std::vector<Item> items;
    for (size_t k = 0; k < allocs.size(); ++k) {
      const int64_t t1 = allocs.at(k).t_free.load();
      if (t1 >= 0) items.push_back({k, AlignUp(allocs.at(k).bytes), allocs.at(k).t_alloc, t1});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.bytes > b.bytes; });
    if (items.size() > kMaxPlanned) items.resize(kMaxPlanned);
    std::vector<std::pair<size_t, size_t>> busy;
    size_t arena_bytes = 0, planned_bytes = 0;
    for (size_t i = 0; i < items.size(); ++i) {
      busy.clear();
      for (size_t j = 0; j < i; ++j) {
        if (items[j].t0 < items[i].t1 && items[i].t0 < items[j].t1)
          busy.push_back({items[j].off, items[j].off + items[j].bytes});
      }
      std::sort(busy.begin(), busy.end());
      size_t off = 0;
      for (const auto& [b, e] : busy) {
        if (b >= off + items[i].bytes) break;
        off = std::max(off, e);
      }
      items[i].off = off;
      arena_bytes = std::max(arena_bytes, off + items[i].bytes);
      planned_bytes += allocs.at(items[i].k).bytes;
    }
    // The floor any placement has: the most bytes alive at one moment.
    std::vector<std::pair<int64_t, int64_t>> events;  // (time, +-bytes)
    for (const Item& it : items) {
      events.push_back({it.t0, int64_t(it.bytes)});
      events.push_back({it.t1, -int64_t(it.bytes)});
    }
    std::sort(events.begin(), events.end());
    int64_t live = 0, peak = 0;
    for (const auto& [t, b] : events) peak = std::max(peak, live += b);
    st.peak_live_bytes = size_t(peak);
    plan_.assign(allocs.size(), Entry{});
    for (size_t k = 0; k < allocs.size(); ++k) plan_[k].bytes = allocs.at(k).bytes;
    for (const Item& it : items) plan_[it.k].offset = int64_t(it.off);
    key_ = run_key_;
    // The old arena lives on in its slices' owners. The new one is made with the plan, so
    // that the next run with these shapes follows it at full speed.
    arena_.reset();
    arena_bytes_ = arena_bytes;
    have_plan_ = true;
    trimmed_ = false;
    st.plans_built += 1;
    st.planned_buffers = items.size();
    st.planned_bytes = planned_bytes;
    st.arena_bytes = arena_bytes;
    st.disabled = false;
    if (failures_ >= kMaxFailures) {
      disabled_key_ = key_;
      plan_.clear();
      have_plan_ = false;
      st.disabled = true;
      st.arena_bytes = st.planned_buffers = st.planned_bytes = st.peak_live_bytes = 0;
    } else {
      arena_ = std::make_shared<Arena>(arena_bytes_, plan_.size());
    }
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_ = st;
}

}  // namespace onemodel::impl
