// Shape, indexing, scan and search ops of the "Operators for neural networks" issue.
//
// Most are composites of public ember:: ops (cat, narrow, flip, expand, index_select, gather,
// index_put_, ...), so their gradients come from those ops with no formula of their own. Kernels
// are written where a composite would be wrong or slow: scatter_reduce, cummax/cummin,
// logcumsumexp (a running log-add-exp; exp/cumsum/log overflows), searchsorted/bucketize,
// histc and bincount.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/parallel/parallel.h"

namespace ember::native {

namespace {

Tensor atleast_1d(const Tensor& t) { return t.dim() == 0 ? t.reshape({1}) : t; }
Tensor atleast_2d(const Tensor& t) {
  if (t.dim() == 0) return t.reshape({1, 1});
  if (t.dim() == 1) return t.unsqueeze(0);
  return t;
}
Tensor atleast_3d(const Tensor& t) {
  if (t.dim() == 0) return t.reshape({1, 1, 1});
  if (t.dim() == 1) return t.unsqueeze(0).unsqueeze(-1);
  if (t.dim() == 2) return t.unsqueeze(-1);
  return t;
}

std::vector<Tensor> map_tensors(TensorList ts, Tensor (*f)(const Tensor&)) {
  std::vector<Tensor> r;
  r.reserve(ts.size());
  for (const Tensor& t : ts) r.push_back(f(t));
  return r;
}

Tensor column(const Tensor& t) { return t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t; }

int64_t hstack_dim(const std::vector<Tensor>& ts) { return ts[0].dim() == 1 ? 0 : 1; }

// Values of a 1-D (or 0-d) int64 tensor.
std::vector<int64_t> long_values(const Tensor& t) {
  Tensor c = t.to(kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  return std::vector<int64_t>(p, p + c.numel());
}

// The index list for index_put_ that addresses `index` along `dim` (full slices before it).
std::vector<Tensor> dim_indices(int64_t dim, const Tensor& index) {
  std::vector<Tensor> idx(static_cast<size_t>(dim), Tensor());
  idx.push_back(index.reshape({-1}));
  return idx;
}

}  // namespace

// ---------------------------------------------------------------- stacking
Tensor hstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  std::vector<Tensor> ts = map_tensors(tensors, atleast_1d);
  return ember::cat(ts, hstack_dim(ts));
}
const Tensor& hstack_out(const Tensor& out, TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "hstack expects a non-empty TensorList");
  std::vector<Tensor> ts = map_tensors(tensors, atleast_1d);
  return ember::cat_out(out, ts, hstack_dim(ts));
}
Tensor vstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  return ember::cat(map_tensors(tensors, atleast_2d), 0);
}
const Tensor& vstack_out(const Tensor& out, TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "vstack expects a non-empty TensorList");
  return ember::cat_out(out, map_tensors(tensors, atleast_2d), 0);
}
Tensor dstack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  return ember::cat(map_tensors(tensors, atleast_3d), 2);
}
const Tensor& dstack_out(const Tensor& out, TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "dstack expects a non-empty TensorList");
  return ember::cat_out(out, map_tensors(tensors, atleast_3d), 2);
}
Tensor column_stack(TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "column_stack expects a non-empty TensorList");
  return ember::cat(map_tensors(tensors, column), 1);
}
const Tensor& column_stack_out(const Tensor& out, TensorList tensors) {
  EMBER_CHECK(!tensors.empty(), "column_stack expects a non-empty TensorList");
  return ember::cat_out(out, map_tensors(tensors, column), 1);
}

// ---------------------------------------------------------------- tensor_split (views)
std::vector<Tensor> tensor_split(const Tensor& self, IntArrayRef indices, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
  int64_t d = wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t end : indices) {
    out.push_back(ember::slice(self, d, start, end, 1));
    start = end;
  }
  out.push_back(ember::slice(self, d, start, self.sizes()[d], 1));
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& self, int64_t sections, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "tensor_split expected at least a 1-dimensional tensor, but got a tensor with ",
              self.dim(), " dims");
  EMBER_CHECK(sections > 0, "number of sections must be larger than 0, got ", sections);
  int64_t d = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[d];
  check_view_count(sections, "tensor_split");
  int64_t base = n / sections, extra = n % sections, start = 0;
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sections; i++) {
    int64_t len = base + (i < extra ? 1 : 0);
    out.push_back(ember::slice(self, d, start, start + len, 1));
    start += len;
  }
  return out;
}

std::vector<Tensor> tensor_split(const Tensor& self, const Tensor& ios, int64_t dim) {
  EMBER_CHECK(ios.dtype() == kLong, "tensor_split expected tensor_indices_or_sections to have dtype of long, but got ",
              ios.dtype());
  EMBER_CHECK(ios.dim() <= 1, "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
              "one-dimensional tensor, but got a tensor with ", ios.dim(), " dims");
  if (ios.dim() == 0) return native::tensor_split(self, ios.item().to_long(), dim);
  std::vector<int64_t> idx = long_values(ios);
  return native::tensor_split(self, IntArrayRef(idx), dim);
}

// ---------------------------------------------------------------- flips and rotations
Tensor fliplr(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, "Input must be >= 2-d.");
  return ember::flip(self, IntArrayRef({int64_t(1)}));
}
Tensor flipud(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 1, "Input must be >= 1-d.");
  return ember::flip(self, IntArrayRef({int64_t(0)}));
}

Tensor rot90(const Tensor& self, int64_t k, IntArrayRef dims) {
  int64_t nd = self.dim();
  EMBER_CHECK(dims.size() == 2, "expected total rotation dims == 2, but got dims = ", dims.size());
  EMBER_CHECK(nd >= 2, "expected total dims >= 2, but got total dims = ", nd);
  int64_t d0 = wrap_dim(dims[0], nd), d1 = wrap_dim(dims[1], nd);
  EMBER_CHECK(d0 != d1, "expected rotation dims to be different, but got dim0 = ", dims[0], " and dim1 = ", dims[1]);
  k = ((k % 4) + 4) % 4;
  switch (k) {
    case 1: return ember::flip(self, IntArrayRef({d1})).transpose(d0, d1);
    case 2: return ember::flip(self, IntArrayRef({d0, d1}));
    case 3: return ember::flip(self, IntArrayRef({d0})).transpose(d0, d1);
    default: return self.clone();
  }
}

