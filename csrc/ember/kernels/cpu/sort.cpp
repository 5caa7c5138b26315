// CPU kernels of sorting and selection (kernels/sort.h): a stable sort of indices per row, in which
// NaN orders after every number, as in PyTorch; median, mode and unique read that order.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ember/kernels/sort.h"
#include "ember/parallel/parallel.h"

namespace ember {
namespace {

template <class T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// An unsigned key whose order is the values' order as PyTorch sorts them: integers by value, floats
// with -0 == +0 and every NaN equal and above +inf. Descending order sorts ~key (NaN first), which
// keeps equal values in their original order, as a stable sort must.
template <class T>
uint64_t sort_key(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return uint64_t(v);
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    const U flip = std::is_signed_v<T> ? U(U(1) << (sizeof(T) * 8 - 1)) : U(0);
    return uint64_t(U(U(v) ^ flip));
  } else {
    if (v != v) return ~uint64_t(0);
    if (v == T(0)) v = T(0);  // -0 sorts as +0
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    U b;
    std::memcpy(&b, &v, sizeof b);
    const U sign = U(U(1) << (sizeof(T) * 8 - 1));
    return uint64_t((b & sign) ? U(~b) : U(b | sign));
  }
}

struct KeyIndex {
  uint64_t key;
  int64_t index;
};

// Stable LSD radix sort of (key, index) pairs on the bits where the keys differ (the range after
// subtracting the smallest key): a few linear passes instead of n log n indirect comparisons.
void radix_sort(std::vector<KeyIndex>& a, std::vector<KeyIndex>& tmp) {
  const size_t n = a.size();
  uint64_t lo = ~uint64_t(0), hi = 0;
  for (const auto& e : a) {
    lo = std::min(lo, e.key);
    hi = std::max(hi, e.key);
  }
  const uint64_t range = hi - lo;
  if (range == 0) return;
  for (auto& e : a) e.key -= lo;
  const int bits = 64 - __builtin_clzll(range);
  constexpr int kRadix = 11;
  tmp.resize(n);
  for (int shift = 0; shift < bits; shift += kRadix) {
    size_t count[(1 << kRadix) + 1] = {};
    for (const auto& e : a) count[((e.key >> shift) & ((1u << kRadix) - 1)) + 1]++;
    for (int i = 0; i < (1 << kRadix); i++) count[i + 1] += count[i];
    for (const auto& e : a) tmp[count[(e.key >> shift) & ((1u << kRadix) - 1)]++] = e;
    a.swap(tmp);
  }
}

template <class T>
std::vector<KeyIndex> keyed(const T* x, int64_t n, bool descending) {
  std::vector<KeyIndex> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) {
    uint64_t k = sort_key(x[i]);
    a[size_t(i)] = {descending ? ~k : k, i};
  }
  return a;
}

// Stable order of the n values at x (ascending; NaN last) or descending (NaN first).
template <class T>
void sort_indices(const T* x, int64_t n, bool descending, int64_t* idx) {
  std::vector<KeyIndex> a = keyed(x, n, descending);
  if (n < 64) {
    std::stable_sort(a.begin(), a.end(), [](const KeyIndex& p, const KeyIndex& q) { return p.key < q.key; });
  } else {
    std::vector<KeyIndex> tmp;
    radix_sort(a, tmp);
  }
  for (int64_t i = 0; i < n; i++) idx[i] = a[size_t(i)].index;
}

// The first k of that order (topk): a selection and a sort of k, O(n + k log k). Ties break by
// index, so the result is the stable sort's first k.
template <class T>
void select_indices(const T* x, int64_t n, int64_t k, bool largest, int64_t* idx) {
  auto less = [](const KeyIndex& p, const KeyIndex& q) { return p.key < q.key || (p.key == q.key && p.index < q.index); };
  if (k > 0 && k <= 32 && k * 8 <= n) {
    // a few: one pass keeping the best k in order; most values lose to the current k-th at once
    KeyIndex best[33];
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
      uint64_t key = sort_key(x[i]);
      KeyIndex e{largest ? ~key : key, i};
      if (m == k && !less(e, best[m - 1])) continue;
      int64_t j = m < k ? m++ : m - 1;
      while (j > 0 && less(e, best[j - 1])) {
        best[j] = best[j - 1];
        j--;
      }
      best[j] = e;
    }
    for (int64_t i = 0; i < k; i++) idx[i] = best[i].index;
    return;
  }
  std::vector<KeyIndex> a = keyed(x, n, largest);
  if (k < n) std::nth_element(a.begin(), a.begin() + k, a.end(), less);
  std::sort(a.begin(), a.begin() + k, less);
  for (int64_t i = 0; i < k; i++) idx[i] = a[size_t(i)].index;
}

// Run f(row_values, scratch_index, n, row_number) per row of the contiguous [rows, n] x with dtype T.
template <class F>
void for_rows(const Tensor& x, const char* name, F f) {
  const int64_t n = x.dim() ? x.sizes().back() : 1;
  const int64_t rows = n ? x.numel() / n : 0;
  EMBER_DISPATCH_ALL(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      EMBER_FAIL(Runtime, name, ": unexpected reduced float");
    } else {
      const T* base = static_cast<const T*>(x.data_ptr());
      parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
        std::vector<int64_t> idx(static_cast<size_t>(n));
        for (int64_t row = b; row < e; row++) f(base + row * n, idx.data(), n, row);
      });
    }
  });
}

