// View and shape ops. A view shares storage and version counter with its base (make_view);
// only cat/stack/flip/roll/tril/triu, and reshape of a non-viewable layout, copy.
#include <algorithm>
#include <numeric>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

namespace {
// base + index * stride for a view's storage offset. The product can only overflow when the view is
// empty (or the dim has size 1 and an arbitrary stride from as_strided): then the offset is never
// dereferenced, and the base's offset stands in for the unrepresentable one.
int64_t view_offset(int64_t base, int64_t index, int64_t stride) {
  int64_t step, r;
  if (mul_overflows(index, stride, &step) || add_overflows(base, step, &r)) return base;
  return r;
}

// Resolve one -1 in `shape` against `numel`.
DimVector infer_size(IntArrayRef shape, int64_t numel) {
  DimVector res(shape);
  int64_t newsize = 1;
  int64_t infer = -1;
  bool overflow = false;  // a product past int64 cannot match numel, unless a later 0 zeroes it
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == -1) {
      EMBER_CHECK(infer < 0, "only one dimension can be inferred");
      infer = int64_t(i);
    } else {
      EMBER_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      if (mul_overflows(newsize, shape[i], &newsize)) overflow = true;
    }
  }
  if (overflow && newsize != 0) EMBER_FAIL(Runtime, "shape '", shape, "' is invalid for input of size ", numel);
  if (numel == newsize || (infer >= 0 && newsize > 0 && numel % newsize == 0)) {
    if (infer >= 0) {
      EMBER_CHECK(newsize != 0, "cannot reshape tensor of 0 elements into shape ", shape,
                  " because the unspecified dimension size -1 can be any value and is ambiguous");
      res[infer] = numel / newsize;
    }
    return res;
  }
  EMBER_FAIL(Runtime, "shape '", shape, "' is invalid for input of size ", numel);
}