// ---------------------------------------------------------------- repeat, tile, repeat_interleave
Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  int64_t n = int64_t(repeats.size());
  EMBER_CHECK(n >= self.dim(),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  int64_t lead = n - self.dim();
  DimVector padded, interleaved, expanded, target;
  for (int64_t i = 0; i < n; i++) {
    int64_t s = i < lead ? 1 : self.sizes()[i - lead];
    padded.push_back(s);
    int64_t t;
    EMBER_CHECK(!mul_overflows(s, repeats[i], &t), "repeat: the output size at dimension ", i, " (", s, " * ",
                repeats[i], ") overflowed");
    target.push_back(t);
  }
  for (int64_t i = 0; i < n; i++)
    EMBER_CHECK(target[i] >= 0, "Trying to create tensor with negative dimension ", target[i], ": ", target);
  // x viewed as [1, s0, 1, s1, ...], expanded to [r0, s0, r1, s1, ...], then merged pairwise
  for (int64_t i = 0; i < n; i++) {
    interleaved.push_back(1);
    interleaved.push_back(padded[i]);
    expanded.push_back(repeats[i]);
    expanded.push_back(padded[i]);
  }
  if (n == 0) return self.clone();
  return self.reshape(interleaved).expand(expanded).reshape(target);
}

Tensor tile(const Tensor& self, IntArrayRef dims) {
  DimVector reps;
  for (int64_t i = int64_t(dims.size()); i < self.dim(); i++) reps.push_back(1);
  for (int64_t r : dims) reps.push_back(r);
  return self.repeat(reps);
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats.dim() == 1, "repeat_interleave only accept 1D vector as repeat");
  EMBER_CHECK_KIND(repeats.dtype() == kLong || repeats.dtype() == kInt, NotImplemented,
                   "\"repeat_interleave_cpu\" not implemented for '", repeats.dtype(), "'");
  std::vector<int64_t> r = long_values(repeats);
  int64_t total = 0;
  for (int64_t v : r) {
    EMBER_CHECK(v >= 0, "repeats can not be negative");
    EMBER_CHECK(!add_overflows(total, v, &total), "repeat_interleave: the output size (the sum of repeats) overflowed");
  }
  EMBER_CHECK(!output_size || *output_size == total, "allocated size does not match required size");
  Tensor out = empty_tensor({total}, kLong);
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  for (size_t i = 0; i < r.size(); i++)
    for (int64_t j = 0; j < r[i]; j++) *o++ = int64_t(i);
  return out.to(repeats.dtype());
}

Tensor repeat_interleave(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  Tensor input = self;
  int64_t d = 0;
  if (!dim) input = self.flatten(0, -1);
  else d = wrap_dim(*dim, self.dim());
  int64_t n = input.dim() ? input.sizes()[d] : 1;
  Tensor reps = repeats;
  if (repeats.dim() == 0 || (repeats.dim() == 1 && repeats.sizes()[0] == 1)) {
    reps = repeats.reshape({1}).expand({n});
  } else if (repeats.dim() == 1) {
    EMBER_CHECK(repeats.sizes()[0] == n, "repeats must have the same size as input along dim, but got repeats.size(0) = ",
                repeats.sizes()[0], " and input.size(", d, ") = ", n);
  } else {
    EMBER_FAIL(Runtime, "repeats must be 0-dim or 1-dim tensor");
  }
  return ember::index_select(input, d, native::repeat_interleave(reps.contiguous(), output_size).to(kLong));
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats >= 0, "Repeats must be non-negative");
  return native::repeat_interleave(self, ember::full({}, repeats, TensorOptions(kLong)), dim, output_size);
}

// ---------------------------------------------------------------- index_copy, index_fill, masked_scatter
const Tensor& index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK_KIND(index.dim() < 2, Index, "index_copy_(): Index should have dimension 1 or 0 (got ", index.dim(), ")");
  int64_t nidx = index.numel();
  if (source.dim() == 0 && nidx != 1) {
    EMBER_FAIL(Index, "index_copy_(): When source is scalar, index should have one element (got ", nidx, ")");
  } else if (source.dim() != self.dim() && source.dim() != 0 && self.dim() != 0) {
    EMBER_FAIL(Index, "index_copy_(): When source and destination are not scalars, their dimensionality must match. "
               "Source dimensionality (", source.dim(), "), destination dimensionality (", self.dim(), ")");
  }
  EMBER_CHECK(index.dtype() == kLong, "index_copy_(): Expected a long tensor for index, but got ", index.dtype());
  EMBER_CHECK(self.dtype() == source.dtype(), "index_copy_(): self and source expected to have the same dtype, but got "
              "(self) ", self.dtype(), " and (source) ", source.dtype());
  DimVector ss(self.sizes()), rs(source.sizes());
  if (!ss.empty()) ss.erase(size_t(dim));
  if (!rs.empty()) rs.erase(size_t(dim));
  if (IntArrayRef(ss) != IntArrayRef(rs)) {
    EMBER_FAIL(Runtime, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: ",
               ss, " at dimension ", dim, " and source slice shape: ", rs, " at dimension 0.");
  }
  EMBER_CHECK_KIND(source.dim() == 0 || nidx == source.sizes()[dim], Index, "index_copy_(): Number of indices (", nidx,
                   ") should be equal to source.size(dim) (", source.sizes()[dim], ")");
  int64_t size = self.dim() ? self.sizes()[dim] : 1;
  for (int64_t v : long_values(index))
    EMBER_CHECK_KIND(v >= 0 && v < size, Index, "index_copy_(): index ", v, " is out of bounds for dimension ", dim,
                     " with size ", size);
  if (self.dim() == 0) {
    ember::copy_(self, source.reshape({}));
    return self;
  }
  native::index_put_(self, dim_indices(dim, index), source.dim() ? source : source.reshape({1}), false);
  return self;
}
Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return native::index_copy_(self.clone(), dim, index, source);
}

const Tensor& index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  EMBER_CHECK_KIND(index.dtype() == kLong, Index, "index_fill_(): Expected dtype int64 for index.");
  Tensor s = self.dim() == 0 ? self.unsqueeze(-1) : self;
  dim = wrap_dim(dim, s.dim());
  EMBER_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  int64_t size = s.sizes()[dim];
  for (int64_t v : long_values(index))
    EMBER_CHECK_KIND(v >= -size && v < size, Index, "index ", v, " is out of bounds for dimension ", dim, " with size ",
                     size);
  Tensor v = ember::full({}, value, TensorOptions(self.dtype()));
  native::index_put_(s, dim_indices(dim, index), v, false);
  return self;
}
const Tensor& index_fill_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return native::index_fill_(self, dim, index, value.to(self.dtype()).item());
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return native::index_fill_(self.clone(), dim, index, value);
}
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  return native::index_fill_(self.clone(), dim, index, value);
}

