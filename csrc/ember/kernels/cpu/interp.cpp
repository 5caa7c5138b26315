// The CPU's interpolation entry: one dim resampled by a sparse matrix (or its transpose).
#include <algorithm>
#include <tuple>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/kernels/interp.h"
#include "ember/kernels/kernels.h"
#include "ember/parallel/parallel.h"

namespace ember {

namespace {

// x's sizes before and after `dim`, each multiplied out
std::pair<int64_t, int64_t> outer_inner(const Tensor& x, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; d++) outer = checked_mul(outer, x.sizes()[d], "numel");
  for (int64_t d = dim + 1; d < x.dim(); d++) inner = checked_mul(inner, x.sizes()[d], "numel");
  return {outer, inner};
}

// y = A x along `dim` (rows of A: y's dim), or y = A^T x (rows of A: x's dim; y zero-filled)
template <class T>
void apply_dim(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose) {
  int64_t rows = int64_t(a.start.size()) - 1;
  int64_t in = x.sizes()[dim], out = y.sizes()[dim];
  int64_t outer, inner;  // (named variables: lambdas below capture them)
  std::tie(outer, inner) = outer_inner(x, dim);
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

// uint8: the fixed-point rows (resample_u8_kernel, per ISA) over `inner` contiguous lanes
void resample_u8_rows(const uint8_t* xo, uint8_t* yo, int64_t inner, const ResampleMatrix& a) {
  resample_u8_kernel_stub(Device(), "upsample")(xo, yo, inner, a.start.data(), a.idx.data(), a.w16.data(),
                                                 int64_t(a.start.size()) - 1, a.precision);
}

void apply_dim_u8(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a) {
  int64_t in = x.sizes()[dim], out = y.sizes()[dim];
  int64_t outer, inner;  // (named variables: lambdas below capture them)
  std::tie(outer, inner) = outer_inner(x, dim);
  const uint8_t* xp = static_cast<const uint8_t*>(x.data_ptr());
  uint8_t* yp = static_cast<uint8_t*>(y.data_ptr());
  if (inner == 1 && outer > 1) {
    // the last dim (an image's rows): blocks of rows transposed, so that the rows become the lanes
    // (measured: 1.5-2.8x faster than a dot product per output over its contiguous taps)
    constexpr int64_t kBlock = 64;
    parallel_for(0, (outer + kBlock - 1) / kBlock, 1, [&](int64_t b, int64_t e) {
      std::vector<uint8_t> xt(static_cast<size_t>(in * kBlock)), yt(static_cast<size_t>(out * kBlock));
      for (int64_t blk = b; blk < e; blk++) {
        const int64_t r0 = blk * kBlock, n = std::min(kBlock, outer - r0);
        // (the tiled transposes of copy_: [n, in] -> [in, n], and [out, n] -> [n, out] back)
        transpose_copy_kernel_stub(Device(), "upsample")(1, xp + r0 * in, xt.data(), 1, in, n);
        resample_u8_rows(xt.data(), yt.data(), n, a);
        transpose_copy_kernel_stub(Device(), "upsample")(1, yt.data(), yp + r0 * out, 1, n, out);
      }
    });
    return;
  }
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in * inner)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; o++) resample_u8_rows(xp + o * in * inner, yp + o * out * inner, inner, a);
  });
}

void resample_dim_cpu(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose) {
  if (x.dtype() == kByte) apply_dim_u8(y, x, dim, a);
  else if (x.dtype() == kDouble) apply_dim<double>(y, x, dim, a, transpose);
  else apply_dim<float>(y, x, dim, a, transpose);
}

}  // namespace

EMBER_REGISTER_KERNEL(resample_dim_stub, CPU, &resample_dim_cpu);

}  // namespace ember
