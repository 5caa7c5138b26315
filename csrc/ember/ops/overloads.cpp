// Overloads PyTorch has beside an op's main schema (the ops.yaml schema gaps of
// tests/python/test_schema_gaps.py). Each forwards to the main op, so it is differentiable
// through it.
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

#include <algorithm>
#include <sstream>

namespace ember::native {

// var(x, unbiased) / std(x, False): the whole tensor, with or without Bessel's correction
Tensor var(const Tensor& self, bool unbiased) { return ember::var(self, std::nullopt, unbiased, false, std::nullopt); }
Tensor std(const Tensor& self, bool unbiased) { return ember::std(self, std::nullopt, unbiased, false, std::nullopt); }
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, bool unbiased) {
  return ember::var_mean(self, std::nullopt, unbiased, false, std::nullopt);
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, bool unbiased) {
  return ember::std_mean(self, std::nullopt, unbiased, false, std::nullopt);
}

// arange(end=5)
Tensor arange(const Scalar& end, const TensorOptions& options) {
  return ember::arange(Scalar(int64_t(0)), end, Scalar(int64_t(1)), options);
}
const Tensor& arange_out(const Tensor& out, const Scalar& end, const TensorOptions& options) {
  return ember::arange_out(out, Scalar(int64_t(0)), end, Scalar(int64_t(1)), options);
}

// where with a number operand: the number takes part in type promotion as a wrapped number
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  return ember::where(condition, scalar_to_tensor(self), other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  return ember::where(condition, self, scalar_to_tensor(other));
}
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  return ember::where(condition, scalar_to_tensor(self), scalar_to_tensor(other));
}
// where(condition): nonzero(condition, as_tuple=True)
std::vector<Tensor> where(const Tensor& condition) { return ember::nonzero_numpy(condition); }

// norm(x, p="fro" | "nuc", dim): torch.norm's string orders (its default is "fro"). "fro" over at
// most two dims is the vector 2-norm; otherwise the order is a matrix norm over exactly two dims.
Tensor norm(const Tensor& self, std::string_view p, OptionalIntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  if (p == "fro" && (!dim || dim->size() <= 2)) return ember::norm(self, Scalar(2.0), dim, keepdim, dtype);
  std::vector<int64_t> d;
  if (dim) d = dim->vec();
  else for (int64_t i = 0; i < self.dim(); i++) d.push_back(i);
  if (d.size() != 2) {
    std::ostringstream got;
    for (int64_t x : d) got << " " << x;
    EMBER_FAIL(Runtime, "linalg.matrix_norm: dim must be a 2-tuple. Got", got.str());
  }
  EMBER_CHECK(p == "nuc", "linalg.matrix_norm: Order ", p, " not supported.");
  EMBER_CHECK(!is_reduced_float(self.dtype()), "linalg.matrix_norm: Low precision dtypes not supported. Got ", self.dtype());
  EMBER_CHECK(self.dim() >= 2, "linalg.matrix_norm: The input tensor A must have at least 2 dimensions.");
  int64_t d0 = wrap_dim(d[0], self.dim()), d1 = wrap_dim(d[1], self.dim());
  EMBER_CHECK(d0 != d1, "linalg.matrix_norm: dims must be different. Got (", d[0], ", ", d[1], ")");
  Tensor a = dtype ? self.to(*dtype) : self;
  Tensor s = std::get<1>(ember::linalg_svd(a.movedim({d0, d1}, {-2, -1}), false));
  Tensor r = s.sum(IntArrayRef({int64_t(-1)}), false, std::nullopt);
  if (keepdim) r = r.unsqueeze(std::min(d0, d1)).unsqueeze(std::max(d0, d1));
  return r;
}
const Tensor& norm_out(const Tensor& out, const Tensor& self, std::string_view p, OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  Tensor r = native::norm(self, p, dim, keepdim, dtype);
  check_out_dtype(out, r.dtype());
  return copy_to_out(out, r, true);
}

// ---- out=(values, indices) for the ops returning both: checked dtypes, resized, written
namespace {
std::tuple<Tensor, Tensor> write_pair(const Tensor& o0, const Tensor& o1, const std::tuple<Tensor, Tensor>& r) {
  check_out_dtype(o0, std::get<0>(r).dtype());
  check_out_dtype(o1, std::get<1>(r).dtype());
  copy_to_out(o0, std::get<0>(r), true);
  copy_to_out(o1, std::get<1>(r), true);
  return {o0, o1};
}
}  // namespace

std::tuple<Tensor, Tensor> max_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim, bool keepdim) {
  return write_pair(o0, o1, native::max(self, dim, keepdim));
}
std::tuple<Tensor, Tensor> min_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim, bool keepdim) {
  return write_pair(o0, o1, native::min(self, dim, keepdim));
}
std::tuple<Tensor, Tensor> cummax_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim) {
  return write_pair(o0, o1, native::cummax(self, dim));
}
std::tuple<Tensor, Tensor> cummin_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim) {
  return write_pair(o0, o1, native::cummin(self, dim));
}
std::tuple<Tensor, Tensor> sort_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim, bool descending) {
  return write_pair(o0, o1, native::sort(self, dim, descending));
}
std::tuple<Tensor, Tensor> sort_out(const Tensor& o0, const Tensor& o1, const Tensor& self, std::optional<bool> stable,
                                    int64_t dim, bool descending) {
  return write_pair(o0, o1, native::sort(self, stable, dim, descending));
}
std::tuple<Tensor, Tensor> topk_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t k, int64_t dim,
                                    bool largest, bool sorted) {
  return write_pair(o0, o1, native::topk(self, k, dim, largest, sorted));
}
std::tuple<Tensor, Tensor> kthvalue_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t k, int64_t dim,
                                        bool keepdim) {
  check_out_shares_nothing(o0, self);
  check_out_shares_nothing(o1, self);
  return write_pair(o0, o1, native::kthvalue(self, k, dim, keepdim));
}
std::tuple<Tensor, Tensor> mode_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim, bool keepdim) {
  return write_pair(o0, o1, native::mode(self, dim, keepdim));
}
std::tuple<Tensor, Tensor> median_out(const Tensor& o0, const Tensor& o1, const Tensor& self, int64_t dim, bool keepdim) {
  return write_pair(o0, o1, native::median(self, dim, keepdim));
}

}  // namespace ember::native

// ---- in-place view ops (x.unsqueeze_(0), x.t_(), ...): self takes the view's geometry
namespace ember::native {
namespace {
const Tensor& restride(const Tensor& self, const Tensor& view) {
  self.impl()->set_sizes_and_strides(view.sizes(), view.strides(), view.storage_offset());
  self.impl()->bump_version();  // PyTorch counts these as in-place ops
  return self;
}
}  // namespace

const Tensor& unsqueeze_(const Tensor& self, int64_t dim) { return restride(self, native::unsqueeze(self, dim)); }
const Tensor& squeeze_(const Tensor& self, OptionalIntArrayRef dim) { return restride(self, native::squeeze(self, dim)); }
const Tensor& t_(const Tensor& self) { return restride(self, native::t(self)); }
const Tensor& transpose_(const Tensor& self, int64_t dim0, int64_t dim1) {
  return restride(self, native::transpose(self, dim0, dim1));
}
const Tensor& as_strided_(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  return restride(self, native::as_strided(self, size, stride, storage_offset));
}
}  // namespace ember::native
