#pragma once
// IntArrayRef: a non-owning view of int64 values; SmallVec: a vector with inline storage,
// so the sizes and strides of tensors up to 5-d never touch the heap.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "ember/core/macros.h"

// Sanitizer builds check every index into sizes/strides: a dim wrapped for a 0-d tensor (0 or -1)
// read past the end of its (empty) sizes. The read lands in a DimVector's inline buffer, which ASan
// cannot see, so the check is explicit. Release builds index directly.
#ifdef EMBER_BOUNDS_CHECKS
#include <cstdio>
#include <cstdlib>
#define EMBER_INDEX_CHECK(i, n)                                                                        \
  do {                                                                                                 \
    if ((i) >= (n)) {                                                                                  \
      std::fprintf(stderr, "ember: index %zu out of bounds for a size list of %zu\n", size_t(i), size_t(n)); \
      std::abort();                                                                                    \
    }                                                                                                  \
  } while (0)
#else
#define EMBER_INDEX_CHECK(i, n) ((void)0)
#endif

namespace ember {

// A braced list or a single value converts to a view of a temporary that dies at the end of the full
// expression. As an argument that is exactly long enough (t.view({2, 3}), ember::zeros({2, 3})), which
// is why the conversion stays implicit; a named IntArrayRef built from one dangles:
//   IntArrayRef s = {2, 3};  use(s);     // s points at a dead array: hold sizes in a DimVector instead
// C++ gives both forms the same initialization, so no constructor can tell them apart. The guards:
// - assigning a braced list (s = {2, 3}) never has a safe reading and does not compile;
// - the constructors are EMBER_LIFETIME_BOUND: clang reports a local or member that outlives the list;
// - tools/lint/check_array_ref.py (a ctest) rejects such declarations in Ember's sources for GCC,
//   which has no such attribute, and ASan builds report any use as stack-use-after-scope.
// An owning view (inline storage for short lists) would remove the case too, but every sizes() call
// would return 40+ bytes through memory instead of two registers.
class IntArrayRef {
 public:
  IntArrayRef() = default;
  IntArrayRef(const int64_t* data, size_t n) : data_(data), size_(n) {}
  IntArrayRef(const std::vector<int64_t>& v EMBER_LIFETIME_BOUND) : data_(v.data()), size_(v.size()) {}
  // GCC warns here about every braced-list view, the safe arguments included: the warning is about the
  // design above, so it is off for this one constructor.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  IntArrayRef(std::initializer_list<int64_t> il EMBER_LIFETIME_BOUND) : data_(il.begin()), size_(il.size()) {}
#pragma GCC diagnostic pop
  IntArrayRef(const int64_t& single EMBER_LIFETIME_BOUND) : data_(&single), size_(1) {}
  IntArrayRef(const IntArrayRef&) = default;
  IntArrayRef& operator=(const IntArrayRef&) = default;
  IntArrayRef& operator=(std::initializer_list<int64_t>) = delete;  // s = {2, 3} would dangle at once
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const {
    EMBER_INDEX_CHECK(i, size_);
    return data_[i];
  }
  int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }
  bool equals(IntArrayRef o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

inline bool operator==(IntArrayRef a, IntArrayRef b) { return a.equals(b); }
inline bool operator!=(IntArrayRef a, IntArrayRef b) { return !a.equals(b); }
inline std::ostream& operator<<(std::ostream& os, IntArrayRef a) {
  os << "[";
  for (size_t i = 0; i < a.size(); i++) os << (i ? ", " : "") << a[i];
  return os << "]";
}

template <size_t N>
class SmallVec {
 public:
  SmallVec() = default;
  explicit SmallVec(size_t n, int64_t fill = 0) { resize(n, fill); }
  SmallVec(IntArrayRef r) { assign(r); }
  SmallVec(std::initializer_list<int64_t> il) { assign(IntArrayRef(il.begin(), il.size())); }
  SmallVec(const SmallVec& o) { assign(o); }
  SmallVec& operator=(const SmallVec& o) { if (this != &o) assign(o); return *this; }
  SmallVec(SmallVec&& o) noexcept { steal(o); }
  SmallVec& operator=(SmallVec&& o) noexcept { if (this != &o) { release(); steal(o); } return *this; }
  ~SmallVec() { release(); }

  void assign(IntArrayRef r) {
    reserve(r.size());
    if (r.size()) std::memmove(data_, r.data(), r.size() * sizeof(int64_t));
    size_ = r.size();
  }
  void resize(size_t n, int64_t fill = 0) {
    reserve(n);
    for (size_t i = size_; i < n; i++) data_[i] = fill;
    size_ = n;
  }
  void push_back(int64_t v) { reserve(size_ + 1); data_[size_++] = v; }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    std::memmove(data_ + pos + 1, data_ + pos, (size_ - pos) * sizeof(int64_t));
    data_[pos] = v;
    size_++;
  }
  void erase(size_t pos) {
    std::memmove(data_ + pos, data_ + pos + 1, (size_ - pos - 1) * sizeof(int64_t));
    size_--;
  }
  void pop_back() { size_--; }
  void clear() { size_ = 0; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) {
    EMBER_INDEX_CHECK(i, size_);
    return data_[i];
  }
  int64_t operator[](size_t i) const {
    EMBER_INDEX_CHECK(i, size_);
    return data_[i];
  }
  int64_t* begin() { return data_; }
  int64_t* end() { return data_ + size_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t& back() { return data_[size_ - 1]; }
  operator IntArrayRef() const { return IntArrayRef(data_, size_); }
  IntArrayRef ref() const { return IntArrayRef(data_, size_); }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

 private:
  void reserve(size_t n) {
    if (n <= cap_) return;
    size_t cap = std::max(n, cap_ * 2);
    int64_t* p = new int64_t[cap];
    if (size_) std::memcpy(p, data_, size_ * sizeof(int64_t));
    release();
    data_ = p;
    cap_ = cap;
  }
  void release() {
    if (data_ != inline_) delete[] data_;
    data_ = inline_;
    cap_ = N;
  }
  void steal(SmallVec& o) {
    if (o.data_ == o.inline_) {
      data_ = inline_;
      cap_ = N;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(int64_t));
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }
  int64_t inline_[N];
  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

using DimVector = SmallVec<5>;

[[noreturn]] EMBER_API void throw_numel_overflow();  // RuntimeError "numel: integer multiplication overflow"

// The product of sizes; a product that does not fit in int64 raises (see core/checked_math.h).
inline int64_t prod(IntArrayRef r) {
  int64_t p = 1;
  for (int64_t v : r)
    if (__builtin_mul_overflow(p, v, &p)) throw_numel_overflow();
  return p;
}

}  // namespace ember