// Strides for viewing (oldshape, oldstride) as newshape without copying, if possible
// (the chunk-matching rule PyTorch's view uses).
bool compute_view_strides(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape, DimVector& newstride) {
  newstride.resize(newshape.size());
  if (oldshape.empty()) {
    for (auto& s : newstride) s = 1;
    return true;
  }
  int64_t numel = prod(oldshape);
  if (numel == 0 && oldshape == newshape) {
    newstride.assign(oldstride);
    return true;
  }
  if (numel == 0) {
    newstride.assign(checked_contiguous_strides(newshape));
    return true;
  }
  int64_t view_d = int64_t(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = int64_t(oldshape.size()) - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 ||
        (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

}  // namespace

Tensor view(const Tensor& self, IntArrayRef size) {
  DimVector shape = infer_size(size, self.numel());
  DimVector strides;
  EMBER_CHECK(compute_view_strides(self.sizes(), self.strides(), shape, strides),
              "view size is not compatible with input tensor's size and stride (at least one dimension spans "
              "across two contiguous subspaces). Use .reshape(...) instead.");
  return make_view(self, shape, strides, self.storage_offset());
}

Tensor view(const Tensor& self, ScalarType dtype) {
  EMBER_CHECK(!self.is_conj() || dtype == self.dtype(), "torch.Tensor.view is not supported for conjugate view tensors "
              "when converting to a different dtype.");
  EMBER_CHECK(!self.is_neg() || dtype == self.dtype(), "torch.Tensor.view is not supported for tensors with negative "
              "bit set when converting to a different dtype.");
  int64_t old_size = self.element_size(), new_size = itemsize(dtype);
  if (old_size == new_size) {
    Tensor r = make_view(self, self.sizes(), self.strides(), self.storage_offset());
    r.impl()->set_dtype(dtype);
    return r;
  }
  EMBER_CHECK(self.dim() > 0, "self.dim() cannot be 0 to view ", self.dtype(), " as ", dtype,
              " (different element sizes)");
  EMBER_CHECK(self.strides().back() == 1, "self.stride(-1) must be 1 to view ", self.dtype(), " as ", dtype,
              " (different element sizes), but got ", self.strides().back());
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.storage_offset();
  if (new_size > old_size) {
    int64_t ratio = new_size / old_size;
    EMBER_CHECK(sizes.back() % ratio == 0, "self.size(-1) must be divisible by ", ratio, " to view ", self.dtype(),
                " as ", dtype, " (different element sizes), but got ", sizes.back());
    EMBER_CHECK(offset % ratio == 0, "self.storage_offset() must be divisible by ", ratio, " to view ", self.dtype(),
                " as ", dtype, " (different element sizes), but got ", offset);
    for (size_t i = 0; i + 1 < strides.size(); i++) {
      EMBER_CHECK(strides[i] % ratio == 0, "self.stride(", i, ") must be divisible by ", ratio, " to view ",
                  self.dtype(), " as ", dtype, " (different element sizes), but got ", strides[i]);
      strides[i] /= ratio;
    }
    sizes.back() /= ratio;
    offset /= ratio;
  } else {
    int64_t ratio = old_size / new_size;
    for (size_t i = 0; i + 1 < strides.size(); i++) strides[i] *= ratio;
    sizes.back() *= ratio;
    offset *= ratio;
  }
  Tensor r = make_view(self, sizes, strides, 0);
  r.impl()->set_dtype(dtype);
  r.impl()->set_sizes_and_strides(sizes, strides, offset);
  return r;
}

Tensor view_as(const Tensor& self, const Tensor& other) { return native::view(self, other.sizes()); }

Tensor reshape(const Tensor& self, IntArrayRef shape_in) {
  DimVector shape = infer_size(shape_in, self.numel());
  DimVector strides;
  if (compute_view_strides(self.sizes(), self.strides(), shape, strides))
    return make_view(self, shape, strides, self.storage_offset());
  return native::view(native::contiguous(self), shape);
}

Tensor reshape_as(const Tensor& self, const Tensor& other) { return native::reshape(self, other.sizes()); }

Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  int64_t nd = self.dim();
  start_dim = wrap_dim(start_dim, nd);
  end_dim = wrap_dim(end_dim, nd);
  EMBER_CHECK(start_dim <= end_dim, "flatten() has invalid args: start_dim cannot come after end_dim");
  if (nd == 0) return native::reshape(self, {1});
  if (start_dim == end_dim) return self;
  DimVector shape;
  for (int64_t i = 0; i < start_dim; i++) shape.push_back(self.sizes()[i]);
  int64_t p = 1;
  for (int64_t i = start_dim; i <= end_dim; i++) p = checked_mul(p, self.sizes()[i], "numel");
  shape.push_back(p);
  for (int64_t i = end_dim + 1; i < nd; i++) shape.push_back(self.sizes()[i]);
  return native::reshape(self, shape);
}

Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes) {
  EMBER_CHECK(self.dim() > 0, "unflatten got an unexpected error:\nDimension specified as ", dim,
              " but tensor has no dimensions");  // PyTorch wraps its IndexError in a RuntimeError here
  dim = wrap_existing_dim(dim, self.dim());
  EMBER_CHECK(!sizes.empty(), "unflatten: sizes must be non-empty");
  DimVector inferred = infer_size(sizes, self.sizes()[dim]);
  EMBER_CHECK(prod(inferred) == self.sizes()[dim], "unflatten: Provided sizes ", sizes,
              " don't multiply up to the size of dim ", dim, " (", self.sizes()[dim], ") in the input tensor");
  DimVector shape;
  for (int64_t i = 0; i < dim; i++) shape.push_back(self.sizes()[i]);
  for (int64_t s : inferred) shape.push_back(s);
  for (int64_t i = dim + 1; i < self.dim(); i++) shape.push_back(self.sizes()[i]);
  return native::view(self, shape);
}

