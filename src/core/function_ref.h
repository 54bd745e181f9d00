// FunctionRef<R(A...)>: a non-owning reference to a callable (a lambda, a function, a
// std::function), two pointers wide. Unlike std::function it never allocates, so the
// kernels' many "split this loop over the threads" calls take nothing from the heap. It
// must not outlive what it refers to: it is for parameters only.
#pragma once

#include <type_traits>
#include <utility>

namespace onemodel::impl {

template <class Sig>
class FunctionRef;

template <class R, class... A>
class FunctionRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                              std::is_invocable_r_v<R, F&, A...>>>
  FunctionRef(F&& f)  // NOLINT: implicit by design, as std::function
      : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))), call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
        }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

}  // namespace onemodel::impl