const Tensor& masked_scatter_(const Tensor& self, const Tensor& mask, const Tensor& source) {
  EMBER_CHECK(self.dtype() == source.dtype(), "masked_scatter_: expected self and source to have same dtypes but got",
              self.dtype(), " and ", source.dtype());
  EMBER_CHECK(mask.dtype() == kBool, "masked_scatter_ only supports boolean masks, but got mask with dtype ",
              mask.dtype());
  Tensor m = mask.expand(self.sizes());  // in-place: the mask broadcasts to self
  int64_t count = ember::count_nonzero(m, std::nullopt).item().to_long();
  EMBER_CHECK(count <= source.numel(), "Number of elements of source < number of ones in mask");
  if (count == 0) return self;
  Tensor values = source.reshape({-1}).narrow(0, 0, count);
  if (self.dim() == 0) {
    ember::copy_(self, values.reshape({}));
    return self;
  }
  native::index_put_(self, {m}, values, false);
  return self;
}
Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  Tensor r = empty_tensor(shape, self.dtype());
  ember::copy_(r, self.expand(shape));
  native::masked_scatter_(r, mask.expand(shape), source);
  return r;
}

// ---------------------------------------------------------------- nonzero forms, take
Tensor argwhere(const Tensor& self) { return ember::nonzero(self); }

std::vector<Tensor> nonzero_numpy(const Tensor& self) {
  if (self.dim() == 0) return native::nonzero_numpy(self.unsqueeze(0));
  Tensor nz = ember::nonzero(self);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < self.dim(); d++) out.push_back(nz.select(1, d).contiguous());
  return out;
}

Tensor take(const Tensor& self, const Tensor& index) {
  EMBER_CHECK(index.dtype() == kLong, "take(): Expected a long tensor for index, but got ", index.dtype());
  int64_t n = self.numel();
  EMBER_CHECK_KIND(n > 0 || index.numel() == 0, Index, "take(): tried to take from an empty tensor");
  for (int64_t v : long_values(index))
    EMBER_CHECK_KIND(v >= -n && v < n, Index, "out of range: tried to access index ", v, " on a tensor of ", n,
                     " elements.");
  if (index.numel() == 0) return empty_tensor(index.sizes(), self.dtype());
  return ember::index(self.reshape({-1}), {index});
}
const Tensor& take_out(const Tensor& out, const Tensor& self, const Tensor& index) {
  EMBER_CHECK(out.dtype() == self.dtype(), "take(): self and out expected to have the same dtype, but got self.dtype = ",
              self.dtype(), " and out.dtype = ", out.dtype());
  return copy_to_out(out, native::take(self, index), true);
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  if (!dim) return ember::gather(self.view(IntArrayRef({int64_t(-1)})), 0, indices.view(IntArrayRef({int64_t(-1)})));
  EMBER_CHECK(self.dim() == indices.dim(), "torch.take_along_dim(): input and indices should have the same number of "
              "dimensions, but got ", self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  EMBER_CHECK(indices.dtype() == kLong, "torch.take_along_dim(): dtype of indices should be Long but got ", indices.dtype());
  int64_t d = wrap_dim(*dim, self.dim());
  if (self.dim() == 0) return ember::gather(self, 0, indices);
  DimVector ss(self.sizes()), is(indices.sizes());
  ss[d] = indices.sizes()[d];
  Tensor ib = indices.expand(broadcast_shapes(ss, indices.sizes()));
  is[d] = self.sizes()[d];
  Tensor sb = self.expand(broadcast_shapes(is, self.sizes()));
  return ember::gather(sb, d, ib);
}
const Tensor& take_along_dim_out(const Tensor& out, const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::take_along_dim(self, indices, dim), true);
}

// ---------------------------------------------------------------- scatter_reduce
namespace {

enum class Reduce { Sum, Prod, Mean, Amax, Amin };

Reduce parse_reduce(std::string_view r) {
  if (r == "sum") return Reduce::Sum;
  if (r == "prod") return Reduce::Prod;
  if (r == "mean") return Reduce::Mean;
  if (r == "amax" || r == "max") return Reduce::Amax;  // PyTorch also reads max/min as amax/amin
  if (r == "amin" || r == "min") return Reduce::Amin;
  EMBER_FAIL(Runtime, "reduce argument must be either sum, prod, mean, amax or amin, got ", r);
}

template <class T>
bool nan_of(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <class T>
T combine(Reduce r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return (r == Reduce::Prod || r == Reduce::Amin) ? (a && b) : (a || b);
  } else {
    switch (r) {
      case Reduce::Sum:
      case Reduce::Mean: return T(a + b);
      case Reduce::Prod: return T(a * b);
      case Reduce::Amax: return nan_of(b) ? b : std::max(a, b);
      case Reduce::Amin: return nan_of(b) ? b : std::min(a, b);
    }
    return a;
  }
}

template <class T>
T identity(Reduce r) {
  if constexpr (std::is_same_v<T, bool>) {
    return r == Reduce::Prod || r == Reduce::Amin;
  } else {
    switch (r) {
      case Reduce::Sum:
      case Reduce::Mean: return T(0);
      case Reduce::Prod: return T(1);
      case Reduce::Amax:
        return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
      case Reduce::Amin:
        return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    }
    return T(0);
  }
}

}  // namespace

