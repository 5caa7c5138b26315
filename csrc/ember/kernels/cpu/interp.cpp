// The CPU's interpolation entries: one dim resampled by a sparse matrix (or its transpose), nearest
// selection, and 2-D bilinear/nearest grid sampling with its backward.
#include <algorithm>
#include <cmath>
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

// ---------------------------------------------------------------- grid_sample, 2-D bilinear / nearest
// PyTorch's CPU kernel's arithmetic: coordinates unnormalized, then clipped (border) or reflected and
// clipped (reflection; a NaN clips to 0 as its SIMD max does); bilinear weights from the fractions
// (nw = (1 - fy)(1 - fx), ...), each corner's value (0 outside the input) times its weight, summed
// nw, ne, sw, se, so a non-finite coordinate gives NaN under zeros padding as PyTorch's does.
namespace {

template <class T>
struct GridAxis {
  T scale, shift;  // unnormalized = (coord + 1) * scale - shift in one fused multiply-add, as PyTorch's CPU kernel
  int64_t size;
  int64_t padding;  // 0 zeros, 1 border, 2 reflection
  bool align;
};

template <class T>
GridAxis<T> grid_axis(int64_t size, int64_t padding, bool align) {
  T scale = align ? T(size - 1) / T(2) : T(size) / T(2);
  return {scale, align ? T(0) : T(0.5), size, padding, align};
}

// clip to [0, size - 1]; d (when given) is 0 where clipped, else 1
template <class T>
T clip_coord(T v, int64_t size, T* d) {
  const T hi = T(size - 1);
  if (d) *d = (v > T(0) && v < hi) ? T(1) : T(0);
  v = v > T(0) ? v : T(0);
  return v < hi ? v : hi;
}

// reflect into [lo2 / 2, hi2 / 2] (PyTorch's reflect_coordinates); d gets the slope, +-1
template <class T>
T reflect_coord(T v, T lo2, T hi2, T* d) {
  if (lo2 == hi2) {
    if (d) *d = T(0);
    return T(0);
  }
  const T mn = lo2 / 2, span = (hi2 - lo2) / 2;
  v = v - mn;
  T sign = T(1);
  if (v < T(0)) {
    sign = T(-1);
    v = -v;
  }
  const T extra = std::fmod(v, span), flips = std::floor(v / span);
  const bool even = std::fmod(flips, T(2)) == T(0);
  if (d) *d = even ? sign : -sign;
  return even ? extra + mn : span - extra + mn;
}

// the source coordinate of a normalized one, and d(source)/d(normalized) in *g when asked
template <class T>
T source_coord(const GridAxis<T>& a, T coord, T* g) {
  T v = std::fma(coord + T(1), a.scale, -a.shift), dc = T(1), dr = T(1);
  if (a.padding == 1) {
    v = clip_coord(v, a.size, g ? &dc : nullptr);
  } else if (a.padding == 2) {
    v = a.align ? reflect_coord(v, T(0), T(2 * (a.size - 1)), g ? &dr : nullptr)
                : reflect_coord(v, T(-1), T(2 * a.size - 1), g ? &dr : nullptr);
    v = clip_coord(v, a.size, g ? &dc : nullptr);
  }
  if (g) *g = a.scale * dr * dc;
  return v;
}

// an integer position, or one far outside any input for a value that is not finite or not representable
template <class T>
int64_t to_index(T v) {
  return (v >= T(-1e9) && v <= T(1e9)) ? int64_t(v) : -(int64_t(1) << 40);
}

// one output point's taps (nearest: one, weight 1): whether each lies inside the input, its offset in a
// plane (0 outside) and weight; bilinear keeps the fractions and both coordinates' slopes for the gradient
template <class T>
struct PointTaps {
  int64_t off[4];
  bool in[4];
  T w[4];
  T fx, fy, gx, gy;  // fractions (x - floor x, y - floor y) and d(source)/d(grid)
};

// tap k's value in an input plane, 0 outside (then still multiplied by its weight, as PyTorch's kernel)
template <class T>
T tap_value(const T* plane, const PointTaps<T>& t, int k) {
  return t.in[k] ? plane[t.off[k]] : T(0);
}

template <class T>
void point_taps(const GridAxis<T>& ax, const GridAxis<T>& ay, T gxn, T gyn, int64_t mode, bool want_grad,
                PointTaps<T>& p) {
  const int64_t W = ax.size, H = ay.size;
  T x = source_coord(ax, gxn, want_grad ? &p.gx : nullptr), y = source_coord(ay, gyn, want_grad ? &p.gy : nullptr);
  if (mode == 1) {  // nearest, ties to even (nearbyint)
    const int64_t ix = to_index(std::nearbyint(x)), iy = to_index(std::nearbyint(y));
    p.in[0] = ix >= 0 && ix < W && iy >= 0 && iy < H;
    p.off[0] = p.in[0] ? iy * W + ix : 0;
    p.w[0] = T(1);
    return;
  }
  const T xf = std::floor(x), yf = std::floor(y);
  p.fx = x - xf;
  p.fy = y - yf;
  const T e = T(1) - p.fx, s = T(1) - p.fy;
  p.w[0] = s * e;
  p.w[1] = s * p.fx;
  p.w[2] = p.fy * e;
  p.w[3] = p.fy * p.fx;
  const int64_t ix = to_index(xf), iy = to_index(yf);
  for (int k = 0; k < 4; k++) {
    const int64_t cx = ix + (k & 1), cy = iy + (k >> 1);
    p.in[k] = cx >= 0 && cx < W && cy >= 0 && cy < H;
    p.off[k] = p.in[k] ? cy * W + cx : 0;
  }
}

template <class T>
void grid_sample_2d_typed(const Tensor& out, const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                          bool align) {
  const int64_t N = input.sizes()[0], C = input.sizes()[1], H = input.sizes()[2], W = input.sizes()[3];
  const int64_t Ho = grid.sizes()[1], Wo = grid.sizes()[2], P = Ho * Wo;
  const T* xp = static_cast<const T*>(input.data_ptr());
  const T* gp = static_cast<const T*>(grid.data_ptr());
  T* yp = static_cast<T*>(out.data_ptr());
  const GridAxis<T> ax = grid_axis<T>(W, padding, align), ay = grid_axis<T>(H, padding, align);
  // a task: one output row of one image, every channel (the taps computed once, reused per channel)
  parallel_for(0, N * Ho, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, Wo * C * 4)), [&](int64_t b, int64_t e) {
    std::vector<PointTaps<T>> taps(static_cast<size_t>(Wo));
    for (int64_t task = b; task < e; task++) {
      const int64_t n = task / Ho, row = task % Ho;
      const T* g = gp + (n * P + row * Wo) * 2;
      for (int64_t j = 0; j < Wo; j++) point_taps(ax, ay, g[2 * j], g[2 * j + 1], mode, false, taps[size_t(j)]);
      for (int64_t c = 0; c < C; c++) {
        const T* plane = xp + (n * C + c) * H * W;
        T* y = yp + (n * C + c) * P + row * Wo;
        if (mode == 1) {
          for (int64_t j = 0; j < Wo; j++) y[j] = tap_value(plane, taps[size_t(j)], 0);
          continue;
        }
        for (int64_t j = 0; j < Wo; j++) {
          const PointTaps<T>& t = taps[size_t(j)];
          T acc = tap_value(plane, t, 0) * t.w[0];
          for (int k = 1; k < 4; k++) acc += tap_value(plane, t, k) * t.w[k];
          y[j] = acc;
        }
      }
    }
  });
}

