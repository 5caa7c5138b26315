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

// Dims along which rows are the lanes: the last dim (inner == 1) is resampled on blocks of rows
// transposed so that rows become contiguous lanes (a dot product per output over a few contiguous
// taps does not vectorize; measured 2-4x slower for float, 1.5-2.8x for uint8).
template <class T, class Rows>
void by_row_blocks(const T* xp, T* yp, int64_t outer, int64_t in, int64_t out, const Rows& rows) {
  constexpr int64_t kBlock = 64;
  parallel_for(0, (outer + kBlock - 1) / kBlock, 1, [&](int64_t b, int64_t e) {
    std::vector<T> xt(static_cast<size_t>(in * kBlock)), yt(static_cast<size_t>(out * kBlock));
    for (int64_t blk = b; blk < e; blk++) {
      const int64_t r0 = blk * kBlock, n = std::min(kBlock, outer - r0);
      // (the tiled transposes of copy_: [n, in] -> [in, n], and [out, n] -> [n, out] back)
      transpose_copy_kernel_stub(Device(), "upsample")(int64_t(sizeof(T)), xp + r0 * in, xt.data(), 1, in, n);
      rows(xt.data(), yt.data(), n);
      transpose_copy_kernel_stub(Device(), "upsample")(int64_t(sizeof(T)), yt.data(), yp + r0 * out, 1, n, out);
    }
  });
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
  // the rows of A over contiguous lanes (resample_float_kernel, per ISA; taps summed first to last), or
  // with `transpose` the adjoint, added into y (zero-filled by the caller; a block buffer here)
  auto rows_of = [&](const T* xo, T* yo, int64_t lanes) {
    resample_float_kernel_stub(Device(), "upsample")(x.dtype(), xo, yo, lanes, a.start.data(), a.idx.data(),
                                                      w.data(), rows, transpose);
  };
  if (inner == 1 && outer > 1)
    return by_row_blocks(xp, yp, outer, in, out, [&](const T* xo, T* yo, int64_t lanes) {
      if (transpose) std::fill(yo, yo + out * lanes, T(0));
      rows_of(xo, yo, lanes);
    });
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in * inner)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; o++) rows_of(xp + o * in * inner, yp + o * out * inner, inner);
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
  if (inner == 1 && outer > 1)
    return by_row_blocks(xp, yp, outer, in, out,
                         [&](const uint8_t* xo, uint8_t* yo, int64_t lanes) { resample_u8_rows(xo, yo, lanes, a); });
  parallel_for(0, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, in * inner)), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; o++) resample_u8_rows(xp + o * in * inner, yp + o * out * inner, inner, a);
  });
}

// Nearest-neighbour: every output value copied from its source in one pass (one input row per output
// row, then a gather along the last dim), whatever the dtype.
template <class T>
void nearest_planes(const T* xp, T* yp, int64_t planes, IntArrayRef in, IntArrayRef out,
                    const std::vector<const int64_t*>& idx) {
  const int64_t k = int64_t(out.size());
  int64_t in_plane = 1, out_rows = 1;  // elements of an input plane; output rows (all but the last dim) per plane
  for (int64_t d = 0; d < k; d++) in_plane *= in[size_t(d)];
  for (int64_t d = 0; d + 1 < k; d++) out_rows *= out[size_t(d)];
  const int64_t w_out = out[size_t(k - 1)], w_in = in[size_t(k - 1)];
  const int64_t* last = idx[size_t(k - 1)];
  parallel_for(0, planes * out_rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, w_out)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const int64_t plane = r / out_rows;
      int64_t rest = r % out_rows, src = 0, stride = w_in;
      for (int64_t d = k - 2; d >= 0; d--) {  // the source row of output row `rest`
        const int64_t o = rest % out[size_t(d)];
        rest /= out[size_t(d)];
        src += idx[size_t(d)][o] * stride;
        stride *= in[size_t(d)];
      }
      const T* xr = xp + plane * in_plane + src;
      T* yr = yp + r * w_out;
      for (int64_t j = 0; j < w_out; j++) yr[j] = xr[last[j]];
    }
  });
}

void nearest_select_cpu(const Tensor& y, const Tensor& x, const std::vector<const int64_t*>& idx) {
  const int64_t k = int64_t(idx.size());
  const int64_t planes = x.sizes()[0] * x.sizes()[1];
  IntArrayRef in(x.sizes().data() + 2, size_t(k)), out(y.sizes().data() + 2, size_t(k));
  if (y.numel() == 0) return;
  const void* xp = x.data_ptr();
  void* yp = y.data_ptr();
  switch (x.element_size()) {
    case 1: return nearest_planes(static_cast<const uint8_t*>(xp), static_cast<uint8_t*>(yp), planes, in, out, idx);
    case 2: return nearest_planes(static_cast<const uint16_t*>(xp), static_cast<uint16_t*>(yp), planes, in, out, idx);
    case 4: return nearest_planes(static_cast<const uint32_t*>(xp), static_cast<uint32_t*>(yp), planes, in, out, idx);
    case 8: return nearest_planes(static_cast<const uint64_t*>(xp), static_cast<uint64_t*>(yp), planes, in, out, idx);
    default: {
      struct alignas(16) Pair { uint64_t a, b; };
      return nearest_planes(static_cast<const Pair*>(xp), static_cast<Pair*>(yp), planes, in, out, idx);
    }
  }
}

void resample_dim_cpu(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose) {
  if (x.dtype() == kByte) apply_dim_u8(y, x, dim, a);
  else if (x.dtype() == kDouble) apply_dim<double>(y, x, dim, a, transpose);
  else apply_dim<float>(y, x, dim, a, transpose);
}

}  // namespace

EMBER_REGISTER_KERNEL(resample_dim_stub, CPU, &resample_dim_cpu);
EMBER_REGISTER_KERNEL(nearest_select_stub, CPU, &nearest_select_cpu);

}  // namespace ember
