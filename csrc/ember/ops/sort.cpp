// Sorting and selection: sort, argsort, topk, kthvalue, median, mode, unique. Each works row by
// row along one dim (moved last and made contiguous), with a stable sort on indices in which NaN
// orders after every number, as in PyTorch.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/parallel/parallel.h"

namespace ember::native {

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

struct Rows {
  Tensor x;       // contiguous, dim moved last, compute dtype
  int64_t n = 1;  // row length
  int64_t rows = 0;
  int64_t dim = 0;
};

Rows make_rows(const Tensor& self, int64_t dim) {
  Rows r;
  int64_t nd = self.dim();
  r.dim = wrap_dim(dim, nd);
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor x = self.to(cd);
  r.x = nd ? x.movedim({r.dim}, {-1}).contiguous() : x.reshape({1}).contiguous();
  r.n = nd ? r.x.sizes().back() : 1;
  r.rows = r.n ? r.x.numel() / r.n : 0;
  return r;
}

// Run f(row_values, row_index, n, row_number) per row with dtype T.
template <class F>
void for_rows(const Rows& r, const char* name, F f) {
  EMBER_DISPATCH_ALL(r.x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      EMBER_FAIL(Runtime, name, ": unexpected reduced float");
    } else {
      const T* base = static_cast<const T*>(r.x.data_ptr());
      parallel_for(0, r.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(r.n, 1)), [&](int64_t b, int64_t e) {
        std::vector<int64_t> idx(static_cast<size_t>(r.n));
        for (int64_t row = b; row < e; row++) f(base + row * r.n, idx.data(), r.n, row);
      });
    }
  });
}

// Back from [..., k] (dim last) to the caller's layout.
Tensor restore(const Tensor& t, const Tensor& self, int64_t dim, bool keep_last) {
  if (self.dim() == 0) return keep_last ? t.reshape({}) : t.reshape({});
  return t.movedim({-1}, {dim}).contiguous();
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending) {
  Rows r = make_rows(self, dim);
  Tensor vals = empty_tensor(r.x.sizes(), r.x.dtype()), inds = empty_tensor(r.x.sizes(), kLong);
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(r, "sort", [&](const auto* x, int64_t* idx, int64_t n, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
    sort_indices(x, n, descending, idx);
    T* vp = static_cast<T*>(vals.data_ptr()) + row * n;
    for (int64_t i = 0; i < n; i++) {
      vp[i] = x[idx[i]];
      ip[row * n + i] = idx[i];
    }
  });
  return {restore(vals, self, r.dim, true).to(self.dtype()), restore(inds, self, r.dim, true)};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) { return sort_impl(self, dim, descending); }
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool>, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending);  // the sort is always stable
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) { return std::get<1>(sort_impl(self, dim, descending)); }
Tensor argsort(const Tensor& self, bool, int64_t dim, bool descending) { return std::get<1>(sort_impl(self, dim, descending)); }

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool) {
  int64_t n = self.dim() ? self.sizes()[wrap_dim(dim, self.dim())] : 1;
  EMBER_CHECK(k >= 0 && k <= n, "selected index k out of range");
  auto [v, i] = sort_impl(self, dim, largest);
  if (self.dim() == 0) return {v, i};
  int64_t d = wrap_dim(dim, self.dim());
  return {v.narrow(d, 0, k).contiguous(), i.narrow(d, 0, k).contiguous()};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  int64_t n = self.dim() ? self.sizes()[wrap_dim(dim, self.dim())] : 1;
  EMBER_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ",
              self.dim() ? wrap_dim(dim, self.dim()) : 0);
  auto [v, i] = sort_impl(self, dim, false);
  if (self.dim() == 0) return {v, i};
  int64_t d = wrap_dim(dim, self.dim());
  Tensor vv = v.narrow(d, k - 1, 1), ii = i.narrow(d, k - 1, 1);
  if (!keepdim) { vv = vv.squeeze(IntArrayRef({d})); ii = ii.squeeze(IntArrayRef({d})); }
  return {vv.contiguous(), ii.contiguous()};
}

