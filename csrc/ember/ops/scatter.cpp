// gather, scatter, scatter_add, scatter_reduce, index_add: element-wise indexing along one dim. The
// kernels (kernels/cpu/scatter.cpp) bounds-check each index before they write through it.

#include "ember/core/checked_math.h"
#include "ember/core/deterministic.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/scatter.h"

EMBER_DEFINE_STUB(gather_stub)
EMBER_DEFINE_STUB(scatter_stub)
EMBER_DEFINE_STUB(scatter_reduce_stub)

namespace ember::native {

namespace {

void check_index_shapes(const char* name, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  if (index.numel() == 0) return;  // nothing is read or written: PyTorch checks no shapes or dtype either
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, name, "(): Expected dtype int32/int64 for index");
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == std::max<int64_t>(self.dim(), 1),
              "Index tensor must have the same number of dimensions as ", src ? "self tensor" : "input tensor");
  for (int64_t d = 0; d < index.dim(); d++) {
    if (d == dim) continue;
    EMBER_CHECK(index.sizes()[d] <= (self.dim() ? self.sizes()[d] : 1), "Size does not match at dimension ", d,
                " expected index ", index.sizes(), " to be no larger than self ", self.sizes(), " apart from dimension ", dim);
  }
  if (src && src->dim() > 0) {
    // PyTorch reads src.size(d) for each of index's dims: a src with fewer dims is its IndexError
    EMBER_CHECK_KIND(src->dim() >= index.dim(), Index, "Dimension out of range (expected to be in range of [",
                     -src->dim(), ", ", src->dim() - 1, "], but got ", src->dim(), ")");
    for (int64_t d = 0; d < index.dim(); d++)
      EMBER_CHECK(index.sizes()[d] <= src->sizes()[d], "Size does not match at dimension ", d, " expected index ",
                  index.sizes(), " to be no larger than src ", src->sizes());
  }
}

void scatter_impl(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& src, ScatterMode mode,
                  const char* name) {
  check_same_device(name, self.device(), {&index_in, &src});
  EMBER_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  auto kernel = scatter_stub(self.device(), name);
  dim = wrap_dim(dim, self.dim());
  check_index_shapes(name, self, dim, index_in, &src);
  const Tensor index = index_in.to(kLong);  // int32 indices are accepted, the kernels read int64
  Tensor s = src;
  if (mode == ScatterMode::Add && self.is_cuda() && deterministic_algorithms() && self.dim() > 0 &&
      s.dim() == index.dim() &&
      index.numel() > 0 && (is_floating(self.dtype()) || is_complex(self.dtype()))) {
    // deterministic on the GPU (PyTorch's way): an accumulating index_put_ of every element's
    // coordinates, whose sorted accumulation sums in the CPU's order
    const int64_t size = self.sizes()[dim];
    const int64_t lo = ember::amin(index).item().to_long(), hi = ember::amax(index).item().to_long();
    EMBER_CHECK(lo >= 0 && hi < size, "index ", lo < 0 ? lo : hi, " is out of bounds for dimension ", dim,
                " with size ", size);
    std::vector<Tensor> coords;
    for (int64_t k = 0; k < index.dim(); k++) {
      if (k == dim) {
        coords.push_back(index);
        continue;
      }
      std::vector<int64_t> shape(size_t(index.dim()), 1);
      shape[size_t(k)] = index.sizes()[k];
      coords.push_back(ember::arange(Scalar(int64_t(0)), Scalar(index.sizes()[k]), Scalar(int64_t(1)),
                                     TensorOptions(kLong).device(self.device()))
                           .reshape(shape)
                           .expand(index.sizes()));
      s = s.narrow(k, 0, index.sizes()[k]);
    }
    s = s.narrow(dim, 0, index.sizes()[dim]);
    native::index_put_(self, coords, s, true);
    return;
  }
  self.impl()->bump_version();
  kernel(self, dim, index, s, mode);
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool) {
  check_same_device("gather", self.device(), {&index});
  auto kernel = gather_stub(self.device(), "gather");
  dim = wrap_dim(dim, self.dim());
  check_index_shapes("gather", self, dim, index, nullptr);
  Tensor out = empty_tensor(index.sizes(), self.dtype(), self.device());
  kernel(out, self, dim, index.to(kLong));
  return out;
}
const Tensor& gather_out(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, bool sparse) {
  check_out_shares_nothing(out, self);
  check_out_shares_nothing(out, index);
  return copy_to_out(out, native::gather(self, dim, index, sparse), true);
}

const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_impl(self, dim, index, src, ScatterMode::Set, "scatter_");
  return self;
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor r = self.clone();
  scatter_impl(r, dim, index, src, ScatterMode::Set, "scatter");
  return r;
}
// scatter.value: the value broadcast over index's shape (a stride-0 source)
namespace {
Tensor value_source(const Tensor& self, const Tensor& index, const Scalar& value) {
  return scalar_to_tensor(value).to(self.device()).to(self.dtype()).expand(index.sizes());
}
// scatter's legacy reduce= ("add" / "multiply"): scatter_reduce's sum / prod including self
std::string_view legacy_reduce(std::string_view reduce) {
  if (reduce == "add") return "sum";
  if (reduce == "multiply") return "prod";
  EMBER_FAIL(Runtime, "reduce argument must be either add or multiply.");
}
}  // namespace
const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  scatter_impl(self, dim, index, value_source(self, index, value), ScatterMode::Set, "scatter_");
  return self;
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor r = self.clone();
  return native::scatter_(r, dim, index, value);
}
const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  std::string_view r = legacy_reduce(reduce);
  emit_warning("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a future "
               "PyTorch release. Use torch.scatter_reduce instead for more reduction options.");
  return native::scatter_reduce_(self, dim, index, src, r, true);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce) {
  Tensor r = self.clone();
  return native::scatter_(r, dim, index, src, reduce);
}
const Tensor& scatter_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                       std::string_view reduce) {
  std::string_view r = legacy_reduce(reduce);
  return native::scatter_reduce_(self, dim, index, value_source(self, index, value), r, true);
}
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, std::string_view reduce) {
  Tensor r = self.clone();
  return native::scatter_(r, dim, index, value, reduce);
}

