// CPU kernels of advanced indexing (kernels/indexing.h): nonzero, index tensors to row numbers, and
// row copies between a [rows, row_elems] matrix and the [index elements, row_elems] result.
#include <cstring>

#include "ember/core/checked_math.h"
#include "ember/kernels/indexing.h"

namespace ember {
namespace {

Tensor nonzero_cpu(const Tensor& b, IntArrayRef sizes) {
  const bool* p = static_cast<const bool*>(b.data_ptr());
  int64_t n = b.numel(), nd = int64_t(sizes.size()), count = 0;
  for (int64_t i = 0; i < n; i++) count += p[i];
  Tensor out = empty_tensor({count, nd}, kLong);
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  DimVector idx(size_t(nd), 0);
  for (int64_t i = 0; i < n; i++) {
    if (p[i]) {
      for (int64_t d = 0; d < nd; d++) *o++ = idx[d];
    }
    for (int64_t d = nd - 1; d >= 0; d--) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

void index_linearize_cpu(const Tensor& lin_t, const Tensor& index, int64_t size, int64_t stride, int64_t dim,
                         bool accumulate) {
  int64_t* lin = static_cast<int64_t*>(lin_t.data_ptr());
  const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
  for (int64_t i = 0, nb = lin_t.numel(); i < nb; i++) {
    int64_t v = ip[i];
    EMBER_CHECK_KIND(v >= -size && v < size, Index, "index ", v, " is out of bounds for dimension ", dim,
                     " with size ", size);
    lin[i] = (accumulate ? lin[i] : 0) + (v < 0 ? v + size : v) * stride;
  }
}

void index_rows_cpu(const Tensor& out, const Tensor& src, const Tensor& lin_t, int64_t row_elems) {
  int64_t row_bytes = row_elems * src.element_size(), nb = lin_t.numel();
  if (row_bytes == 0) return;  // empty rows: the pointers may be null, which memcpy must not see
  const char* sp = static_cast<const char*>(src.data_ptr());
  char* op = static_cast<char*>(out.data_ptr());
  const int64_t* lin = static_cast<const int64_t*>(lin_t.data_ptr());
  for (int64_t i = 0; i < nb; i++) std::memcpy(op + i * row_bytes, sp + lin[i] * row_bytes, size_t(row_bytes));
}

void index_put_rows_cpu(const Tensor& dst, const Tensor& values, const Tensor& lin_t, int64_t row_elems,
                        bool accumulate) {
  int64_t row_bytes = row_elems * dst.element_size(), nb = lin_t.numel();
  char* wp = static_cast<char*>(dst.data_ptr());
  const char* vp = static_cast<const char*>(values.data_ptr());
  const int64_t* lin = static_cast<const int64_t*>(lin_t.data_ptr());
  if (!accumulate) {
    if (row_bytes > 0)  // empty rows: the pointers may be null, which memcpy must not see
      for (int64_t i = 0; i < nb; i++) std::memcpy(wp + lin[i] * row_bytes, vp + i * row_bytes, size_t(row_bytes));
    return;
  }
  EMBER_DISPATCH_WITH_COMPLEX(dst.dtype(), "index_put_", [&](auto tag) {
    using T = decltype(tag);
    T* w = reinterpret_cast<T*>(wp);
    const T* vv = reinterpret_cast<const T*>(vp);
    for (int64_t i = 0; i < nb; i++)
      for (int64_t j = 0; j < row_elems; j++) {
        T& d = w[lin[i] * row_elems + j];
        if constexpr (std::is_same_v<T, bool>) d = d || vv[i * row_elems + j];
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) d = T(float(d) + float(vv[i * row_elems + j]));
        else d = wrapping_add(d, vv[i * row_elems + j]);  // integers wrap, as PyTorch's
      }
  });
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(nonzero_stub, CPU, &ember::nonzero_cpu);
EMBER_REGISTER_KERNEL(index_linearize_stub, CPU, &ember::index_linearize_cpu);
EMBER_REGISTER_KERNEL(index_rows_stub, CPU, &ember::index_rows_cpu);
EMBER_REGISTER_KERNEL(index_put_rows_stub, CPU, &ember::index_put_rows_cpu);