std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  int64_t nd = self.dim();
  int64_t d = wrap_dim(dim, nd);
  int64_t n = nd ? self.sizes()[d] : 1;
  EMBER_CHECK_KIND(n > 0, Index, "median(): Expected reduction dim ", d, " to have non-zero size.");
  Rows r = make_rows(self, dim);
  DimVector shape(r.x.sizes());
  shape.back() = 1;
  Tensor vals = empty_tensor(shape, r.x.dtype()), inds = empty_tensor(shape, kLong);
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(r, "median", [&](const auto* x, int64_t* idx, int64_t len, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
    T* vp = static_cast<T*>(vals.data_ptr());
    for (int64_t i = 0; i < len; i++)
      if (is_nan(x[i])) { vp[row] = x[i]; ip[row] = i; return; }  // NaN propagates
    sort_indices(x, len, false, idx);
    int64_t m = idx[(len - 1) / 2];
    vp[row] = x[m];
    ip[row] = m;
  });
  Tensor v = restore(vals, self, d, true), i = restore(inds, self, d, true);
  if (!keepdim && nd) { v = v.squeeze(IntArrayRef({d})); i = i.squeeze(IntArrayRef({d})); }
  return {v.to(self.dtype()), i};
}

Tensor median(const Tensor& self) {
  if (self.numel() == 0) return ember::full({}, std::nan(""), TensorOptions(self.dtype()));
  return std::get<0>(native::median(self.reshape({-1}), 0, false));
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  int64_t nd = self.dim();
  int64_t d = wrap_dim(dim, nd);
  EMBER_CHECK_KIND(!nd || self.sizes()[d] > 0, Index, "mode(): Expected reduction dim ", d, " to have non-zero size.");
  Rows r = make_rows(self, dim);
  DimVector shape(r.x.sizes());
  shape.back() = 1;
  Tensor vals = empty_tensor(shape, r.x.dtype()), inds = empty_tensor(shape, kLong);
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  for_rows(r, "mode", [&](const auto* x, int64_t* idx, int64_t len, int64_t row) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x)>>;
    T* vp = static_cast<T*>(vals.data_ptr());
    sort_indices(x, len, false, idx);
    int64_t best_count = 0, best_start = 0;
    for (int64_t s = 0; s < len;) {
      int64_t e = s + 1;
      while (e < len && (x[idx[e]] == x[idx[s]] || (is_nan(x[idx[e]]) && is_nan(x[idx[s]])))) e++;
      if (e - s > best_count) { best_count = e - s; best_start = s; }
      s = e;
    }
    int64_t last = idx[best_start];
    for (int64_t j = best_start; j < best_start + best_count; j++) last = std::max(last, idx[j]);
    vp[row] = x[last];
    ip[row] = last;
  });
  Tensor v = restore(vals, self, d, true), i = restore(inds, self, d, true);
  if (!keepdim && nd) { v = v.squeeze(IntArrayRef({d})); i = i.squeeze(IntArrayRef({d})); }
  return {v.to(self.dtype()), i};
}