const Tensor& scatter_reduce_(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& src,
                              std::string_view reduce, bool include_self) {
  Reduce red = parse_reduce(reduce);
  EMBER_CHECK_KIND(!(red == Reduce::Mean && self.dtype() == kBool), NotImplemented,
                   "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
  dim = wrap_dim(dim, self.dim());
  EMBER_CHECK(index_in.dtype() == kLong || index_in.dtype() == kInt, "scatter(): Expected dtype int32/int64 for index");
  EMBER_CHECK(self.dtype() == src.dtype(), "scatter(): Expected self.dtype to be equal to src.dtype");
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index_in.dim(), 1) == nd || index_in.numel() == 0,
              "Index tensor must have the same number of dimensions as self tensor");
  EMBER_CHECK(std::max<int64_t>(src.dim(), 1) == nd || index_in.numel() == 0,
              "Index tensor must have the same number of dimensions as src tensor");
  if (index_in.numel() == 0) return self;
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
  Tensor s = src.to(cd).contiguous().reshape(rsz);
  Tensor idx = index.contiguous().reshape(isz);
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  int64_t n = idx.numel(), size = ssz[dim];
  DimVector wst(work.strides()), sst(s.strides());
  std::vector<int64_t> woff(static_cast<size_t>(n)), soff(static_cast<size_t>(n));
  {
    DimVector pos(size_t(nd), 0);
    for (int64_t e = 0; e < n; e++) {
      int64_t v = ip[e];
      EMBER_CHECK(v >= 0 && v < size, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
      int64_t wo = 0, so = 0;
      for (int64_t d = 0; d < nd; d++) {
        wo += (d == dim ? v : pos[d]) * wst[d];
        so += pos[d] * sst[d];
      }
      woff[size_t(e)] = wo;
      soff[size_t(e)] = so;
      for (int64_t d = nd - 1; d >= 0; d--) {
        if (++pos[d] < isz[d]) break;
        pos[d] = 0;
      }
    }
  }
  std::vector<int64_t> count;
  if (red == Reduce::Mean) {
    count.assign(size_t(work.numel()), include_self ? 1 : 0);
    for (int64_t e = 0; e < n; e++) count[size_t(woff[size_t(e)])]++;
  }
  EMBER_DISPATCH_ALL(cd, "scatter_reduce", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      EMBER_FAIL(Runtime, "scatter_reduce: unexpected reduced float");
    } else {
      T* w = static_cast<T*>(work.data_ptr());
      const T* sp = static_cast<const T*>(s.data_ptr());
      if (!include_self)
        for (int64_t e = 0; e < n; e++) w[woff[size_t(e)]] = identity<T>(red);
      for (int64_t e = 0; e < n; e++) {
        T& dst = w[woff[size_t(e)]];
        dst = combine<T>(red, dst, sp[soff[size_t(e)]]);
      }
      if (red == Reduce::Mean) {
        for (int64_t i = 0; i < work.numel(); i++) {
          int64_t c = std::max<int64_t>(count[size_t(i)], 1);
          if constexpr (std::is_same_v<T, bool>) {
            // (a bool mean is the logical or of the values, as any value divided by a positive count)
          } else if constexpr (std::is_floating_point_v<T>) {
            w[i] = T(w[i] / T(c));
          } else {
            int64_t v = int64_t(w[i]), q = v / c;
            if ((v % c != 0) && ((v < 0) != (c < 0))) q--;  // floor division
            w[i] = T(q);
          }
        }
      }
    }
  });
  ember::copy_(self, work.reshape(self.sizes()));
  return self;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  Tensor r = self.clone();
  native::scatter_reduce_(r, dim, index, src, reduce, include_self);
  return r;
}

// ---------------------------------------------------------------- cummax, cummin, logcumsumexp
namespace {

// self with `dim` moved last, contiguous; rows of length n.
struct Lanes {
  Tensor x;
  int64_t n = 1, rows = 0, dim = 0;
};

Lanes make_lanes(const Tensor& self, int64_t dim, ScalarType cd) {
  Lanes l;
  l.dim = wrap_dim(dim, self.dim());
  Tensor x = self.to(cd);
  l.x = self.dim() ? x.movedim({l.dim}, {-1}).contiguous() : x.reshape({1}).contiguous();
  l.n = self.dim() ? l.x.sizes().back() : 1;
  l.rows = l.n ? l.x.numel() / l.n : 0;
  return l;
}

Tensor unlane(const Tensor& t, const Tensor& self, int64_t dim) {
  if (self.dim() == 0) return t.reshape({});
  return t.movedim({-1}, {dim}).contiguous();
}

std::tuple<Tensor, Tensor> cum_extreme(const Tensor& self, int64_t dim, bool is_max) {
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Lanes l = make_lanes(self, dim, cd);
  Tensor vals = empty_tensor(l.x.sizes(), cd), inds = empty_tensor(l.x.sizes(), kLong);
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  EMBER_DISPATCH_ALL(cd, is_max ? "cummax" : "cummin", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      EMBER_FAIL(Runtime, "cummax: unexpected reduced float");
    } else {
      const T* xp = static_cast<const T*>(l.x.data_ptr());
      T* vp = static_cast<T*>(vals.data_ptr());
      parallel_for(0, l.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(l.n, 1)), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; r++) {
          const T* x = xp + r * l.n;
          T best = x[0];
          int64_t bi = 0;
          for (int64_t i = 0; i < l.n; i++) {
            T v = x[i];
            // NaN wins and stays; ties move the index forward, as in PyTorch
            bool take = is_max ? (nan_of(v) || (!nan_of(best) && v >= best))
                               : (nan_of(v) || (!nan_of(best) && v <= best));
            if (take) { best = v; bi = i; }
            vp[r * l.n + i] = best;
            ip[r * l.n + i] = bi;
          }
        }
      });
    }
  });
  return {unlane(vals, self, l.dim).to(self.dtype()), unlane(inds, self, l.dim)};
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) { return cum_extreme(self, dim, true); }
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) { return cum_extreme(self, dim, false); }

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"logcumsumexp_out_cpu\" not implemented for '",
                   self.dtype(), "'");
  Lanes l = make_lanes(self, dim, kDouble);  // PyTorch accumulates float in double on the CPU
  Tensor out = empty_tensor(l.x.sizes(), kDouble);
  const double* xp = static_cast<const double*>(l.x.data_ptr());
  double* op = static_cast<double*>(out.data_ptr());
  parallel_for(0, l.rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(l.n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      double acc = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < l.n; i++) {
        double x = xp[r * l.n + i];
        double lo = std::isnan(acc) ? acc : std::min(x, acc);
        double hi = std::isnan(acc) ? acc : std::max(x, acc);
        acc = (lo != hi || std::isfinite(lo)) ? std::log1p(std::exp(lo - hi)) + hi : x;
        op[r * l.n + i] = acc;
      }
    }
  });
  return unlane(out, self, l.dim).to(self.dtype());
}
const Tensor& logcumsumexp_out(const Tensor& out, const Tensor& self, int64_t dim) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::logcumsumexp(self, dim), true);
}

// ---------------------------------------------------------------- diff
namespace {
void diff_check_other(const Tensor& self, const Tensor& other, int64_t dim) {
  if (!other.defined()) return;
  EMBER_CHECK(other.dim() == self.dim(), "diff expects prepend or append to be the same dimension as input");
  int64_t d = wrap_dim(dim, self.dim());
  for (int64_t i = 0; i < other.dim(); i++) {
    if (i == d) continue;
    EMBER_CHECK(other.sizes()[i] == self.sizes()[i], "diff expects the shape of tensor to prepend or append to match "
                "that of input except along the differencing dimension; input.size(", i, ") = ", self.sizes()[i],
                ", but got tensor.size(", i, ") = ", other.sizes()[i]);
  }
}
}  // namespace