// grad_input (zero-filled, or undefined) gets each output's gradient times its weights at its corners;
// grad_grid (or undefined) the derivative of each output, summed over channels, times the
// coordinate's slope (PyTorch's: ((ne - nw) s + (se - sw) n) for x, ((sw - nw) e + (se - ne) w) for y,
// s = 1 - n, e = 1 - w with n, w the fractions)
template <class T>
void grid_sample_2d_backward_typed(const Tensor& grad_input, const Tensor& grad_grid, const Tensor& grad_out,
                                   const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding, bool align) {
  const int64_t N = input.sizes()[0], C = input.sizes()[1], H = input.sizes()[2], W = input.sizes()[3];
  const int64_t Ho = grid.sizes()[1], Wo = grid.sizes()[2], P = Ho * Wo;
  const T* xp = static_cast<const T*>(input.data_ptr());
  const T* gp = static_cast<const T*>(grid.data_ptr());
  const T* gop = static_cast<const T*>(grad_out.data_ptr());
  T* gip = grad_input.defined() ? static_cast<T*>(grad_input.data_ptr()) : nullptr;
  T* ggp = grad_grid.defined() ? static_cast<T*>(grad_grid.data_ptr()) : nullptr;
  const GridAxis<T> ax = grid_axis<T>(W, padding, align), ay = grid_axis<T>(H, padding, align);
  std::vector<PointTaps<T>> taps(static_cast<size_t>(N * P));
  parallel_for(0, N * P, 1024, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) point_taps(ax, ay, gp[2 * i], gp[2 * i + 1], mode, true, taps[size_t(i)]);
  });
  // one pass over each image's channels scatters grad_input and sums grad_grid's channel terms; an image's
  // channels split into chunks (partial sums added in chunk order) only when images are fewer than threads
  const bool bilinear_grid = ggp && mode == 0;
  const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(C, (get_num_threads() + N - 1) / N));
  std::vector<T> partial(bilinear_grid ? size_t(N * chunks * P * 2) : 0, T(0));
  parallel_for(0, N * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; task++) {
      const int64_t n = task / chunks, part = task % chunks;
      const int64_t c0 = C * part / chunks, c1 = C * (part + 1) / chunks;
      const PointTaps<T>* t = taps.data() + n * P;
      T* acc = bilinear_grid ? partial.data() + task * P * 2 : nullptr;
      for (int64_t c = c0; c < c1; c++) {
        const T* go = gop + (n * C + c) * P;
        if (gip) {
          T* plane = gip + (n * C + c) * H * W;
          const int k_taps = mode == 1 ? 1 : 4;
          for (int64_t j = 0; j < P; j++)
            for (int k = 0; k < k_taps; k++)
              if (t[j].in[k]) plane[t[j].off[k]] += go[j] * t[j].w[k];
        }
        if (acc) {
          const T* plane = xp + (n * C + c) * H * W;
          for (int64_t j = 0; j < P; j++) {
            const PointTaps<T>& q = t[j];
            const T nw = tap_value(plane, q, 0), ne = tap_value(plane, q, 1);
            const T sw = tap_value(plane, q, 2), se = tap_value(plane, q, 3);
            acc[2 * j] += ((ne - nw) * (T(1) - q.fy) + (se - sw) * q.fy) * go[j];
            acc[2 * j + 1] += ((sw - nw) * (T(1) - q.fx) + (se - ne) * q.fx) * go[j];
          }
        }
      }
    }
  });
  if (ggp && !bilinear_grid) std::fill(ggp, ggp + N * P * 2, T(0));  // nearest: values do not move with the grid
  if (bilinear_grid) {
    parallel_for(0, N * P, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; i++) {
        const int64_t n = i / P, j = i % P;
        T gx = T(0), gy = T(0);
        for (int64_t part = 0; part < chunks; part++) {
          const T* acc = partial.data() + ((n * chunks + part) * P + j) * 2;
          gx += acc[0];
          gy += acc[1];
        }
        ggp[2 * i] = gx * taps[size_t(i)].gx;
        ggp[2 * i + 1] = gy * taps[size_t(i)].gy;
      }
    });
  }
}

