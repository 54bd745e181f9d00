// One object per thread for kernel and op scratch (ONEMODEL_PER_THREAD): what a
// function-local `thread_local` gives, except on MinGW-w64, where it is a pthread key.
// MinGW-w64's GCC keeps `thread_local` objects in emulated TLS (libgcc's emutls) and
// runs their destructors from a winpthreads key destructor that comes after emutls's
// own has freed their storage: every such destructor read freed memory at a thread's
// exit (a pool's worker, a session's end), and under load freed garbage (the windows
// cases row crashed in msvcrt's free). A key's destructor gets the object's address
// as its argument and reads no TLS. Elsewhere (glibc, Emscripten, macOS) `thread_local`
// destructors run before the storage goes, and stay. Types without a destructor
// (pointers, flags, counters) remain plain `thread_local` (tools/check_tree.py checks).
#pragma once
#if defined(__MINGW32__)
#include <pthread.h>

#include <new>
#endif

namespace onemodel::impl {

#if defined(__MINGW32__)
template <class T>
class PerThreadKey {
 public:
  PerThreadKey() {
    if (pthread_key_create(&key_, [](void* p) { delete static_cast<T*>(p); }) != 0) throw std::bad_alloc();
  }
  T& Get() {
    if (void* p = pthread_getspecific(key_)) return *static_cast<T*>(p);
    T* made = new T();
    if (pthread_setspecific(key_, made) != 0) {
      delete made;
      throw std::bad_alloc();
    }
    return *made;
  }

 private:
  pthread_key_t key_{};
};
#endif

// The calling thread's T for one call site (Site: a lambda's type, unique per site and
// per instantiation of the enclosing template, as a `thread_local` there would be).
template <class T, class Site>
T& PerThread(Site) {
#if defined(__MINGW32__)
  static PerThreadKey<T> key;  // lives to the process's end, as the keys' objects may
  return key.Get();
#else
  thread_local T value;
  return value;
#endif
}

}  // namespace onemodel::impl

// `auto& buf = ONEMODEL_PER_THREAD(ScratchVector<float>);` in place of
// `thread_local ScratchVector<float> buf;`.
#define ONEMODEL_PER_THREAD(...) ::onemodel::impl::PerThread<__VA_ARGS__>([] {})