Tensor diff(const Tensor& self, int64_t n, int64_t dim, const Tensor& prepend, const Tensor& append) {
  EMBER_CHECK(self.dim() >= 1, "diff expects input to be at least one-dimensional");
  EMBER_CHECK(n >= 0, "order must be non-negative but got ", n);
  diff_check_other(self, prepend, dim);
  diff_check_other(self, append, dim);
  int64_t d = wrap_dim(dim, self.dim());
  if (n == 0) return self.clone();  // PyTorch ignores prepend/append for n == 0
  Tensor x = self;
  if (prepend.defined() || append.defined()) {
    std::vector<Tensor> parts;
    if (prepend.defined()) parts.push_back(prepend);
    parts.push_back(self);
    if (append.defined()) parts.push_back(append);
    x = ember::cat(parts, d);
  }
  int64_t len = x.sizes()[d] - 1;
  n = std::min(n, x.sizes()[d]);
  for (int64_t i = 0; i < n; i++, len--) {
    Tensor hi = x.narrow(d, 1, len), lo = x.narrow(d, 0, len);
    x = x.dtype() == kBool ? ember::logical_xor(hi, lo) : ember::sub(hi, lo);
  }
  return x;
}
const Tensor& diff_out(const Tensor& out, const Tensor& self, int64_t n, int64_t dim, const Tensor& prepend,
                       const Tensor& append) {
  Tensor r = native::diff(self, n, dim, prepend, append);
  // n == 0 copies self into out, which must then have self's dtype
  EMBER_CHECK(n != 0 || out.dtype() == self.dtype(), "expected scalar_type ", self.dtype(), " but found ", out.dtype());
  return copy_to_out(out, r, false);
}

// ---------------------------------------------------------------- diagonals
Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1_in, int64_t dim2_in) {
  int64_t nd = self.dim() + 1;
  int64_t dim1 = wrap_dim(dim1_in, nd), dim2 = wrap_dim(dim2_in, nd);
  EMBER_CHECK(dim1 != dim2, "diagonal dimensions cannot be identical ", dim1_in, ", ", dim2_in);
  EMBER_CHECK_KIND(self.dim() > 0, Index, "Dimension out of range (expected to be in range of [-1, 0], but got -2)");
  EMBER_CHECK(offset != INT64_MIN, "diag_embed: offset ", offset, " is out of range");
  int64_t len = checked_add(offset < 0 ? -offset : offset, self.sizes().back(), "diag_embed: output size");
  DimVector sizes(self.sizes());
  sizes.pop_back();
  sizes.insert(size_t(std::min(dim1, dim2)), len);
  sizes.insert(size_t(std::max(dim1, dim2)), len);
  Tensor r = ember::zeros(sizes, TensorOptions(self.dtype()));
  ember::copy_(ember::diagonal(r, offset, dim1, dim2), self);
  return r;
}

Tensor diag(const Tensor& self, int64_t diagonal) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  if (self.dim() == 1) return ember::diag_embed(self, diagonal, 0, 1);
  return ember::diagonal(self, diagonal, 0, 1).clone();
}
const Tensor& diag_out(const Tensor& out, const Tensor& self, int64_t diagonal) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::diag(self, diagonal), true);
}

Tensor diagflat(const Tensor& self, int64_t offset) { return ember::diag(self.reshape({-1}), offset); }

Tensor trace(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  EMBER_CHECK_KIND(self.dtype() != kBool, NotImplemented, "\"trace\" not implemented for 'Bool'");
  return ember::sum(ember::diagonal(self, 0, 0, 1), std::nullopt, false, std::nullopt);
}

namespace {
Tensor tri_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& o, bool lower) {
  const char* name = lower ? "tril_indices" : "triu_indices";
  ScalarType dt = o.dtype_or(kLong);
  EMBER_CHECK_KIND(dt == kLong || dt == kInt, NotImplemented, "\"", name, "\" not implemented for '", dt, "'");
  EMBER_CHECK(row >= 0, "row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, "col must be non-negative, got", col);
  // Row i holds the columns [begin(i), end(i)); the count is summed in closed form (128-bit) and the
  // output checked before any loop, so tril_indices(2**40, 2**40) raises instead of looping 2**80 times.
  auto clamp_col = [col](__int128 v) { return v < 0 ? __int128(0) : v > col ? __int128(col) : v; };
  auto begin = [&](int64_t i) { return lower ? __int128(0) : clamp_col(__int128(i) + offset); };
  auto end = [&](int64_t i) { return lower ? clamp_col(__int128(i) + offset + 1) : __int128(col); };
  auto clamp_sum = [&](__int128 a) {  // sum over i in [0, row) of clamp(i + a, 0, col)
    __int128 lo = std::min<__int128>(row, std::max<__int128>(0, 1 - a));
    __int128 hi = std::min<__int128>(row, std::max<__int128>(lo, __int128(col) - a));
    return (hi - lo) * (lo + hi - 1) / 2 + a * (hi - lo) + (row - hi) * col;
  };
  __int128 total = lower ? clamp_sum(__int128(offset) + 1) : __int128(row) * col - clamp_sum(offset);
  EMBER_CHECK(total <= INT64_MAX, name, ": Storage size calculation overflowed (", row, " x ", col, ")");
  int64_t n = int64_t(total);
  check_output_size({2, n}, 8, name);
  Tensor out = empty_tensor({2, n}, kLong);
  int64_t* p = static_cast<int64_t*>(out.data_ptr());
  int64_t k = 0;
  // rows with no entries are skipped: they lie before (lower) or after (upper) the band
  int64_t i0 = lower ? int64_t(std::min<__int128>(row, std::max<__int128>(0, -__int128(offset)))) : 0;
  for (int64_t i = i0; i < row && k < n; i++)
    for (int64_t j = int64_t(begin(i)), j1 = int64_t(end(i)); j < j1; j++, k++) {
      p[k] = i;
      p[n + k] = j;
    }
  return out.to(dt);
}
}  // namespace

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& o) {
  return tri_indices(row, col, offset, o, true);
}
Tensor triu_indices(int64_t row, int64_t col, int64_t offset, const TensorOptions& o) {
  return tri_indices(row, col, offset, o, false);
}