void grid_sample_2d_cpu(const Tensor& out, const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                        bool align_corners) {
  if (input.dtype() == kDouble) grid_sample_2d_typed<double>(out, input, grid, mode, padding, align_corners);
  else grid_sample_2d_typed<float>(out, input, grid, mode, padding, align_corners);
}

void grid_sample_2d_backward_cpu(const Tensor& grad_input, const Tensor& grad_grid, const Tensor& grad_out,
                                 const Tensor& input, const Tensor& grid, int64_t mode, int64_t padding,
                                 bool align_corners) {
  if (input.dtype() == kDouble)
    grid_sample_2d_backward_typed<double>(grad_input, grad_grid, grad_out, input, grid, mode, padding, align_corners);
  else
    grid_sample_2d_backward_typed<float>(grad_input, grad_grid, grad_out, input, grid, mode, padding, align_corners);
}

}  // namespace

EMBER_REGISTER_KERNEL(resample_dim_stub, CPU, &resample_dim_cpu);
EMBER_REGISTER_KERNEL(nearest_select_stub, CPU, &nearest_select_cpu);
EMBER_REGISTER_KERNEL(grid_sample_2d_stub, CPU, &grid_sample_2d_cpu);
EMBER_REGISTER_KERNEL(grid_sample_2d_backward_stub, CPU, &grid_sample_2d_backward_cpu);

}  // namespace ember
