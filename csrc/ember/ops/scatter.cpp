// gather, scatter, scatter_add, index_add: element-wise indexing along one dim. Indices are
// bounds-checked before any memory is touched.
#include <cstring>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

namespace {

void check_index_shapes(const char* name, const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  EMBER_CHECK(index.dtype() == kLong, name, "(): Expected dtype int64 for index");
  if (index.numel() == 0) return;  // nothing is read or written: PyTorch checks no shapes either
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

// Calls f(index_element_value, self_offset, idx_position_offset_in_src) for each element of `index`.
template <class F>
void for_each_index(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, F f) {
  const int64_t nd = index.dim();
  const int64_t n = index.numel();
  if (n == 0) return;
  const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
  int64_t size = self.dim() ? self.sizes()[dim] : 1;
  DimVector pos(static_cast<size_t>(std::max<int64_t>(nd, 1)), 0);
  for (int64_t e = 0; e < n; e++) {
    int64_t ioff = 0, soff = 0, roff = 0;
    for (int64_t d = 0; d < nd; d++) {
      ioff += pos[d] * index.strides()[d];
      if (d != dim) soff += pos[d] * self.strides()[d];
      if (src && src->dim()) roff += pos[d] * src->strides()[d];
    }
    int64_t v = ip[ioff];
    EMBER_CHECK(v >= 0 && v < size, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
    f(soff + v * (self.dim() ? self.strides()[dim] : 0), roff, e);
    for (int64_t d = nd - 1; d >= 0; d--) {
      if (++pos[d] < index.sizes()[d]) break;
      pos[d] = 0;
    }
  }
}

enum class ScatterMode { Set, Add };

void scatter_impl(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterMode mode,
                  const char* name) {
  dim = wrap_dim(dim, self.dim());
  check_index_shapes(name, self, dim, index, &src);
  Tensor s = src.to(self.dtype());
  self.impl()->bump_version();
  EMBER_DISPATCH_ALL(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(self.data_ptr());
    const T* in = static_cast<const T*>(s.data_ptr());
    for_each_index(self, dim, index, &s, [&](int64_t soff, int64_t roff, int64_t) {
      if (mode == ScatterMode::Set) {
        out[soff] = in[roff];
      } else {
        if constexpr (std::is_same_v<T, bool>) out[soff] = out[soff] || in[roff];
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) out[soff] = T(float(out[soff]) + float(in[roff]));
        else out[soff] = wrapping_add(out[soff], in[roff]);  // integers wrap, as PyTorch's
      }
    });
  });
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool) {
  dim = wrap_dim(dim, self.dim());
  check_index_shapes("gather", self, dim, index, nullptr);
  Tensor out = empty_tensor(index.sizes(), self.dtype());
  int64_t isz = self.element_size();
  const char* in = static_cast<const char*>(self.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  for_each_index(self, dim, index, nullptr, [&](int64_t soff, int64_t, int64_t e) {
    std::memcpy(o + e * isz, in + soff * isz, size_t(isz));
  });
  return out;
}
const Tensor& gather_out(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index, bool sparse) {
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
const Tensor& scatter_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  EMBER_CHECK(src.dim() > 0 || index.numel() <= 1, "scatter_add(): src must be a tensor of the same rank as index");
  scatter_impl(self, dim, index, src, ScatterMode::Add, "scatter_add_");
  return self;
}
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor r = self.clone();
  return native::scatter_add_(r, dim, index, src);
}

const Tensor& index_add_(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  EMBER_CHECK(index.dim() <= 1, "index_add_(): Index is supposed to be a vector");
  EMBER_CHECK(index.dtype() == kLong || index.dtype() == kInt, "index_add_(): Expected dtype int32/int64 for index");
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

}  // namespace ember::native