void sort_cpu(const Tensor& vals, const Tensor& inds, const Tensor& x, bool descending) {
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(x, "sort", [&](const auto* row_x, int64_t* idx, int64_t n, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(row_x)>>;
    sort_indices(row_x, n, descending, idx);
    T* vp = static_cast<T*>(vals.data_ptr()) + row * n;
    for (int64_t i = 0; i < n; i++) {
      vp[i] = row_x[idx[i]];
      ip[row * n + i] = idx[i];
    }
  });
}

void topk_cpu(const Tensor& vals, const Tensor& inds, const Tensor& x, int64_t k, bool largest) {
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(x, "topk", [&](const auto* row_x, int64_t* idx, int64_t n, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(row_x)>>;
    select_indices(row_x, n, k, largest, idx);
    T* vp = static_cast<T*>(vals.data_ptr()) + row * k;
    for (int64_t i = 0; i < k; i++) {
      vp[i] = row_x[idx[i]];
      ip[row * k + i] = idx[i];
    }
  });
}

void median_cpu(const Tensor& vals, const Tensor& inds, const Tensor& x) {
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(x, "median", [&](const auto* row_x, int64_t* idx, int64_t len, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(row_x)>>;
    T* vp = static_cast<T*>(vals.data_ptr());
    for (int64_t i = 0; i < len; i++)
      if (is_nan(row_x[i])) { vp[row] = row_x[i]; ip[row] = i; return; }  // NaN propagates
    sort_indices(row_x, len, false, idx);
    int64_t m = idx[(len - 1) / 2];
    vp[row] = row_x[m];
    ip[row] = m;
  });
}

void mode_cpu(const Tensor& vals, const Tensor& inds, const Tensor& x) {
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(x, "mode", [&](const auto* row_x, int64_t* idx, int64_t len, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(row_x)>>;
    T* vp = static_cast<T*>(vals.data_ptr());
    sort_indices(row_x, len, false, idx);
    int64_t best_count = 0, best_start = 0;
    for (int64_t s = 0; s < len;) {
      int64_t e = s + 1;
      while (e < len && (row_x[idx[e]] == row_x[idx[s]] || (is_nan(row_x[idx[e]]) && is_nan(row_x[idx[s]])))) e++;
      if (e - s > best_count) { best_count = e - s; best_start = s; }
      s = e;
    }
    int64_t last = idx[best_start];
    for (int64_t j = best_start; j < best_start + best_count; j++) last = std::max(last, idx[j]);
    vp[row] = row_x[last];
    ip[row] = last;
  });
}

Tensor long_tensor(const std::vector<int64_t>& v) {
  Tensor t = empty_tensor({int64_t(v.size())}, kLong);
  std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));
  return t;
}

TensorPair unique_sorted_cpu(const Tensor& order, const Tensor& differs, const Tensor& inverse) {
  int64_t n = order.numel();
  std::vector<int64_t> keep, counts;
  const bool* diff = n > 1 ? static_cast<const bool*>(differs.data_ptr()) : nullptr;
  const int64_t* op = static_cast<const int64_t*>(order.data_ptr());
  int64_t* inv = static_cast<int64_t*>(inverse.data_ptr());
  for (int64_t i = 0; i < n; i++) {
    bool is_new = i == 0 || diff[i - 1];
    if (is_new) { keep.push_back(i); counts.push_back(0); }
    counts.back()++;
    inv[op[i]] = int64_t(keep.size()) - 1;
  }
  return {long_tensor(keep), long_tensor(counts)};
}

TensorPair unique_rows_cpu(const Tensor& rows, const Tensor& inverse, bool consecutive) {
  int64_t n = rows.sizes()[0], m = rows.sizes()[1];
  const double* rp = static_cast<const double*>(rows.data_ptr());
  int64_t* inv = static_cast<int64_t*>(inverse.data_ptr());
  std::vector<int64_t> keep, counts;
  if (consecutive) {
    for (int64_t i = 0; i < n; i++) {
      bool is_new = i == 0 || !std::equal(rp + i * m, rp + (i + 1) * m, rp + (i - 1) * m);
      if (is_new) { keep.push_back(i); counts.push_back(0); }
      counts.back()++;
      inv[i] = int64_t(keep.size()) - 1;
    }
    return {long_tensor(keep), long_tensor(counts)};
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  auto less = [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(rp + a * m, rp + (a + 1) * m, rp + b * m, rp + (b + 1) * m);
  };
  std::stable_sort(order.begin(), order.end(), less);
  for (int64_t i = 0; i < n; i++) {
    bool is_new = i == 0 || less(order[i - 1], order[i]);
    if (is_new) { keep.push_back(order[i]); counts.push_back(0); }
    counts.back()++;
    inv[order[i]] = int64_t(keep.size()) - 1;
  }
  return {long_tensor(keep), long_tensor(counts)};
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(sort_stub, CPU, &ember::sort_cpu);
EMBER_REGISTER_KERNEL(topk_stub, CPU, &ember::topk_cpu);
EMBER_REGISTER_KERNEL(median_stub, CPU, &ember::median_cpu);
EMBER_REGISTER_KERNEL(mode_stub, CPU, &ember::mode_cpu);
EMBER_REGISTER_KERNEL(unique_sorted_stub, CPU, &ember::unique_sorted_cpu);
EMBER_REGISTER_KERNEL(unique_rows_stub, CPU, &ember::unique_rows_cpu);
