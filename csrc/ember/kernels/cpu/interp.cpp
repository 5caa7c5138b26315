// The CPU's interpolation entry: one dim resampled by a sparse matrix (or its transpose).
#include <algorithm>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/kernels/interp.h"
#include "ember/parallel/parallel.h"

namespace ember {

namespace {

// y = A x along `dim` (rows of A: y's dim), or y = A^T x (rows of A: x's dim; y zero-filled)
template <class T>
void apply_dim(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose) {
  int64_t rows = int64_t(a.start.size()) - 1;
  int64_t in = x.sizes()[dim], out = y.sizes()[dim];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; d++) outer = checked_mul(outer, x.sizes()[d], "numel");
  for (int64_t d = dim + 1; d < x.dim(); d++) inner = checked_mul(inner, x.sizes()[d], "numel");
  const T* xp = static_cast<const T*>(x.data_ptr());
  T* yp = static_cast<T*>(y.data_ptr());
  std::vector<T> w(a.w.begin(), a.w.end());
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in * inner)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; o++) {
      const T* xo = xp + o * in * inner;
      T* yo = yp + o * out * inner;
      for (int64_t j = 0; j < rows; j++) {
        if (!transpose) {
          T* yr = yo + j * inner;
          for (int64_t t = a.start[size_t(j)]; t < a.start[size_t(j) + 1]; t++) {
            const T* xr = xo + a.idx[size_t(t)] * inner;
            T wt = w[size_t(t)];
            if (t == a.start[size_t(j)]) for (int64_t i = 0; i < inner; i++) yr[i] = xr[i] * wt;
            else for (int64_t i = 0; i < inner; i++) yr[i] += xr[i] * wt;
          }
        } else {
          const T* xr = xo + j * inner;
          for (int64_t t = a.start[size_t(j)]; t < a.start[size_t(j) + 1]; t++) {
            T* yr = yo + a.idx[size_t(t)] * inner;
            T wt = w[size_t(t)];
            for (int64_t i = 0; i < inner; i++) yr[i] += xr[i] * wt;
          }
        }
      }
    }
  });
}

void resample_dim_cpu(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose) {
  if (x.dtype() == kDouble) apply_dim<double>(y, x, dim, a, transpose);
  else apply_dim<float>(y, x, dim, a, transpose);
}

}  // namespace

EMBER_REGISTER_KERNEL(resample_dim_stub, CPU, &resample_dim_cpu);

}  // namespace ember