// ---------------------------------------------------------------- grids and combinations
std::vector<Tensor> meshgrid(TensorList tensors, std::optional<std::string_view> indexing_opt) {
  int64_t n = int64_t(tensors.size());
  EMBER_CHECK(n > 0, "meshgrid expects a non-empty TensorList");
  for (int64_t i = 0; i + 1 < n; i++)
    EMBER_CHECK(tensors[i].dtype() == tensors[i + 1].dtype(), "meshgrid expects all tensors to have the same dtype");
  std::string_view indexing = indexing_opt ? *indexing_opt : std::string_view("ij");
  std::vector<Tensor> ts(tensors.begin(), tensors.end());
  bool swap = false;
  if (indexing == "xy") {
    swap = n >= 2;
    if (swap) std::swap(ts[0], ts[1]);
  } else {
    EMBER_CHECK(indexing == "ij", "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: ", indexing);
  }
  DimVector shape;
  for (const Tensor& t : ts) {
    EMBER_CHECK(t.dim() <= 1, "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: ", t.sizes());
    shape.push_back(t.numel());
  }
  std::vector<Tensor> grids;
  DimVector view_shape(size_t(n), 1);
  for (int64_t i = 0; i < n; i++) {
    view_shape[i] = -1;
    grids.push_back(ts[i].reshape(view_shape).expand(shape));
    view_shape[i] = 1;
  }
  if (swap) std::swap(grids[0], grids[1]);
  return grids;
}

Tensor cartesian_prod(TensorList tensors) {
  for (const Tensor& t : tensors) EMBER_CHECK(t.dim() == 1, "Expect a 1D vector, but got shape ", t.sizes());
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> grids = ember::meshgrid(tensors, std::string_view("ij"));
  for (Tensor& g : grids) g = g.flatten(0, -1);
  return ember::stack(grids, 1);
}

Tensor combinations(const Tensor& self, int64_t r, bool with_replacement) {
  EMBER_CHECK(self.dim() == 1, "Expect a 1D vector, but got shape ", self.sizes());
  EMBER_CHECK(r >= 0, "Expect a non-negative number, but got ", r);
  if (r == 0) return empty_tensor({0}, self.dtype());
  int64_t n = self.numel();
  // how many tuples there are, C(n, r) or C(n + r - 1, r) in 128 bits, stopping once past int64:
  // the [count, r] output is checked before any tuple (or the r-element cursor) is built
  __int128 count = 0;
  if (n > 0 && (with_replacement || r <= n)) {
    __int128 top = with_replacement ? __int128(n) + r - 1 : __int128(n);
    __int128 k = std::min<__int128>(r, top - r);
    count = 1;
    for (__int128 i = 1; i <= k && count <= INT64_MAX; i++) count = count * (top - k + i) / i;
  }
  EMBER_CHECK(count <= INT64_MAX, "combinations: the number of combinations of ", n, " elements taken ", r,
              " at a time does not fit in int64");
  check_output_size({int64_t(count), r}, 8, "combinations");
  if (count == 0) return empty_tensor({0, r}, self.dtype());  // (no r-element cursor for r = 2**32)
  // every non-decreasing (with replacement) or increasing index tuple, in lexicographic order
  std::vector<int64_t> flat, cur(size_t(r), 0);
  flat.reserve(size_t(count * r));
  if (n > 0 && (with_replacement || r <= n)) {
    if (!with_replacement)
      for (int64_t i = 0; i < r; i++) cur[size_t(i)] = i;
    while (true) {
      flat.insert(flat.end(), cur.begin(), cur.end());
      int64_t i = r - 1;
      while (i >= 0 && cur[size_t(i)] == (with_replacement ? n - 1 : n - r + i)) i--;
      if (i < 0) break;
      cur[size_t(i)]++;
      for (int64_t j = i + 1; j < r; j++) cur[size_t(j)] = with_replacement ? cur[size_t(i)] : cur[size_t(j - 1)] + 1;
    }
  }
  int64_t k = int64_t(flat.size()) / r;
  Tensor idx = empty_tensor({int64_t(flat.size())}, kLong);
  std::copy(flat.begin(), flat.end(), static_cast<int64_t*>(idx.data_ptr()));
  return ember::index_select(self, 0, idx).reshape({k, r});
}

// ---------------------------------------------------------------- searchsorted, bucketize
namespace {

ScalarType check_search_out(const Tensor& out, bool out_int32) {
  ScalarType od = out.dtype();
  EMBER_CHECK((od == kLong && !out_int32) || (od == kInt && out_int32),
              "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending "
              "on whether out_int32 flag is True, but we got output tensor's dtype ", od, " and out_int32 flag is ",
              out_int32 ? "True" : "False");
  return od;
}

Tensor search_impl(const Tensor& seq, const Tensor& input, bool out_int32, bool right,
                   std::optional<std::string_view> side, const Tensor& sorter) {
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", "torch.searchsorted(): side can only be 'left' or 'right' but got ",
                *side);
    EMBER_CHECK(!right || *side == "right", "torch.searchsorted(): side and right can't be set to opposites, got side of ",
                *side, " while right was True");
    right = *side == "right";
  }
  if (sorter.defined()) {
    EMBER_CHECK(sorter.sizes() == seq.sizes(), "torch.searchsorted(): boundary and sorter must have the same size, but "
                "got boundary tensor ", seq.sizes(), "and got sorter tensor ", sorter.sizes());
    EMBER_CHECK(sorter.dtype() == kLong, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
                sorter.dtype());
    if (sorter.numel() > 0) {
      int64_t lo = ember::amin(sorter, {}, false).item().to_long(), hi = ember::amax(sorter, {}, false).item().to_long();
      EMBER_CHECK(lo >= 0 && hi < sorter.sizes().back(), "torch.searchsorted(): sorter index out of range");
    }
  }
  EMBER_CHECK(input.dim() > 0 || (input.dim() == 0 && input.numel() == 1 && seq.dim() == 1),
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got "
              "boundaries tensor dim(", seq.dim(), ") and input value's dim(", input.dim(), ") numel(", input.numel(), ")");
  EMBER_CHECK(seq.dim() != 0, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  bool matched = seq.dim() == input.dim();
  for (int64_t i = 0; matched && i + 1 < seq.dim(); i++) matched = seq.sizes()[i] == input.sizes()[i];
  EMBER_CHECK(seq.dim() == 1 || matched, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
              "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              seq.sizes(), " and input value tensor ", input.sizes());
  Tensor both[2] = {seq, input};
  ScalarType cd = seq.dtype() == input.dtype() ? seq.dtype() : result_type(both, 2);
  EMBER_CHECK_KIND(cd != kBool, NotImplemented, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  if (is_reduced_float(cd)) cd = kFloat;  // exact: half/bfloat16 values compare the same in float
  Tensor b = seq.to(cd).contiguous(), v = input.to(cd).contiguous();
  Tensor so = sorter.defined() ? sorter.contiguous() : Tensor();
  const int64_t* sp = so.defined() ? static_cast<const int64_t*>(so.data_ptr()) : nullptr;
  Tensor out = empty_tensor(input.sizes(), kLong);
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  int64_t m = seq.sizes().back(), nv = v.numel();
  int64_t per_row = input.dim() ? input.sizes().back() : 1;
  EMBER_DISPATCH_ALL(cd, "searchsorted_out_cpu", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>) {
      EMBER_FAIL(Runtime, "searchsorted: unexpected dtype");
    } else {
      const T* bp = static_cast<const T*>(b.data_ptr());
      const T* vp = static_cast<const T*>(v.data_ptr());
      parallel_for(0, nv, 2048, [&](int64_t lo_i, int64_t hi_i) {
        for (int64_t i = lo_i; i < hi_i; i++) {
          int64_t row = seq.dim() == 1 ? 0 : i / per_row;
          const T* bd = bp + row * m;
          const int64_t* sr = sp ? sp + row * m : nullptr;
          T val = vp[i];
          int64_t start = 0, end = m;
          while (start < end) {
            int64_t mid = start + ((end - start) >> 1);
            T mv = sr ? bd[sr[mid]] : bd[mid];
            bool go_right = right ? !(mv > val) : !(mv >= val);
            if (go_right) start = mid + 1;
            else end = mid;
          }
          op[i] = start;
        }
      });
    }
  });
  return out_int32 ? out.to(kInt) : out;
}

}  // namespace