// ---- unique
std::tuple<Tensor, Tensor, Tensor> unique2(const Tensor& self, bool, bool return_inverse, bool return_counts) {
  Tensor flat = self.reshape({-1});
  auto [sorted, order] = sort_impl(flat, 0, false);
  int64_t n = flat.numel();
  Tensor inverse = empty_tensor(self.sizes(), kLong);
  std::vector<int64_t> keep, counts;
  Tensor eq = n > 1 ? ember::ne(sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1)).contiguous() : Tensor();
  const bool* diff = n > 1 ? static_cast<const bool*>(eq.data_ptr()) : nullptr;
  const int64_t* op = static_cast<const int64_t*>(order.data_ptr());
  int64_t* inv = static_cast<int64_t*>(inverse.data_ptr());
  for (int64_t i = 0; i < n; i++) {
    bool is_new = i == 0 || diff[i - 1];
    if (is_new) { keep.push_back(i); counts.push_back(0); }
    counts.back()++;
    inv[op[i]] = int64_t(keep.size()) - 1;
  }
  Tensor kidx = empty_tensor({int64_t(keep.size())}, kLong);
  std::copy(keep.begin(), keep.end(), static_cast<int64_t*>(kidx.data_ptr()));
  Tensor values = ember::index_select(sorted, 0, kidx);
  Tensor cnt = empty_tensor({int64_t(counts.size())}, kLong);
  std::copy(counts.begin(), counts.end(), static_cast<int64_t*>(cnt.data_ptr()));
  return {values, return_inverse ? inverse : empty_tensor({0}, kLong), return_counts ? cnt : empty_tensor({0}, kLong)};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool, bool return_inverse,
                                              bool return_counts) {
  int64_t d = wrap_existing_dim(dim, self.dim());
  int64_t n = self.sizes()[d];
  for (int64_t i = 0; i < self.dim(); i++)  // a 0-size other dim would leave n rows of nothing to compare
    EMBER_CHECK(i == d || self.sizes()[i] != 0 || n == 0,
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  Tensor slices = self.movedim({d}, {0}).reshape({n, -1}).to(kDouble).contiguous();
  int64_t m = slices.sizes()[1];
  const double* sp = static_cast<const double*>(slices.data_ptr());
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  auto less = [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(sp + a * m, sp + (a + 1) * m, sp + b * m, sp + (b + 1) * m);
  };
  std::stable_sort(order.begin(), order.end(), less);
  std::vector<int64_t> keep, counts, inv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) {
    bool is_new = i == 0 || less(order[i - 1], order[i]);
    if (is_new) { keep.push_back(order[i]); counts.push_back(0); }
    counts.back()++;
    inv[order[i]] = int64_t(keep.size()) - 1;
  }
  auto to_tensor = [](const std::vector<int64_t>& v) {
    Tensor t = empty_tensor({int64_t(v.size())}, kLong);
    std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));
    return t;
  };
  Tensor values = ember::index_select(self, d, to_tensor(keep));
  return {values, return_inverse ? to_tensor(inv) : empty_tensor({0}, kLong),
          return_counts ? to_tensor(counts) : empty_tensor({0}, kLong)};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive2(const Tensor& self, bool return_inverse, bool return_counts,
                                                       std::optional<int64_t> dim) {
  Tensor x;
  int64_t d = 0;
  if (dim) {
    d = wrap_existing_dim(*dim, self.dim());
    x = self.movedim({d}, {0});
  } else {
    x = self.reshape({-1});
  }
  int64_t n = x.sizes()[0];
  Tensor rows = x.reshape({n, -1}).to(kDouble).contiguous();
  int64_t m = rows.sizes()[1];
  const double* rp = static_cast<const double*>(rows.data_ptr());
  std::vector<int64_t> keep, counts, inv(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) {
    bool is_new = i == 0 || !std::equal(rp + i * m, rp + (i + 1) * m, rp + (i - 1) * m);
    if (is_new) { keep.push_back(i); counts.push_back(0); }
    counts.back()++;
    inv[i] = int64_t(keep.size()) - 1;
  }
  auto to_tensor = [](const std::vector<int64_t>& v) {
    Tensor t = empty_tensor({int64_t(v.size())}, kLong);
    std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));
    return t;
  };
  Tensor values = dim ? ember::index_select(self, d, to_tensor(keep)) : ember::index_select(x, 0, to_tensor(keep));
  Tensor inverse = to_tensor(inv);
  if (!dim) inverse = inverse.reshape(self.sizes());
  return {values, return_inverse ? inverse : empty_tensor({0}, kLong),
          return_counts ? to_tensor(counts) : empty_tensor({0}, kLong)};
}

}  // namespace ember::native