Tensor permute(const Tensor& self, IntArrayRef dims) {
  int64_t nd = self.dim();
  EMBER_CHECK(int64_t(dims.size()) == nd, "permute(sparse_coo): number of dimensions in the tensor input does not "
              "match the length of the desired ordering of dimensions i.e. input.dim() = ", nd,
              " is not equal to len(dims) = ", dims.size());
  DimVector sizes(nd), strides(nd);
  std::vector<bool> seen(static_cast<size_t>(nd), false);
  for (int64_t i = 0; i < nd; i++) {
    int64_t d = wrap_dim(dims[i], nd);
    EMBER_CHECK(!seen[d], "permute(): duplicate dims are not allowed.");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1) {
  int64_t nd = self.dim();
  dim0 = wrap_dim(dim0, nd);
  dim1 = wrap_dim(dim1, nd);
  if (nd == 0) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  DimVector sizes(self.sizes()), strides(self.strides());
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination) {
  int64_t nd = self.dim();
  EMBER_CHECK(source.size() == destination.size(), "movedim: Invalid source or destination dims: source (", source,
              " dims) should contain the same number of dims as destination (", destination, " dims)");
  if (nd == 0) {  // a 0-d tensor accepts dims 0 and -1 and stays as it is
    for (size_t i = 0; i < source.size(); i++) wrap_dim(source[i], nd), wrap_dim(destination[i], nd);
    return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  }
  std::vector<int64_t> order(static_cast<size_t>(nd), -1);
  std::vector<bool> used(static_cast<size_t>(nd), false);
  for (size_t i = 0; i < source.size(); i++) {
    int64_t s = wrap_dim(source[i], nd), d = wrap_dim(destination[i], nd);
    EMBER_CHECK(order[d] == -1, "movedim: repeated dim in `destination` (", destination, ")");
    EMBER_CHECK(!used[s], "movedim: repeated dim in `source` (", source, ")");
    order[d] = s;
    used[s] = true;
  }
  int64_t next = 0;
  for (auto& o : order) {
    if (o != -1) continue;
    while (used[next]) next++;
    o = next++;
  }
  return native::permute(self, IntArrayRef(order.data(), order.size()));
}

Tensor t(const Tensor& self) {
  EMBER_CHECK(self.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is ", self.dim(), "D");
  if (self.dim() < 2) return make_view(self, self.sizes(), self.strides(), self.storage_offset());
  return native::transpose(self, 0, 1);
}

Tensor expand(const Tensor& self, IntArrayRef size) {
  int64_t nd = int64_t(size.size()), td = self.dim();
  EMBER_CHECK(nd >= td, "expand(", self.dtype(), "{", self.sizes(), "}, size=", size,
              "): the number of sizes provided (", nd, ") must be greater or equal to the number of dimensions in "
              "the tensor (", td, ")");
  DimVector sizes(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; i--) {
    int64_t off = nd - 1 - i, dim = td - 1 - off;
    int64_t s = dim >= 0 ? self.sizes()[dim] : 1;
    int64_t st = dim >= 0 ? self.strides()[dim] : (i + 1 < nd ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t target = size[i];
    if (target == -1) {
      EMBER_CHECK(dim >= 0, "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension ", i);
      target = s;
    }
    if (s != target) {
      EMBER_CHECK(s == 1, "The expanded size of the tensor (", target, ") must match the existing size (", s,
                  ") at non-singleton dimension ", i, ".  Target sizes: ", size, ".  Tensor sizes: ", self.sizes());
      st = 0;
    }
    EMBER_CHECK(target >= 0, "Trying to create tensor with negative dimension ", target, ": ", size);
    sizes[i] = target;
    strides[i] = st;
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor expand_as(const Tensor& self, const Tensor& other) { return native::expand(self, other.sizes()); }

Tensor squeeze(const Tensor& self, OptionalIntArrayRef dim) {
  int64_t nd = self.dim();
  std::vector<bool> drop(static_cast<size_t>(nd), false);
  if (!dim) {
    for (int64_t i = 0; i < nd; i++) drop[i] = self.sizes()[i] == 1;
  } else {
    for (int64_t d : *dim) {
      int64_t w = wrap_dim(d, nd);
      if (nd > 0) drop[w] = self.sizes()[w] == 1;
    }
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < nd; i++) {
    if (drop[i]) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze(const Tensor& self, int64_t dim) {
  dim = wrap_dim(dim, self.dim() + 1);
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t st = dim < self.dim() ? sizes[dim] * strides[dim] : 1;
  sizes.insert(size_t(dim), 1);
  strides.insert(size_t(dim), st);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  EMBER_CHECK(self.dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK(length >= 0, "narrow(): length must be non-negative.");
  dim = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[dim];
  EMBER_CHECK_KIND(start >= -n && start <= n, Index, "start out of range (expected to be in range of [", -n, ", ", n,
                   "], but got ", start, ")");
  if (start < 0) start += n;
  EMBER_CHECK(start <= n - length, "start (", start, ") + length (", length, ") exceeds dimension size (", n, ").");
  DimVector sizes(self.sizes());
  sizes[dim] = length;
  return make_view(self, sizes, self.strides(), view_offset(self.storage_offset(), start, self.strides()[dim]));
}

// x[start:end:step] along dim, with Python's clamping of out-of-range bounds.
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start_opt, std::optional<int64_t> end_opt,
             int64_t step) {
  EMBER_CHECK(self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  EMBER_CHECK_KIND(step > 0, Value, "step must be greater than zero");
  dim = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[dim];
  auto clamp_index = [n](int64_t i) {
    if (i < 0) i += n;
    return std::min(std::max<int64_t>(i, 0), n);
  };
  int64_t start = start_opt ? clamp_index(*start_opt) : 0;
  int64_t end = end_opt ? clamp_index(*end_opt) : n;
  int64_t len = end > start ? (end - start - 1) / step + 1 : 0;  // ceil((end - start) / step), no overflow
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = len > 0 ? view_offset(self.storage_offset(), start, strides[dim]) : self.storage_offset();
  sizes[dim] = len;
  // with two or more elements, stride * step stays inside the storage's extent; with fewer it is
  // never used, and a product past int64 keeps the old stride
  int64_t new_stride;
  if (!mul_overflows(strides[dim], step, &new_stride)) strides[dim] = new_stride;
  return make_view(self, sizes, strides, offset);
}

Tensor select(const Tensor& self, int64_t dim, int64_t index) {
  EMBER_CHECK_KIND(self.dim() > 0, Index, "select() cannot be applied to a 0-dim tensor.");
  dim = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[dim];
  EMBER_CHECK_KIND(index >= -n && index < n, Index, "select(): index ", index, " out of range for tensor of size ",
                   self.sizes(), " at dimension ", dim);
  if (index < 0) index += n;
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t offset = self.storage_offset() + index * strides[dim];
  sizes.erase(size_t(dim));
  strides.erase(size_t(dim));
  return make_view(self, sizes, strides, offset);
}

std::vector<Tensor> unbind(const Tensor& self, int64_t dim) {
  EMBER_CHECK_KIND(self.dim() > 0, Index, "Dimension specified as 0 but tensor has no dimensions");
  dim = wrap_dim(dim, self.dim());
  check_view_count(self.sizes()[dim], "unbind");
  std::vector<Tensor> r;
  for (int64_t i = 0; i < self.sizes()[dim]; i++) r.push_back(native::select(self, dim, i));
  return r;
}

std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim) {
  EMBER_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  EMBER_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size=", split_size);
  dim = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[dim];
  EMBER_CHECK(split_size > 0 || n == 0, "split_size can only be 0 if dimension size is 0, but got dimension size of ", n);
  std::vector<Tensor> r;
  if (n == 0) { r.push_back(self); return r; }
  check_view_count(n / split_size + (n % split_size != 0), "split");
  for (int64_t s = 0; s < n; s += split_size) r.push_back(native::narrow(self, dim, s, std::min(split_size, n - s)));
  return r;
}

std::vector<Tensor> split(const Tensor& self, IntArrayRef sizes, int64_t dim) {
  EMBER_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[dim], total = 0;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=", sizes);
    EMBER_CHECK(!add_overflows(total, s, &total), "split_with_sizes expects split_sizes to sum exactly to ", n,
                " (input tensor's size at dimension ", dim, "), but got split_sizes=", sizes);
  }
  EMBER_CHECK(total == n, "split_with_sizes expects split_sizes to sum exactly to ", n,
              " (input tensor's size at dimension ", dim, "), but got split_sizes=", sizes);
  std::vector<Tensor> r;
  int64_t start = 0;
  for (int64_t s : sizes) {
    r.push_back(native::narrow(self, dim, start, s));
    start += s;
  }
  return r;
}

std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim) {
  EMBER_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  EMBER_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: ", chunks);
  dim = wrap_dim(dim, self.dim());
  int64_t n = self.sizes()[dim];
  int64_t split_size = n / chunks + (n % chunks != 0);  // ceil, without n + chunks - 1 overflowing
  if (split_size == 0 && n == 0) {
    check_view_count(chunks, "chunk");
    std::vector<Tensor> r;
    for (int64_t i = 0; i < chunks; i++) r.push_back(native::narrow(self, dim, 0, 0));
    return r;
  }
  return native::split(self, split_size, dim);
}

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset) {
  EMBER_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  int64_t offset = storage_offset.value_or(self.storage_offset());
  EMBER_CHECK(offset >= 0, "Tensor: invalid storage offset ", offset);
  for (size_t i = 0; i < size.size(); i++) {
    EMBER_CHECK(size[i] >= 0, "Trying to create tensor with negative dimension ", size[i], ": ", size);
    EMBER_CHECK(stride[i] >= 0, "as_strided: Negative strides are not supported at the moment, got strides: ", stride);
  }
  // overflow-checked: a wrapped extent would let the view address memory past the storage
  int64_t need = storage_nbytes(size, stride, offset, self.element_size());
  EMBER_CHECK(uint64_t(need) <= self.impl()->storage()->nbytes(), "setStorage: sizes ", size, ", strides ", stride,
              ", storage offset ", offset, ", and itemsize ", self.element_size(), " requiring a storage size of ", need,
              " are out of bounds for storage of size ", self.impl()->storage()->nbytes());
  return make_view(self, size, stride, offset);
}

Tensor diagonal(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  int64_t nd = self.dim();
  dim1 = wrap_dim(dim1, nd);  // out-of-range dims are an IndexError before the ndim check
  dim2 = wrap_dim(dim2, nd);
  EMBER_CHECK(nd >= 2, "diagonal dimensions requires ndim larger than 1");
  EMBER_CHECK(dim1 != dim2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t n1 = self.sizes()[dim1], n2 = self.sizes()[dim2];
  int64_t len, start = self.storage_offset();
  // n2 - offset (offset >= 0) and n1 + offset (offset < 0) cannot overflow; the offset products are
  // taken only for a non-empty diagonal, where |offset| < the dim's size
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(n1, n2 - offset), 0);
    if (len > 0) start = view_offset(start, offset, self.strides()[dim2]);
  } else {
    len = std::max<int64_t>(std::min(n1 + offset, n2), 0);
    if (len > 0) start = view_offset(start, -offset, self.strides()[dim1]);
  }
  DimVector sizes, strides;
  for (int64_t i = 0; i < nd; i++) {
    if (i == dim1 || i == dim2) continue;
    sizes.push_back(self.sizes()[i]);
    strides.push_back(self.strides()[i]);
  }
  sizes.push_back(len);
  int64_t diag_stride;
  if (add_overflows(self.strides()[dim1], self.strides()[dim2], &diag_stride)) diag_stride = 1;  // len <= 1 then
  strides.push_back(diag_stride);
  return make_view(self, sizes, strides, start);
}

Tensor unfold(const Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  int64_t nd = self.dim();
  int64_t d = wrap_dim(dimension, nd);
  int64_t n = nd == 0 ? 1 : self.sizes()[d];
  EMBER_CHECK(size <= n, "maximum size for tensor at dimension ", d, " is ", n, " but size is ", size);
  EMBER_CHECK(step > 0, "step is ", step, " but must be > 0");
  EMBER_CHECK(size >= 0, "size is ", size, " but must be >= 0");
  DimVector sizes(self.sizes()), strides(self.strides());
  int64_t st = nd == 0 ? 1 : strides[d];
  if (nd > 0) {
    sizes[d] = (n - size) / step + 1;
    int64_t window_stride;  // past int64 only when a single window fits, where it is never used
    strides[d] = mul_overflows(step, st, &window_stride) ? st : window_stride;
  }
  sizes.push_back(size);
  strides.push_back(st);
  return make_view(self, sizes, strides, self.storage_offset());
}

Tensor alias(const Tensor& self) { return make_view(self, self.sizes(), self.strides(), self.storage_offset()); }

// ---- joins and copies
static Tensor cat_impl(TensorList tensors, int64_t dim, const Tensor* out) {
  EMBER_CHECK_KIND(!tensors.empty(), Value, "torch.cat(): expected a non-empty list of Tensors");
  // Legacy rule: 1-D empty tensors are skipped whatever the other shapes.
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors)
    if (!(t.dim() == 1 && t.numel() == 0)) { ref = &t; break; }
  ScalarType dt = result_type(tensors.data(), int(tensors.size()));
  const Device device = tensors[0].device();
  for (const Tensor& t : tensors) {
    EMBER_CHECK(t.dim() > 0, "zero-dimensional tensor (at position ", &t - tensors.data(), ") cannot be concatenated");
    if (t.device() != device) fail_device_mismatch("cat", device, t.device());
  }
  if (out) {
    check_same_device("cat", device, {out});
    for (const Tensor& t : tensors) check_out_shares_nothing(*out, t);
  }
  if (!ref) {
    Tensor r = empty_tensor({0}, dt, device);
    if (out) { resize_output(*out, {0}); return *out; }
    return r;
  }
  int64_t nd = ref->dim();
  dim = wrap_dim(dim, nd);
  DimVector shape(ref->sizes());
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); i++) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) continue;
    EMBER_CHECK(t.dim() == nd, "Tensors must have same number of dimensions: got ", nd, " and ", t.dim());
    for (int64_t d = 0; d < nd; d++) {
      if (d == dim) continue;
      EMBER_CHECK(t.sizes()[d] == shape[d], "Sizes of tensors must match except in dimension ", dim, ". Expected size ",
                  shape[d], " but got size ", t.sizes()[d], " for tensor number ", i, " in the list.");
    }
    total = checked_add(total, t.sizes()[dim], "cat: the output size");
  }
  shape[dim] = total;
  Tensor r;
  if (out) {
    EMBER_CHECK_KIND(can_cast(dt, out->dtype()), Type,
                     "torch.cat(): input types can't be cast to the desired output type ", out->dtype());
    resize_output(*out, shape);
    r = *out;
  } else {
    r = empty_tensor(shape, dt, device);
  }
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;
    int64_t n = t.sizes()[dim];
    if (n) ember::copy_(native::narrow(r, dim, offset, n), t);
    offset += n;
  }
  return r;
}
Tensor cat(TensorList tensors, int64_t dim) { return cat_impl(tensors, dim, nullptr); }
const Tensor& cat_out(const Tensor& out, TensorList tensors, int64_t dim) { cat_impl(tensors, dim, &out); return out; }

