// Advanced indexing. x[i0, i1, ...] with index tensors: boolean masks become their nonzero()
// coordinates, all index tensors broadcast to one shape B, and the indexed dims are gathered as
// rows of a [prod(indexed sizes), rest] matrix. The result has shape before + B + after when the
// indexed dims are adjacent, else B + rest (NumPy's rule, as PyTorch). An undefined Tensor in
// `indices` stands for a full slice.
#include <cstring>
#include <sstream>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

Tensor nonzero(const Tensor& self) {
  Tensor b = (self.dtype() == kBool ? self : ember::ne(self, scalar_to_tensor(int64_t(0)))).contiguous();
  const bool* p = static_cast<const bool*>(b.data_ptr());
  int64_t n = b.numel(), nd = self.dim(), count = 0;
  for (int64_t i = 0; i < n; i++) count += p[i];
  Tensor out = empty_tensor({count, nd}, kLong);
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  DimVector idx(size_t(nd), 0);
  for (int64_t i = 0; i < n; i++) {
    if (p[i]) {
      for (int64_t d = 0; d < nd; d++) *o++ = idx[d];
    }
    for (int64_t d = nd - 1; d >= 0; d--) {
      if (++idx[d] < self.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

namespace {

// Masks -> nonzero coordinates; checks dtypes and mask shapes.
std::vector<Tensor> expand_masks(const Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> out;
  int64_t dim = 0;
  for (const Tensor& idx : indices) {
    if (!idx.defined()) {
      out.push_back(Tensor());
      dim++;
      continue;
    }
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

IndexPlan plan(const Tensor& self, const std::vector<Tensor>& idx) {
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
  int64_t nb = prod(p.bshape);
  p.lin = empty_tensor({nb}, kLong);
  int64_t* lin = static_cast<int64_t*>(p.lin.data_ptr());
  for (int64_t i = 0; i < nb; i++) lin[i] = 0;
  int64_t mult = 1;
  for (int64_t k = int64_t(dims.size()) - 1; k >= 0; k--) {
    int64_t d = dims[size_t(k)], size = self.sizes()[d];
    Tensor e = idx[d].to(kLong).expand(p.bshape).contiguous();
    const int64_t* ip = static_cast<const int64_t*>(e.data_ptr());
    for (int64_t i = 0; i < nb; i++) {
      int64_t v = ip[i];
      EMBER_CHECK_KIND(v >= -size && v < size, Index, "index ", v, " is out of bounds for dimension ", d,
                       " with size ", size);
      lin[i] += (v < 0 ? v + size : v) * mult;
    }
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
  IndexPlan p = plan(self, idx);
  Tensor src = self.permute(p.perm).contiguous();
  int64_t row_elems = prod(p.rest_shape);
  int64_t row_bytes = row_elems * self.element_size();
  int64_t nb = p.lin.numel();
  DimVector out_shape(p.bshape);
  for (int64_t s : p.rest_shape) out_shape.push_back(s);
  Tensor out = empty_tensor(out_shape, self.dtype());
  const char* sp = static_cast<const char*>(src.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  const int64_t* lin = static_cast<const int64_t*>(p.lin.data_ptr());
  if (row_bytes > 0)
    for (int64_t i = 0; i < nb; i++) std::memcpy(op + i * row_bytes, sp + lin[i] * row_bytes, size_t(row_bytes));
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
  Tensor values = lead ? values_in.reshape(IntArrayRef(values_in.sizes().data() + lead, size_t(values_in.dim() - lead)))
                       : values_in;
  IndexPlan p = plan(self, idx);
  int64_t nbd = int64_t(p.bshape.size());
  // values are given in the result's dim order; bring them to [B..., rest...] order
  DimVector rp = result_perm(p, nbd);
  DimVector natural_shape(size_t(rp.size()));
  DimVector bshape_rest(p.bshape);
  for (int64_t s : p.rest_shape) bshape_rest.push_back(s);
  for (size_t i = 0; i < rp.size(); i++) natural_shape[i] = bshape_rest[rp[i]];
  DimVector inv(size_t(rp.size()));
  for (size_t i = 0; i < rp.size(); i++) inv[rp[i]] = int64_t(i);
  Tensor v = values.to(self.dtype()).expand(natural_shape).permute(inv).contiguous();
  Tensor target = self.permute(p.perm);
  bool direct = target.is_contiguous();
  Tensor work = direct ? target : target.contiguous();
  int64_t row_elems = prod(p.rest_shape);
  int64_t isz = self.element_size(), row_bytes = row_elems * isz, nb = p.lin.numel();
  char* wp = static_cast<char*>(work.data_ptr());
  const char* vp = static_cast<const char*>(v.data_ptr());
  const int64_t* lin = static_cast<const int64_t*>(p.lin.data_ptr());
  self.impl()->bump_version();
  if (!accumulate) {
    if (row_bytes > 0)  // empty rows: the pointers may be null, which memcpy must not see
      for (int64_t i = 0; i < nb; i++) std::memcpy(wp + lin[i] * row_bytes, vp + i * row_bytes, size_t(row_bytes));
  } else {
    EMBER_DISPATCH_ALL(self.dtype(), "index_put_", [&](auto tag) {
      using T = decltype(tag);
      T* w = reinterpret_cast<T*>(wp);
      const T* vv = reinterpret_cast<const T*>(vp);
      for (int64_t i = 0; i < nb; i++)
        for (int64_t j = 0; j < row_elems; j++) {
          T& dst = w[lin[i] * row_elems + j];
          if constexpr (std::is_same_v<T, bool>) dst = dst || vv[i * row_elems + j];
          else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) dst = T(float(dst) + float(vv[i * row_elems + j]));
          else dst = wrapping_add(dst, vv[i * row_elems + j]);  // integers wrap, as PyTorch's
        }
    });
  }
  if (!direct) ember::copy_(target, work);
  return self;
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  EMBER_CHECK_KIND(index.dim() <= 1, Index, "index_select(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt,
              "index_select(): Expected dtype int32 or int64 for index");
  dim = wrap_dim(dim, self.dim());
  std::vector<Tensor> idx(static_cast<size_t>(dim), Tensor());
  idx.push_back(index.reshape({-1}));
  Tensor r = native::index(self.dim() == 0 ? self.reshape({1}) : self, idx);
  return self.dim() == 0 ? r.reshape({}) : r;
}
const Tensor& index_select_out(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  EMBER_CHECK(out.dtype() == self.dtype(), "index_select(): self and result must have the same scalar type");
  Tensor r = native::index_select(self, dim, index);
  resize_output(out, r.sizes());
  return ember::copy_(out, r);
}

Tensor masked_select(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == kBool, "masked_select: expected BoolTensor for mask");
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes());
  return native::index(self.expand(shape), {mask.expand(shape)});
}

}  // namespace ember::native
