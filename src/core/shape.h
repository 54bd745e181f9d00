// Shapes: a tensor's dimensions, held inline up to kInline dimensions (what nearly every
// model's tensors have), on the heap beyond. A run's shapes (every output's, every
// operator's own) then take nothing from the heap, which keeps steady-state runs free
// of allocations. The interface is std::vector<int64_t>'s subset the code uses, with
// conversions both ways for the APIs that take a vector (attributes, index lists).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace onemodel::impl {

class Shape {
 public:
  static constexpr size_t kInline = 6;
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  Shape() = default;
  explicit Shape(size_t n, int64_t v = 0) { assign(n, v); }
  Shape(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit by design
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { MoveFrom(o); }
  ~Shape() { Free(); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      Free();
      MoveFrom(o);
    }
    return *this;
  }
  Shape& operator=(const std::vector<int64_t>& v) {
    assign(v.begin(), v.end());
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> l) {
    assign(l.begin(), l.end());
    return *this;
  }
  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return cap_; }
  int64_t* data() { return ptr_; }
  const int64_t* data() const { return ptr_; }
  int64_t& operator[](size_t i) { return ptr_[i]; }
  const int64_t& operator[](size_t i) const { return ptr_[i]; }
  int64_t& at(size_t i) { return ptr_[i]; }
  const int64_t& at(size_t i) const { return ptr_[i]; }
  // front()/back() of a rank-0 shape are kShapeMismatch errors (an operator given a
  // scalar where it needs a dimension), never a read before the array.
  int64_t& front() { return ptr_[NonEmpty()]; }
  const int64_t& front() const { return ptr_[NonEmpty()]; }
  int64_t& back() { return ptr_[NonEmpty() + size_ - 1]; }
  const int64_t& back() const { return ptr_[NonEmpty() + size_ - 1]; }
  iterator begin() { return ptr_; }
  iterator end() { return ptr_ + size_; }
  const_iterator begin() const { return ptr_; }
  const_iterator end() const { return ptr_ + size_; }
  const_iterator cbegin() const { return ptr_; }
  const_iterator cend() const { return ptr_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  void reserve(size_t n) {
    if (n <= cap_) return;
    int64_t* p = new int64_t[n];
    if (size_) std::memcpy(p, ptr_, size_ * sizeof(int64_t));
    Free();
    ptr_ = p;
    cap_ = n;
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t v = 0) {
    if (n > cap_) reserve(std::max(n, 2 * cap_));
    for (size_t i = size_; i < n; ++i) ptr_[i] = v;
    size_ = n;
  }
  void assign(size_t n, int64_t v) {
    size_ = 0;
    resize(n, v);
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  void assign(It first, It last) {
    // Through a new shape: the source may be this shape's own elements.
    Shape t;
    t.reserve(size_t(std::distance(first, last)));
    for (; first != last; ++first) t.push_back(*first);
    *this = std::move(t);
  }
  void push_back(int64_t v) {
    if (size_ == cap_) reserve(2 * cap_);
    ptr_[size_++] = v;
  }
  template <class... A>
  int64_t& emplace_back(A... a) {
    push_back(int64_t(a...));
    return back();
  }
  void pop_back() { --size_; }
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t(1), v); }
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    const size_t at = size_t(pos - ptr_);
    Open(at, n);
    std::fill(ptr_ + at, ptr_ + at + n, v);
    return ptr_ + at;
  }
  template <class It, class = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = size_t(pos - ptr_);
    const Shape src(first, last);  // the source may be this shape's own elements
    Open(at, src.size());
    std::copy(src.begin(), src.end(), ptr_ + at);
    return ptr_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> l) { return insert(pos, l.begin(), l.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t a = size_t(first - ptr_), b = size_t(last - ptr_);
    std::memmove(ptr_ + a, ptr_ + b, (size_ - b) * sizeof(int64_t));
    size_ -= b - a;
    return ptr_ + a;
  }
  void swap(Shape& o) {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const std::vector<int64_t>& a, const Shape& b) { return b == a; }
  friend bool operator!=(const Shape& a, const std::vector<int64_t>& b) { return !(a == b); }
  friend bool operator!=(const std::vector<int64_t>& a, const Shape& b) { return !(b == a); }
  friend bool operator<(const Shape& a, const Shape& b) {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  size_t NonEmpty() const {
    if (size_ == 0) ThrowRankZero();
    return 0;
  }
  [[noreturn]] static void ThrowRankZero();
  // Makes room for n elements at index at (elements from there move up).
  void Open(size_t at, size_t n) {
    if (size_ + n > cap_) reserve(std::max(size_ + n, 2 * cap_));
    std::memmove(ptr_ + at + n, ptr_ + at, (size_ - at) * sizeof(int64_t));
    size_ += n;
  }
  void Free() {
    if (ptr_ != inline_) delete[] ptr_;
    ptr_ = inline_;
    cap_ = kInline;
  }
  void MoveFrom(Shape& o) {
    if (o.ptr_ == o.inline_) {
      ptr_ = inline_;
      cap_ = kInline;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(int64_t));
    } else {
      ptr_ = o.ptr_;
      cap_ = o.cap_;
      o.ptr_ = o.inline_;
      o.cap_ = kInline;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t* ptr_ = inline_;
  size_t size_ = 0;
  size_t cap_ = kInline;
  int64_t inline_[kInline];
};

}  // namespace onemodel::impl
