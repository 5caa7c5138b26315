#pragma once
// Intrusive reference counting (paper §5.5): the count lives in the object, so a tensor
// is freed the moment its last reference goes, with one atomic op per copy.
#include <atomic>
#include <cstdint>
#include <utility>

namespace ember {

class RefCounted {
 public:
  RefCounted() = default;
  RefCounted(const RefCounted&) = delete;
  RefCounted& operator=(const RefCounted&) = delete;
  virtual ~RefCounted() = default;
  void incref() const { refcount_.fetch_add(1, std::memory_order_relaxed); }
  void decref() const {
    if (refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  int64_t use_count() const { return refcount_.load(std::memory_order_relaxed); }

 private:
  mutable std::atomic<int64_t> refcount_{1};
};

// Owns one reference. make_intrusive creates an object with count 1 and adopts it.
template <class T>
class intrusive_ptr {
 public:
  intrusive_ptr() = default;
  intrusive_ptr(std::nullptr_t) {}
  static intrusive_ptr adopt(T* p) { intrusive_ptr r; r.p_ = p; return r; }
  static intrusive_ptr borrow(T* p) { if (p) p->incref(); return adopt(p); }
  intrusive_ptr(const intrusive_ptr& o) : p_(o.p_) { if (p_) p_->incref(); }
  intrusive_ptr(intrusive_ptr&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  intrusive_ptr(intrusive_ptr<U>&& o) noexcept : p_(o.release()) {}
  intrusive_ptr& operator=(const intrusive_ptr& o) { intrusive_ptr(o).swap(*this); return *this; }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept { intrusive_ptr(std::move(o)).swap(*this); return *this; }
  ~intrusive_ptr() { if (p_) p_->decref(); }
  void swap(intrusive_ptr& o) noexcept { std::swap(p_, o.p_); }
  void reset() { intrusive_ptr().swap(*this); }
  T* release() { T* p = p_; p_ = nullptr; return p; }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const intrusive_ptr& o) const { return p_ == o.p_; }
  bool operator!=(const intrusive_ptr& o) const { return p_ != o.p_; }
  int64_t use_count() const { return p_ ? p_->use_count() : 0; }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>::adopt(new T(std::forward<Args>(args)...));
}

}  // namespace ember