const Tensor& scatter_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_CHECK(src.dim() > 0 || index.numel() <= 1, "scatter_add(): src must be a tensor of the same rank as index");
  scatter_impl(self, dim, index, src, ScatterMode::Add, "scatter_add_");
  return self;
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_CHECK(src.dim() > 0 || index.numel() <= 1, "scatter_add(): src must be a tensor of the same rank as index");
  Tensor r = self.clone();
  scatter_impl(r, dim, index, src, ScatterMode::Add, "scatter_add");
  return r;
}

const Tensor& index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  EMBER_CHECK(index.dim() <= 1, "index_add_(): Index is supposed to be a vector");
  // source must have self's shape apart from dim (no broadcasting), as PyTorch's
  bool same = std::max<int64_t>(source.dim(), 1) == std::max<int64_t>(self.dim(), 1);
  const int64_t wd = wrap_dim(dim, std::max<int64_t>(self.dim(), 1));
  for (int64_t i = 0; same && i < self.dim(); i++)
    if (i != wd && self.sizes()[i] != (source.dim() ? source.sizes()[i] : 1)) same = false;
  EMBER_CHECK(same, "source tensor shape must match self tensor shape, excluding the specified dimension. Got "
              "self.shape = ", self.sizes(), " source.shape = ", source.sizes());
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, "index_add_(): Expected dtype int32/int64 for index");
  check_same_device("index_add_", self.device(), {&index, &source});
  dim = wrap_dim(dim, self.dim());
  std::vector<Tensor> idx(static_cast<size_t>(dim), Tensor());
  idx.push_back(index.reshape({-1}));
  Tensor src = source;
  if (!(alpha.is_integral(true) && alpha.to_long() == 1)) src = ember::mul(source, scalar_to_tensor(alpha));
  if (self.dim() == 0) {
    self.add_(src.reshape({}));
    return self;
  }
  native::index_put_(self, idx, src, true);
  return self;
}
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  Tensor r = self.clone();
  return native::index_add_(r, dim, index, source, alpha);
}

// ---------------------------------------------------------------- scatter_reduce
namespace {
ScatterReduce parse_reduce(std::string_view r) {
  if (r == "sum") return ScatterReduce::Sum;
  if (r == "prod") return ScatterReduce::Prod;
  if (r == "mean") return ScatterReduce::Mean;
  if (r == "amax" || r == "max") return ScatterReduce::Amax;  // PyTorch also reads max/min as amax/amin
  if (r == "amin" || r == "min") return ScatterReduce::Amin;
  EMBER_FAIL(Runtime, "reduce argument must be either sum, prod, mean, amax or amin, got ", r);
}
}  // namespace

const Tensor& scatter_reduce_(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& src,
                              std::string_view reduce, bool include_self) {
  ScatterReduce red = parse_reduce(reduce);
  EMBER_CHECK_KIND(!(red == ScatterReduce::Mean && self.dtype() == kBool), NotImplemented,
                   "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
  check_same_device("scatter_reduce_", self.device(), {&index_in, &src});
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK(index_in.dtype() == kLong || index_in.dtype() == kInt, "scatter(): Expected dtype int32/int64 for index");
  EMBER_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index_in.dim(), 1) == nd || index_in.numel() == 0,
              "Index tensor must have the same number of dimensions as self tensor");
  EMBER_CHECK(std::max<int64_t>(src.dim(), 1) == nd || index_in.numel() == 0,
              "Index tensor must have the same number of dimensions as src tensor");
  if (index_in.numel() == 0) return self;
  auto kernel = scatter_reduce_stub(self.device(), "scatter_reduce");
  Tensor index = index_in.to(kLong);
  DimVector isz(index.sizes()), ssz(self.sizes()), rsz(src.sizes());
  while (int64_t(isz.size()) < nd) isz.push_back(1);
  while (int64_t(ssz.size()) < nd) ssz.push_back(1);
  while (int64_t(rsz.size()) < nd) rsz.push_back(1);
  for (int64_t d = 0; d < nd; d++) {
    EMBER_CHECK(isz[d] <= rsz[d], "Size does not match at dimension ", d, " expected index ", index.sizes(),
                " to be no larger than src ", src.sizes());
    if (d != dim)
      EMBER_CHECK(isz[d] <= ssz[d], "Size does not match at dimension ", d, " expected index ", index.sizes(),
                  " to be no larger than self ", self.sizes(), " apart from dimension ", dim);
  }
  // work on contiguous copies in the compute dtype (float for half/bfloat16)
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor work = self.to(cd, true).contiguous().reshape(ssz);
  kernel(work, dim, index.contiguous().reshape(isz), src.to(cd).contiguous().reshape(rsz), red, include_self);
  ember::copy_(self, work.reshape(self.sizes()));
  return self;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  Tensor r = self.clone();
  native::scatter_reduce_(r, dim, index, src, reduce, include_self);
  return r;
}

}  // namespace ember::native