Tensor searchsorted(const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  return search_impl(seq, self, out_int32, right, side, sorter);
}
const Tensor& searchsorted_out(const Tensor& out, const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                               std::optional<std::string_view> side, const Tensor& sorter) {
  check_search_out(out, out_int32);
  return copy_to_out(out, search_impl(seq, self, out_int32, right, side, sorter), true);
}
Tensor searchsorted(const Tensor& seq, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  return search_impl(seq, scalar_to_tensor(self), out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return search_impl(boundaries, self, out_int32, right, std::nullopt, Tensor());
}
const Tensor& bucketize_out(const Tensor& out, const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  check_search_out(out, out_int32);
  return copy_to_out(out, search_impl(boundaries, self, out_int32, right, std::nullopt, Tensor()), true);
}
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return native::bucketize(scalar_to_tensor(self), boundaries, out_int32, right);
}

// ---------------------------------------------------------------- histc, bincount
Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"histogram_cpu\" not implemented for '", self.dtype(), "'");
  EMBER_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  double left = min.to_double(), right = max.to_double();
  if (left == right && self.numel() > 0) {
    left = ember::amin(self, {}, false).item().to_double();
    right = ember::amax(self, {}, false).item().to_double();
  }
  if (left == right) {
    left -= 1;
    right += 1;
  }
  EMBER_CHECK(!(std::isinf(left) || std::isinf(right) || std::isnan(left) || std::isnan(right)),
              "torch.histc: range of [", left, ", ", right, "] is not finite");
  EMBER_CHECK(left < right, "torch.histc: max must be larger than min");
  // the edges are the input dtype's values of left and right; positions computed in that precision
  Tensor edges = ember::full({2}, 0.0, TensorOptions(self.dtype()));
  edges.select(0, 0).fill_(left);
  edges.select(0, 1).fill_(right);
  check_output_size({bins}, 8, "histc");
  std::vector<int64_t> counts(size_t(bins), 0);
  Tensor x = self.to(kDouble).contiguous(), e = edges.to(kDouble);
  const double* xp = static_cast<const double*>(x.data_ptr());
  const double lo = static_cast<const double*>(e.data_ptr())[0], hi = static_cast<const double*>(e.data_ptr())[1];
  EMBER_DISPATCH_ALL(self.dtype(), "histogram_cpu", [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
      // each step rounded to the input dtype, as PyTorch computes the bin in that dtype (double
      // rounding from double is exact for +-*/ into float, half and bfloat16)
      auto q = [](double v) { return double(S(v)); };
      for (int64_t i = 0; i < x.numel(); i++) {
        double v = xp[i];
        if (!(v >= lo && v <= hi)) continue;  // outside the range, and NaN
        int64_t pos = int64_t(q(q(q(v - lo) * q(double(bins))) / q(hi - lo)));
        if (pos == bins) pos -= 1;
        counts[size_t(pos)]++;
      }
    }
  });
  Tensor out = empty_tensor({bins}, kLong);
  std::copy(counts.begin(), counts.end(), static_cast<int64_t*>(out.data_ptr()));
  return out.to(self.dtype());
}
const Tensor& histc_out(const Tensor& out, const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::histc(self, bins, min, max), true);
}

Tensor bincount(const Tensor& self, const Tensor& weights, int64_t minlength) {
  EMBER_CHECK_KIND(is_integral(self.dtype(), false), NotImplemented, "\"bincount_cpu\" not implemented for '",
                   self.dtype(), "'");
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  if (self.dim() == 1 && self.numel() == 0) return ember::zeros({minlength}, TensorOptions(kLong));
  std::vector<int64_t> v = self.dim() == 1 ? long_values(self) : std::vector<int64_t>();
  int64_t mx = -1, mn = 0;
  for (int64_t x : v) {
    mx = std::max(mx, x);
    mn = std::min(mn, x);
  }
  EMBER_CHECK(self.dim() == 1 && mn >= 0, "bincount only supports 1-d non-negative integral inputs.");
  EMBER_CHECK(!(weights.defined() && (weights.dim() != 1 || weights.sizes()[0] != self.sizes()[0])),
              "weights should be 1-d and have the same length as input");
  int64_t nbins = std::max(mx + 1, minlength);
  if (!weights.defined()) {
    Tensor out = ember::zeros({nbins}, TensorOptions(kLong));
    int64_t* o = static_cast<int64_t*>(out.data_ptr());
    for (int64_t x : v) o[x]++;
    return out;
  }
  ScalarType wd = weights.dtype() == kFloat ? kFloat : kDouble;
  Tensor w = weights.to(wd).contiguous();
  Tensor out = ember::zeros({nbins}, TensorOptions(wd));
  if (wd == kFloat) {
    const float* wp = static_cast<const float*>(w.data_ptr());
    float* o = static_cast<float*>(out.data_ptr());
    for (size_t i = 0; i < v.size(); i++) o[v[i]] += wp[i];
  } else {
    const double* wp = static_cast<const double*>(w.data_ptr());
    double* o = static_cast<double*>(out.data_ptr());
    for (size_t i = 0; i < v.size(); i++) o[v[i]] += wp[i];
  }
  return out;
}

