// Sorting and selection: sort, argsort, topk, kthvalue, median, mode, unique. Each works row by
// row along one dim, moved last and made contiguous here; the kernels (kernels/cpu/sort.cpp) sort
// stably, with NaN after every number, as PyTorch.
#include <cmath>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/sort.h"

EMBER_DEFINE_STUB(sort_stub)
EMBER_DEFINE_STUB(topk_stub)
EMBER_DEFINE_STUB(median_stub)
EMBER_DEFINE_STUB(mode_stub)
EMBER_DEFINE_STUB(unique_sorted_stub)
EMBER_DEFINE_STUB(unique_rows_stub)

namespace ember::native {

namespace {

struct Rows {
  Tensor x;       // contiguous, dim moved last, compute dtype
  int64_t dim = 0;
};

Rows make_rows(const Tensor& self, int64_t dim) {
  Rows r;
  int64_t nd = self.dim();
  r.dim = wrap_dim(dim, nd);
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor x = self.to(cd);
  r.x = nd ? x.movedim({r.dim}, {-1}).contiguous() : x.reshape({1}).contiguous();
  return r;
}

// Back from [..., k] (dim last) to the caller's layout.
Tensor restore(const Tensor& t, const Tensor& self, int64_t dim) {
  if (self.dim() == 0) return t.reshape({});
  return t.movedim({-1}, {dim}).contiguous();
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending, const char* op) {
  auto kernel = sort_stub(self.device(), op);
  Rows r = make_rows(self, dim);
  Tensor vals = empty_tensor(r.x.sizes(), r.x.dtype(), self.device());
  Tensor inds = empty_tensor(r.x.sizes(), kLong, self.device());
  kernel(vals, inds, r.x, descending);
  return {restore(vals, self, r.dim).to(self.dtype()), restore(inds, self, r.dim)};
}

// median and mode: one value and index per row.
std::tuple<Tensor, Tensor> select_impl(const Tensor& self, int64_t dim, bool keepdim, median_stub_fn kernel) {
  int64_t nd = self.dim(), d = wrap_dim(dim, nd);
  Rows r = make_rows(self, dim);
  DimVector shape(r.x.sizes());
  shape.back() = 1;
  Tensor vals = empty_tensor(shape, r.x.dtype(), self.device()), inds = empty_tensor(shape, kLong, self.device());
  kernel(vals, inds, r.x);
  Tensor v = restore(vals, self, d), i = restore(inds, self, d);
  if (!keepdim && nd) { v = v.squeeze(IntArrayRef({d})); i = i.squeeze(IntArrayRef({d})); }
  return {v.to(self.dtype()), i};
}

// What unique returns for an inverse or counts not asked for.
Tensor no_result(const Tensor& self) { return empty_tensor({0}, kLong, self.device()); }

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending, "sort");
}
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool>, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending, "sort");  // the sort is always stable
}
Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  return std::get<1>(sort_impl(self, dim, descending, "argsort"));
}
Tensor argsort(const Tensor& self, bool, int64_t dim, bool descending) {
  return std::get<1>(sort_impl(self, dim, descending, "argsort"));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool) {
  int64_t n = self.dim() ? self.sizes()[wrap_dim(dim, self.dim())] : 1;
  EMBER_CHECK(k >= 0 && k <= n, "selected index k out of range");
  if (self.dim() == 0) return sort_impl(self, dim, largest, "topk");
  // the first k of the stable sort, by selection (kernels/sort.h: topk_stub)
  auto kernel = topk_stub(self.device(), "topk");
  Rows r = make_rows(self, dim);
  DimVector shape(r.x.sizes());
  shape.back() = k;
  Tensor vals = empty_tensor(shape, r.x.dtype(), self.device());
  Tensor inds = empty_tensor(shape, kLong, self.device());
  if (k > 0 && r.x.numel() > 0) kernel(vals, inds, r.x, k, largest);
  return {restore(vals, self, r.dim).to(self.dtype()), restore(inds, self, r.dim)};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  int64_t n = self.dim() ? self.sizes()[wrap_dim(dim, self.dim())] : 1;
  EMBER_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ",
              self.dim() ? wrap_dim(dim, self.dim()) : 0);
  auto [v, i] = sort_impl(self, dim, false, "kthvalue");
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
  return select_impl(self, dim, keepdim, median_stub(self.device(), "median"));
}