static std::vector<Tensor> stack_inputs(TensorList tensors, int64_t dim) {
  EMBER_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  for (size_t i = 1; i < tensors.size(); i++)
    EMBER_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack expects each tensor to be equal size, but got ",
                tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  dim = wrap_dim(dim, tensors[0].dim() + 1);
  std::vector<Tensor> us;
  for (const Tensor& t : tensors) us.push_back(native::unsqueeze(t, dim));
  return us;
}
Tensor stack(TensorList tensors, int64_t dim) {
  auto us = stack_inputs(tensors, dim);
  return native::cat(us, wrap_dim(dim, tensors[0].dim() + 1));
}
const Tensor& stack_out(const Tensor& out, TensorList tensors, int64_t dim) {
  auto us = stack_inputs(tensors, dim);
  return native::cat_out(out, us, wrap_dim(dim, tensors[0].dim() + 1));
}

Tensor flip(const Tensor& self, IntArrayRef dims) {
  int64_t nd = self.dim();
  DimVector strides(self.strides());
  int64_t offset = self.storage_offset();
  std::vector<bool> seen(size_t(std::max<int64_t>(nd, 1)), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, nd);
    EMBER_CHECK(!seen[w], "dims has duplicates, original flip dims size=", dims.size(), ", but unique flip dims size=",
                dims.size() - 1);
    seen[w] = true;
    if (nd == 0 || self.sizes()[w] == 0) continue;
    offset += (self.sizes()[w] - 1) * strides[w];
    strides[w] = -strides[w];
  }
  // A negative-stride view exists only inside this function; the copy gives a normal tensor.
  Tensor rev = make_view(self, self.sizes(), strides, offset);
  Tensor r = empty_like_preserve(self, self.dtype());  // the input's layout, as PyTorch
  if (self.numel()) ember::copy_(r, rev);
  return r;
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  if (dims.empty()) {
    EMBER_CHECK(shifts.size() == 1, "`shifts` required to be of size 1 when `dims` is empty, got ", shifts.size());
    return native::roll(native::flatten(self, 0, -1), shifts, {0}).view(self.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(), ", dims:",
              dims.size());
  Tensor r = self;
  for (size_t i = 0; i < dims.size(); i++) {
    int64_t d = wrap_existing_dim(dims[i], self.dim());
    int64_t n = r.sizes()[d];
    if (n == 0) continue;
    int64_t s = shifts[i] % n;  // in (-n, n): adding n once cannot overflow, unlike (s + n) % n for n > 2**62
    if (s < 0) s += n;
    if (s == 0) { r = r.is_same(self) ? native::clone(self, std::nullopt) : r; continue; }
    r = native::cat({native::narrow(r, d, n - s, s), native::narrow(r, d, 0, n - s)}, d);
  }
  return r.is_same(self) ? native::clone(self, std::nullopt) : r;
}