// ---------------------------------------------------------------- cdist, cross
Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<std::string_view> compute_mode) {
  int64_t mode = 0;
  if (compute_mode && *compute_mode != "use_mm_for_euclid_dist_if_necessary") {
    if (*compute_mode == "use_mm_for_euclid_dist") mode = 1;
    else if (*compute_mode == "donot_use_mm_for_euclid_dist") mode = 2;
    else EMBER_FAIL(Value, *compute_mode, " is not a valid value for compute_mode");
  }
  EMBER_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  EMBER_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  EMBER_CHECK(x1.sizes().back() == x2.sizes().back(), "X1 and X2 must have the same number of columns. X1: ",
              x1.sizes().back(), " X2: ", x2.sizes().back());
  EMBER_CHECK(is_floating(x1.dtype()), "cdist only supports floating-point dtypes, X1 got: ", x1.dtype());
  EMBER_CHECK(is_floating(x2.dtype()), "cdist only supports floating-point dtypes, X2 got: ", x2.dtype());
  EMBER_CHECK(p >= 0, "cdist only supports non-negative p values");
  EMBER_CHECK_KIND(!is_reduced_float(x1.dtype()), NotImplemented, "\"cdist\" not implemented for '", x1.dtype(), "'");
  EMBER_CHECK(x1.dtype() == x2.dtype(), "expected scalar type ", x1.dtype(), " but found ", x2.dtype());
  int64_t r1 = x1.sizes()[x1.dim() - 2], r2 = x2.sizes()[x2.dim() - 2], c = x1.sizes().back();
  DimVector b1(IntArrayRef(x1.sizes().data(), size_t(x1.dim() - 2))), b2(IntArrayRef(x2.sizes().data(), size_t(x2.dim() - 2)));
  DimVector batch = broadcast_shapes(b1, b2);
  DimVector s1(batch), s2(batch);
  s1.push_back(r1);
  s1.push_back(c);
  s2.push_back(r2);
  s2.push_back(c);
  Tensor a = x1.expand(s1), b = x2.expand(s2);
  if (p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25))) && a.numel() && b.numel()) {
    // PyTorch's matrix-product form: |a|^2 + |b|^2 - 2 a.b, clamped and square-rooted
    const std::vector<int64_t> last = {-1};
    Tensor an = ember::sum(a * a, last, true, std::nullopt), bn = ember::sum(b * b, last, true, std::nullopt);
    Tensor a_ = ember::cat({a * -2, an, ember::ones_like(an, {})}, -1);
    Tensor b_ = ember::cat({b, ember::ones_like(bn, {}), bn}, -1);
    return ember::clamp_min(ember::matmul(a_, b_.mT()), scalar_to_tensor(1e-30)).sqrt();
  }
  // the direct form, pair by pair (a [..., r1, r2, c] difference tensor would not fit large inputs)
  int64_t nb = 1;
  for (int64_t v : batch) nb *= v;
  Tensor ac = a.contiguous().reshape({nb, r1, c}), bc = b.contiguous().reshape({nb, r2, c});
  DimVector out_shape(batch);
  out_shape.push_back(r1);
  out_shape.push_back(r2);
  Tensor out = empty_tensor({nb, r1, r2}, x1.dtype());
  EMBER_DISPATCH_ALL(x1.dtype(), "cdist", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* ap = static_cast<const T*>(ac.data_ptr());
      const T* bp = static_cast<const T*>(bc.data_ptr());
      T* op = static_cast<T*>(out.data_ptr());
      const T tp = T(p);
      parallel_for(0, nb * r1, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, r2 * c)), [&](int64_t lo, int64_t hi) {
        for (int64_t row = lo; row < hi; row++) {
          const T* x = ap + row * c;
          const T* yb = bp + (row / r1) * r2 * c;
          for (int64_t j = 0; j < r2; j++) {
            const T* y = yb + j * c;
            T acc = 0;
            if (p == 0) {
              for (int64_t k = 0; k < c; k++) acc += T(x[k] != y[k]);
            } else if (p == 1) {
              for (int64_t k = 0; k < c; k++) acc += std::abs(x[k] - y[k]);
            } else if (p == 2) {
              for (int64_t k = 0; k < c; k++) acc += (x[k] - y[k]) * (x[k] - y[k]);
              acc = std::sqrt(acc);
            } else if (std::isinf(p)) {
              for (int64_t k = 0; k < c; k++) acc = std::max(acc, std::abs(x[k] - y[k]));
            } else {
              for (int64_t k = 0; k < c; k++) acc += std::pow(std::abs(x[k] - y[k]), tp);
              acc = std::pow(acc, T(1) / tp);
            }
            op[row * r2 + j] = acc;
          }
        }
      });
    }
  });
  return out.reshape(out_shape);
}

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  EMBER_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  int64_t d = wrap_existing_dim(dim, self.dim());
  EMBER_CHECK(self.sizes()[d] == 3 && other.sizes()[d] == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.sizes()[d], " and ", other.sizes()[d]);
  EMBER_CHECK(self.dtype() == other.dtype(), "expected scalar type ", self.dtype(), " but found ", other.dtype());
  EMBER_CHECK_KIND(self.dtype() != kBool, NotImplemented, "\"cross\" not implemented for 'Bool'");
  DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  Tensor a = self.expand(shape), b = other.expand(shape);
  auto c = [&](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return ember::cat({c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
                     c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)},
                    d);
}
const Tensor& linalg_cross_out(const Tensor& out, const Tensor& self, const Tensor& other, int64_t dim) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::linalg_cross(self, other, dim), true);
}

namespace {
int64_t default_cross_dim(const Tensor& self, std::optional<int64_t> dim) {
  if (dim) return *dim;
  for (int64_t i = 0; i < self.dim(); i++)
    if (self.sizes()[i] == 3) return i;
  EMBER_FAIL(Runtime, "no dimension of size 3 in input");
}
}  // namespace

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  return ember::linalg_cross(self, other, default_cross_dim(self, dim));
}
const Tensor& cross_out(const Tensor& out, const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  return ember::linalg_cross_out(out, self, other, default_cross_dim(self, dim));
}

}  // namespace ember::native