Tensor median(const Tensor& self) {
  if (self.numel() == 0) return ember::full({}, std::nan(""), TensorOptions(self.dtype()).device(self.device()));
  return std::get<0>(native::median(self.reshape({-1}), 0, false));
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  int64_t nd = self.dim();
  int64_t d = wrap_dim(dim, nd);
  EMBER_CHECK_KIND(!nd || self.sizes()[d] > 0, Index, "mode(): Expected reduction dim ", d, " to have non-zero size.");
  return select_impl(self, dim, keepdim, mode_stub(self.device(), "mode"));
}

// ---- unique
std::tuple<Tensor, Tensor, Tensor> unique2(const Tensor& self, bool, bool return_inverse, bool return_counts) {
  auto kernel = unique_sorted_stub(self.device(), "unique");
  Tensor flat = self.reshape({-1});
  auto [sorted, order] = sort_impl(flat, 0, false, "unique");
  int64_t n = flat.numel();
  Tensor inverse = empty_tensor(self.sizes(), kLong, self.device());
  Tensor differs = n > 1 ? ember::ne(sorted.narrow(0, 1, n - 1), sorted.narrow(0, 0, n - 1)).contiguous() : Tensor();
  auto [kidx, cnt] = kernel(order, differs, inverse);
  Tensor values = ember::index_select(sorted, 0, kidx);
  return {values, return_inverse ? inverse : no_result(self), return_counts ? cnt : no_result(self)};
}

namespace {
// The elements per slice of dim d: not reshape's -1, which is ambiguous when the slices are empty
int64_t row_width(const Tensor& self, int64_t d) {
  int64_t w = 1;
  for (int64_t i = 0; i < self.dim(); i++)
    if (i != d) w *= self.sizes()[i];
  return w;
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool, bool return_inverse,
                                              bool return_counts) {
  auto kernel = unique_rows_stub(self.device(), "unique_dim");
  int64_t d = wrap_existing_dim(dim, self.dim());
  int64_t n = self.sizes()[d];
  for (int64_t i = 0; i < self.dim(); i++)  // a 0-size other dim would leave n rows of nothing to compare
    EMBER_CHECK(i == d || self.sizes()[i] != 0 || n == 0,
                "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  Tensor slices = self.movedim({d}, {0}).reshape({n, row_width(self, d)}).to(kDouble).contiguous();
  Tensor inverse = empty_tensor({n}, kLong, self.device());
  auto [keep, counts] = kernel(slices, inverse, false);
  Tensor values = ember::index_select(self, d, keep);
  return {values, return_inverse ? inverse : no_result(self), return_counts ? counts : no_result(self)};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive2(const Tensor& self, bool return_inverse, bool return_counts,
                                                       std::optional<int64_t> dim) {
  auto kernel = unique_rows_stub(self.device(), "unique_consecutive");
  Tensor x;
  int64_t d = 0;
  if (dim) {
    d = wrap_existing_dim(*dim, self.dim());
    x = self.movedim({d}, {0});
  } else {
    x = self.reshape({-1});
  }
  int64_t n = x.sizes()[0];
  Tensor rows = x.reshape({n, dim ? row_width(self, d) : 1}).to(kDouble).contiguous();
  Tensor inverse = empty_tensor({n}, kLong, self.device());
  auto [keep, counts] = kernel(rows, inverse, true);
  Tensor values = dim ? ember::index_select(self, d, keep) : ember::index_select(x, 0, keep);
  if (!dim) inverse = inverse.reshape(self.sizes());
  return {values, return_inverse ? inverse : no_result(self), return_counts ? counts : no_result(self)};
}

}  // namespace ember::native
