// CPU kernels of sorting and selection (kernels/sort.h): a stable sort of indices per row, in which
// NaN orders after every number, as in PyTorch; median, mode and unique read that order.
#include <algorithm>
#include <numeric>
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

// Stable order of the n values at x (ascending; NaN last) or descending (NaN first).
template <class T>
void sort_indices(const T* x, int64_t n, bool descending, int64_t* idx) {
  std::iota(idx, idx + n, int64_t(0));
  auto key = [x](int64_t i) { return x[i]; };
  if (descending) {
    std::stable_sort(idx, idx + n, [&](int64_t a, int64_t b) {
      T va = key(a), vb = key(b);
      if (is_nan(va)) return !is_nan(vb);
      return !is_nan(vb) && va > vb;
    });
  } else {
    std::stable_sort(idx, idx + n, [&](int64_t a, int64_t b) {
      T va = key(a), vb = key(b);
      if (is_nan(vb)) return !is_nan(va);
      return !is_nan(va) && va < vb;
    });
  }
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
EMBER_REGISTER_KERNEL(median_stub, CPU, &ember::median_cpu);
EMBER_REGISTER_KERNEL(mode_stub, CPU, &ember::mode_cpu);
EMBER_REGISTER_KERNEL(unique_sorted_stub, CPU, &ember::unique_sorted_cpu);
EMBER_REGISTER_KERNEL(unique_rows_stub, CPU, &ember::unique_rows_cpu);