// Mask of the kept triangle: col - row <= k (tril) or >= k (triu), broadcast over batch dims.
static Tensor tri_mask(const Tensor& self, int64_t k, bool lower) {
  EMBER_CHECK(self.dim() >= 2, lower ? "tril" : "triu", ": input tensor must have at least 2 dimensions");
  int64_t m = self.sizes()[self.dim() - 2], n = self.sizes()[self.dim() - 1];
  Tensor rows = ember::arange(0, m, 1, TensorOptions(kLong).device(self.device())).unsqueeze(1);
  Tensor cols = ember::arange(0, n, 1, TensorOptions(kLong).device(self.device())).unsqueeze(0);
  Tensor diff = ember::sub(cols, rows);
  return lower ? ember::le(diff, scalar_to_tensor(k)) : ember::ge(diff, scalar_to_tensor(k));
}
Tensor tril(const Tensor& self, int64_t k) { return native::masked_fill(self, tri_mask(self, k, true).logical_not(), 0); }
Tensor triu(const Tensor& self, int64_t k) { return native::masked_fill(self, tri_mask(self, k, false).logical_not(), 0); }
const Tensor& tril_(const Tensor& self, int64_t k) { return native::masked_fill_(self, tri_mask(self, k, true).logical_not(), 0); }
const Tensor& triu_(const Tensor& self, int64_t k) { return native::masked_fill_(self, tri_mask(self, k, false).logical_not(), 0); }
const Tensor& tril_out(const Tensor& out, const Tensor& self, int64_t k) {
  check_out_dtype(out, self.dtype());
  Tensor r = native::tril(self, k);
  resize_output(out, self.sizes());
  return ember::copy_(out, r);
}
const Tensor& triu_out(const Tensor& out, const Tensor& self, int64_t k) {
  check_out_dtype(out, self.dtype());
  Tensor r = native::triu(self, k);
  resize_output(out, self.sizes());
  return ember::copy_(out, r);
}

}  // namespace ember::native
