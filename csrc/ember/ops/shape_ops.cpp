// Shape ops: stacking (hstack, vstack, dstack, column_stack), tensor_split and h/v/dsplit, ravel,
// broadcast_to, sum_to_size, flips and rot90,
// repeat, tile and repeat_interleave, diagonals (diag, diag_embed, diagflat, trace), tril/triu_indices,
// meshgrid, cartesian_prod and combinations.
//
// Most are composites of public ember:: ops (cat, narrow, flip, expand, index_select, ...), so their
// gradients come from those ops with no formula of their own. The few that write generated indices
// (repeat_interleave, tril/triu_indices, combinations) call kernels in kernels/cpu/shape.cpp.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "ember/autograd/engine.h"
#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/shape.h"
#include "ember/ops/host_values.h"

EMBER_DEFINE_STUB(repeat_interleave_stub)
EMBER_DEFINE_STUB(tri_indices_stub)
EMBER_DEFINE_STUB(combinations_stub)

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
  EMBER_CHECK(ios.device().is_cpu(), "tensor_split expected tensor_indices_or_sections to be on cpu, but it's on ",
              ios.device());
  if (ios.dim() == 0) return native::tensor_split(self, ios.item().to_long(), dim);
  std::vector<int64_t> idx = host_int64_values(ios);  // split points are host numbers
  return native::tensor_split(self, IntArrayRef(idx), dim);
}

// ---------------------------------------------------------------- hsplit / vsplit / dsplit
// tensor_split along dim 1 (dim 0 for 1-d tensors in hsplit), 0 and 2; numbers of sections must
// divide the dimension evenly (tensor_split's do not have to).
namespace {
int64_t direction_dim(const Tensor& self, const char* name, int64_t min_dim, int64_t dim) {
  EMBER_CHECK(self.dim() >= min_dim, "torch.", name, " requires a tensor with at least ", min_dim,
              " dimension, but got a tensor with ", self.dim(), " dimensions!");
  return dim;
}
std::vector<Tensor> split_even(const Tensor& self, int64_t sections, int64_t dim, const char* name) {
  int64_t n = self.sizes()[dim];
  EMBER_CHECK(sections != 0 && n % sections == 0, "torch.", name, " attempted to split along dimension ", dim,
              ", but the size of the dimension ", n, " is not divisible by the split_size ", sections, "!");
  return native::tensor_split(self, sections, dim);
}
int64_t hdim(const Tensor& self) { return direction_dim(self, "hsplit", 1, self.dim() == 1 ? 0 : 1); }
}  // namespace

std::vector<Tensor> hsplit(const Tensor& self, int64_t sections) { return split_even(self, sections, hdim(self), "hsplit"); }
std::vector<Tensor> hsplit(const Tensor& self, IntArrayRef indices) { return native::tensor_split(self, indices, hdim(self)); }
std::vector<Tensor> vsplit(const Tensor& self, int64_t sections) {
  return split_even(self, sections, direction_dim(self, "vsplit", 2, 0), "vsplit");
}
std::vector<Tensor> vsplit(const Tensor& self, IntArrayRef indices) {
  return native::tensor_split(self, indices, direction_dim(self, "vsplit", 2, 0));
}
std::vector<Tensor> dsplit(const Tensor& self, int64_t sections) {
  return split_even(self, sections, direction_dim(self, "dsplit", 3, 2), "dsplit");
}
std::vector<Tensor> dsplit(const Tensor& self, IntArrayRef indices) {
  return native::tensor_split(self, indices, direction_dim(self, "dsplit", 3, 2));
}

// ---------------------------------------------------------------- ravel, broadcast_to, sum_to_size
Tensor ravel(const Tensor& self) { return ember::reshape(self, {-1}); }
Tensor broadcast_to(const Tensor& self, IntArrayRef size) { return self.expand(size); }

Tensor sum_to_size(const Tensor& self, IntArrayRef size) {
  // `size` must broadcast to self's shape (each dim equal or 1, aligned from the right)
  bool ok = int64_t(size.size()) <= self.dim();
  for (size_t i = 0; ok && i < size.size(); i++) {
    int64_t s = size[size.size() - 1 - i], t = self.sizes()[self.dim() - 1 - int64_t(i)];
    ok = s == t || s == 1;
  }
  if (!ok) {
    std::ostringstream os;
    os << "size {" << size << "} is not expandable to size {" << self.sizes() << "}.";
    EMBER_FAIL(Runtime, os.str());
  }
  if (size.empty()) return ember::sum(self);  // to a scalar: a sum even of a 0-d tensor (ints become int64), as torch
  return autograd::sum_to(self, size);
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
  auto kernel = repeat_interleave_stub(repeats.device(), "repeat_interleave");
  Tensor out = kernel(repeats.to(kLong).contiguous(), output_size);
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
  // (the repeats may be given on the CPU for an input on any device)
  Tensor index = native::repeat_interleave(reps.contiguous(), output_size).to(input.device(), kLong);
  return ember::index_select(input, d, index);
}

Tensor repeat_interleave(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats >= 0, "Repeats must be non-negative");
  return native::repeat_interleave(self, ember::full({}, repeats, TensorOptions(kLong)), dim, output_size);
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
  Tensor r = ember::zeros(sizes, TensorOptions(self.dtype()).device(self.device()));
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
  auto kernel = tri_indices_stub(o.device_or_cpu(), name);
  ScalarType dt = o.dtype_or(kLong);
  EMBER_CHECK_KIND(dt == kLong || dt == kInt, NotImplemented, "\"", name, "\" not implemented for '", dt, "'");
  EMBER_CHECK(row >= 0, "row must be non-negative, got", row);
  EMBER_CHECK(col >= 0, "col must be non-negative, got", col);
  // Row i holds the columns [begin(i), end(i)) (clamped to [0, col]): lower [0, i + offset + 1),
  // upper [i + offset, col). The count is summed in closed form (128-bit) and the
  // output checked before any loop, so tril_indices(2**40, 2**40) raises instead of looping 2**80 times.
  auto clamp_sum = [&](__int128 a) {  // sum over i in [0, row) of clamp(i + a, 0, col)
    __int128 lo = std::min<__int128>(row, std::max<__int128>(0, 1 - a));
    __int128 hi = std::min<__int128>(row, std::max<__int128>(lo, __int128(col) - a));
    return (hi - lo) * (lo + hi - 1) / 2 + a * (hi - lo) + (row - hi) * col;
  };
  __int128 total = lower ? clamp_sum(__int128(offset) + 1) : __int128(row) * col - clamp_sum(offset);
  EMBER_CHECK(total <= INT64_MAX, name, ": Storage size calculation overflowed (", row, " x ", col, ")");
  int64_t n = int64_t(total);
  check_output_size({2, n}, 8, name);
  Tensor out = empty_tensor({2, n}, kLong, o.device_or_cpu());
  kernel(out, row, col, offset, lower);
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
  if (r == 0) return empty_tensor({0}, self.dtype(), self.device());
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
  if (count == 0) return empty_tensor({0, r}, self.dtype(), self.device());  // (no r-element cursor for r = 2**32)
  // every non-decreasing (with replacement) or increasing index tuple, in lexicographic order
  Tensor idx = empty_tensor({int64_t(count) * r}, kLong, self.device());
  combinations_stub(self.device(), "combinations")(idx, n, r, with_replacement);
  return ember::index_select(self, 0, idx).reshape({int64_t(count), r});
}

}  // namespace ember::native
