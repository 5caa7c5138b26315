// Advanced indexing. x[i0, i1, ...] with index tensors: boolean masks become their nonzero()
// coordinates, all index tensors broadcast to one shape B, and the indexed dims are gathered as
// rows of a [prod(indexed sizes), rest] matrix. The result has shape before + B + after when the
// indexed dims are adjacent, else B + rest (NumPy's rule, as PyTorch). An undefined Tensor in
// `indices` stands for a full slice. Row copies live in kernels/cpu/indexing.cpp. Below them, the
// composites built on index/index_put_: index_copy, index_fill, masked_scatter, take, take_along_dim.
#include <sstream>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/indexing.h"
#include "ember/ops/host_values.h"

EMBER_DEFINE_STUB(nonzero_stub)
EMBER_DEFINE_STUB(index_linearize_stub)
EMBER_DEFINE_STUB(index_rows_stub)
EMBER_DEFINE_STUB(index_put_rows_stub)

namespace ember::native {

Tensor nonzero(const Tensor& self) {
  auto kernel = nonzero_stub(self.device(), "nonzero");
  Tensor b = (self.dtype() == kBool ? self : ember::ne(self, scalar_to_tensor(int64_t(0)))).contiguous();
  return kernel(b, self.sizes());
}

namespace {

// Masks -> nonzero coordinates; checks dtypes and mask shapes.
std::vector<Tensor> expand_masks(const Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  int64_t dim = 0;
  for (const Tensor& idx_in : indices) {
    if (!idx_in.defined()) {
      out.push_back(Tensor());
      dim++;
      continue;
    }
    // indices may live on the CPU whatever self's device (PyTorch moves them), or on self's device
    Tensor idx = idx_in.device() == self.device() || !idx_in.device().is_cpu() ? idx_in : idx_in.to(self.device());
    EMBER_CHECK(idx.device() == self.device(), "indices should be either on cpu or on the same device as the indexed "
                "tensor (", self.device(), ")");
    if (idx.dtype() == kBool || idx.dtype() == kByte) {
      for (int64_t j = 0; j < idx.dim(); j++) {
        EMBER_CHECK_KIND(dim + j < self.dim(), Index, "too many indices for tensor of dimension ", self.dim());
        EMBER_CHECK_KIND(idx.sizes()[j] == self.sizes()[dim + j], Index, "The shape of the mask ", idx.sizes(),
                         " at index ", j, " does not match the shape of the indexed tensor ", self.sizes(),
                         " at index ", dim + j);
      }
      Tensor nz = native::nonzero(idx);
      for (int64_t j = 0; j < idx.dim(); j++) out.push_back(nz.select(1, j));
      dim += idx.dim();
    } else {
      EMBER_CHECK_KIND(idx.dtype() == kLong || idx.dtype() == kInt, Index,
                       "tensors used as indices must be long, int, byte or bool tensors");
      out.push_back(idx);
      dim++;
    }
  }
  EMBER_CHECK_KIND(dim <= std::max<int64_t>(self.dim(), 0), Index, "too many indices for tensor of dimension ", self.dim());
  while (int64_t(out.size()) < self.dim()) out.push_back(Tensor());
  return out;
}

struct IndexPlan {
  DimVector perm;        // indexed dims first, then the rest
  DimVector bshape;      // broadcast index shape B
  DimVector rest_shape;  // sizes of the non-indexed dims, in order
  int64_t first_indexed = 0;
  bool adjacent = true;
  int64_t n_indexed_dims = 0;
  Tensor lin;            // int64 [numel(B)]: row of the [prod(indexed), rest] matrix
  int64_t rows = 1;      // prod of indexed sizes
};

IndexPlan plan(const Tensor& self, const std::vector<Tensor>& idx, const char* op) {
  IndexPlan p;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < int64_t(idx.size()); d++)
    if (idx[d].defined()) dims.push_back(d);
  p.n_indexed_dims = int64_t(dims.size());
  p.first_indexed = dims.empty() ? 0 : dims[0];
  for (size_t k = 1; k < dims.size(); k++)
    if (dims[k] != dims[k - 1] + 1) p.adjacent = false;
  for (int64_t d : dims) p.perm.push_back(d);
  for (int64_t d = 0; d < self.dim(); d++)
    if (!idx[d].defined()) { p.perm.push_back(d); p.rest_shape.push_back(self.sizes()[d]); }
  // broadcast the index tensors (an IndexError when they cannot be, as in PyTorch)
  for (int64_t d : dims) {
    if (d == dims[0]) { p.bshape = DimVector(idx[d].sizes()); continue; }
    IntArrayRef a = p.bshape, b = idx[d].sizes();
    bool ok = true;
    for (size_t k = 0; k < std::min(a.size(), b.size()); k++) {
      int64_t x = a[a.size() - 1 - k], y = b[b.size() - 1 - k];
      ok = ok && (x == y || x == 1 || y == 1);
    }
    if (!ok) {
      std::ostringstream shapes;
      for (size_t k = 0; k < dims.size(); k++) shapes << (k ? ", " : "") << idx[dims[k]].sizes();
      EMBER_FAIL(Index, "shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes.str());
    }
    p.bshape = broadcast_shapes(p.bshape, b);
  }
  auto linearize = index_linearize_stub(self.device(), op);
  // (with no index tensor, the one row is row 0)
  p.lin = dims.empty() ? ember::zeros({1}, TensorOptions(kLong).device(self.device()))
                       : empty_tensor({prod(p.bshape)}, kLong, self.device());
  int64_t mult = 1;
  for (int64_t k = int64_t(dims.size()) - 1; k >= 0; k--) {
    int64_t d = dims[size_t(k)], size = self.sizes()[d];
    bool first = k == int64_t(dims.size()) - 1;
    linearize(p.lin, idx[d].to(kLong).expand(p.bshape).contiguous(), size, mult, d, /*accumulate=*/!first);
    mult *= size;
  }
  p.rows = mult;
  return p;
}

// Order of the result dims: B first then rest; with adjacent indexed dims B moves to where they were.
DimVector result_perm(const IndexPlan& p, int64_t nb_dims) {
  int64_t nrest = int64_t(p.rest_shape.size());
  DimVector perm;
  if (!p.adjacent || p.first_indexed == 0) {
    for (int64_t i = 0; i < nb_dims + nrest; i++) perm.push_back(i);
    return perm;
  }
  for (int64_t i = 0; i < p.first_indexed; i++) perm.push_back(nb_dims + i);
  for (int64_t i = 0; i < nb_dims; i++) perm.push_back(i);
  for (int64_t i = p.first_indexed; i < nrest; i++) perm.push_back(nb_dims + i);
  return perm;
}

}  // namespace

Tensor index(const Tensor& self, TensorList indices_in) {
  std::vector<Tensor> idx = expand_masks(self, indices_in);
  IndexPlan p = plan(self, idx, "index");
  auto kernel = index_rows_stub(self.device(), "index");
  Tensor src = self.permute(p.perm).contiguous();
  DimVector out_shape(p.bshape);
  for (int64_t s : p.rest_shape) out_shape.push_back(s);
  Tensor out = empty_tensor(out_shape, self.dtype(), self.device());
  kernel(out, src, p.lin, prod(p.rest_shape));
  DimVector rp = result_perm(p, int64_t(p.bshape.size()));
  return out.permute(rp);
}

const Tensor& index_put_(const Tensor& self, TensorList indices_in, const Tensor& values_in, bool accumulate) {
  std::vector<Tensor> idx = expand_masks(self, indices_in);  // index errors come first
  EMBER_CHECK(values_in.dtype() == self.dtype(), "Index put requires the source and destination dtypes match, got ",
              self.dtype(), " for the destination and ", values_in.dtype(), " for the source.");
  // leading size-1 dims of the values are dropped before broadcasting, as in PyTorch
  int64_t lead = 0;
  while (lead < values_in.dim() && values_in.sizes()[lead] == 1) lead++;
  // a 0-d CPU value may fill a tensor on any device, as in PyTorch
  if (values_in.device() != self.device() && !(values_in.dim() == 0 && values_in.device().is_cpu()))
    fail_device_mismatch("index_put_", self.device(), values_in.device());
  Tensor values = lead ? values_in.reshape(IntArrayRef(values_in.sizes().data() + lead, size_t(values_in.dim() - lead)))
                       : values_in;
  IndexPlan p = plan(self, idx, "index_put_");
  auto kernel = index_put_rows_stub(self.device(), "index_put_");
  int64_t nbd = int64_t(p.bshape.size());
  // values are given in the result's dim order; bring them to [B..., rest...] order
  DimVector rp = result_perm(p, nbd);
  DimVector natural_shape(size_t(rp.size()));
  DimVector bshape_rest(p.bshape);
  for (int64_t s : p.rest_shape) bshape_rest.push_back(s);
  for (size_t i = 0; i < rp.size(); i++) natural_shape[i] = bshape_rest[rp[i]];
  DimVector inv(size_t(rp.size()));
  for (size_t i = 0; i < rp.size(); i++) inv[rp[i]] = int64_t(i);
  Tensor v = values.to(self.device()).to(self.dtype()).expand(natural_shape).permute(inv).contiguous();
  Tensor target = self.permute(p.perm);
  bool direct = target.is_contiguous();
  Tensor work = direct ? target : target.contiguous();
  self.impl()->bump_version();
  kernel(work, v, p.lin, prod(p.rest_shape), accumulate);
  if (!direct) ember::copy_(target, work);
  return self;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  EMBER_CHECK_KIND(index.dim() <= 1, Index, "index_select(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  check_same_device("index_select", self.device(), {&index});
  index_rows_stub(self.device(), "index_select");  // (a device without the kernel raises naming this op)
  dim = wrap_dim(dim, self.dim());
  std::vector<Tensor> idx(static_cast<size_t>(dim), Tensor());
  idx.push_back(index.reshape({-1}));
  Tensor r = native::index(self.dim() == 0 ? self.reshape({1}) : self, idx);
  return self.dim() == 0 ? r.reshape({}) : r;
}
const Tensor& index_select_out(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  EMBER_CHECK(out.dtype() == self.dtype(), "index_select(): self and result must have the same scalar type");
  check_out_shares_nothing(out, self);
  check_out_shares_nothing(out, index);
  Tensor r = native::index_select(self, dim, index);
  resize_output(out, r.sizes());
  return ember::copy_(out, r);
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_select: expected BoolTensor for mask");
  check_same_device("masked_select", self.device(), {&mask});
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  if (shape.empty()) shape.push_back(1);  // 0-d operands select from a 1-element vector, as PyTorch's
  return native::index(self.expand(shape), {mask.expand(shape)});
}
const Tensor& masked_select_out(const Tensor& out, const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(out.dtype() == self.dtype(), "masked_select(): self and result must have the same scalar type");
  check_out_shares_nothing(out, self);
  check_out_shares_nothing(out, mask);
  return copy_to_out(out, native::masked_select(self, mask), true);
}

namespace {
// The index list for index_put_ that addresses `index` along `dim` (full slices before it).
std::vector<Tensor> dim_indices(int64_t dim, const Tensor& index) {
  std::vector<Tensor> idx(static_cast<size_t>(dim), Tensor());
  idx.push_back(index.reshape({-1}));
  return idx;
}
}  // namespace

// ---------------------------------------------------------------- index_copy, index_fill, masked_scatter
const Tensor& index_copy_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  check_same_device("index_copy_", self.device(), {&index, &source});
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
  for (int64_t v : host_int64_values(index))
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
  check_same_device("index_fill_", self.device(), {&index});
  Tensor s = self.dim() == 0 ? self.unsqueeze(-1) : self;
  dim = wrap_dim(dim, s.dim());
  EMBER_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  int64_t size = s.sizes()[dim];
  for (int64_t v : host_int64_values(index))
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
  check_same_device("masked_scatter_", self.device(), {&mask, &source});
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
  check_same_device("masked_scatter", self.device(), {&mask, &source});
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  Tensor r = empty_tensor(shape, self.dtype(), self.device());
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
  check_same_device("take", self.device(), {&index});
  index_rows_stub(self.device(), "take");
  int64_t n = self.numel();
  EMBER_CHECK_KIND(n > 0 || index.numel() == 0, Index, "take(): tried to take from an empty tensor");
  for (int64_t v : host_int64_values(index))
    EMBER_CHECK_KIND(v >= -n && v < n, Index, "out of range: tried to access index ", v, " on a tensor of ", n,
                     " elements.");
  if (index.numel() == 0) return empty_tensor(index.sizes(), self.dtype(), self.device());
  return ember::index(self.reshape({-1}), {index});
}
const Tensor& take_out(const Tensor& out, const Tensor& self, const Tensor& index) {
  EMBER_CHECK(out.dtype() == self.dtype(), "take(): self and out expected to have the same dtype, but got self.dtype = ",
              self.dtype(), " and out.dtype = ", out.dtype());
  check_out_shares_nothing(out, self);
  check_out_shares_nothing(out, index);
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
  Tensor idx = indices;
  if (const int64_t size = self.sizes()[d]; size > 0 && indices.numel() > 0) {
    // negative indices count from the end (modulo the size, as PyTorch's); too-large ones still raise in gather
    idx = ember::where(ember::lt(indices, Scalar(int64_t(0))), ember::remainder(indices, Scalar(size)), indices);
  }
  Tensor ib = idx.expand(broadcast_shapes(ss, indices.sizes()));
  is[d] = self.sizes()[d];
  Tensor sb = self.expand(broadcast_shapes(is, self.sizes()));
  return ember::gather(sb, d, ib);
}
const Tensor& take_along_dim_out(const Tensor& out, const Tensor& self, const Tensor& indices, std::optional<int64_t> dim) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::take_along_dim(self, indices, dim), true);
}

}  // namespace ember::native
