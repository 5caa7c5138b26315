// Resampling: interpolate (ember.nn.functional.interpolate's private op `upsample`, with its
// adjoint `upsample_backward`), grid_sample (`grid_sampler`) and affine_grid (`affine_grid_generator`).
//
// Interpolation is separable: each spatial dim is resampled by a sparse [out, in] matrix whose row j
// holds PyTorch's source indices and weights for output j (computed here in PyTorch's precision:
// float for float32, double for float64): 1 tap for nearest, 2 for linear, 4 for bicubic, the
// averaging window for area. The last dim is resampled first, as PyTorch's kernel nests its loops.
// upsample applies the matrices, upsample_backward their transposes: each is the other's
// gradient, so gradients of any order are exact. grid_sample is one CPU kernel for 2-D bilinear/nearest
// float/double (grid_sampler_2d_fused) and otherwise, like affine_grid, a composite of differentiable ops
// (index_select, where, mul, matmul), which also gives the fused op's second derivatives.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/autograd/formulas.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/checked_math.h"
#include "ember/core/half.h"

#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/interp.h"
#include "ember/ops/resample.h"

EMBER_DEFINE_STUB(resample_dim_stub)
EMBER_DEFINE_STUB(nearest_select_stub)
EMBER_DEFINE_STUB(grid_sample_2d_stub)
EMBER_DEFINE_STUB(grid_sample_2d_backward_stub)

namespace ember::native {

namespace {

// PyTorch's UpSample.h helpers, in the op math type R (float or double).
template <class R>
R compute_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? R(in - 1) / R(out - 1) : R(0);
  return (scale && *scale > 0.) ? R(1.0 / *scale) : R(in) / R(out);
}

template <class R>
R source_index(R scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * R(dst);
  R src = scale * (R(dst) + R(0.5)) - R(0.5);
  return (!cubic && src < R(0)) ? R(0) : src;
}

template <class R>
void guard_index_and_lambda(R real, int64_t in, int64_t& index, R& lambda) {
  index = std::min(int64_t(std::floor(float(real))), in - 1);
  lambda = std::min(std::max(real - R(index), R(0)), R(1));
}

template <class R>
R cubic1(R x, R A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
template <class R>
R cubic2(R x, R A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

struct Taps {
  std::vector<std::vector<int64_t>> idx;  // [tap][out]
  std::vector<std::vector<double>> w;     // [tap][out]; empty for nearest
};

// a weight rounded to dt when that is half/bfloat16 (PyTorch keeps some of its weights in the input's dtype:
// plan_upsample says which)
template <class R>
R weight_in(ScalarType dt, R w) {
  if (dt == kHalf) return R(float(Half(float(w))));
  if (dt == kBFloat16) return R(float(BFloat16(float(w))));
  return w;
}

template <class R>
Taps make_taps(const std::string_view mode, int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
               bool nearest_2d, ScalarType dt) {
  Taps t;
  if (mode == "nearest" && nearest_2d) {
    // PyTorch's 2-D nearest kernel (nearest_idx): a copy for equal sizes, i >> 1 for twice the
    // size, else floor(i * scale) in float
    float s = compute_scale<float>(in, out, false, scale);
    t.idx.resize(1);
    for (int64_t i = 0; i < out; i++) {
      int64_t j = out == in ? i : out == 2 * in ? (i >> 1) : std::min(int64_t(std::floor(float(i) * s)), in - 1);
      t.idx[0].push_back(j);
    }
    return t;
  }
  if (mode == "nearest" || mode == "nearest-exact") {
    R s = compute_scale<R>(in, out, false, scale);
    t.idx.resize(1);
    for (int64_t i = 0; i < out; i++) {
      int64_t j;
      if (mode == "nearest") {
        j = int64_t(std::floor(float(source_index<R>(s, i, true, false))));
      } else {
        j = int64_t(std::floor(float(source_index<R>(s, i, false, false) + R(0.5))));
      }
      t.idx[0].push_back(std::min(j, in - 1));
    }
    return t;
  }
  R s = compute_scale<R>(in, out, align_corners, scale);
  if (mode == "bicubic") {
    t.idx.resize(4);
    t.w.resize(4);
    const R A = R(-0.75);
    for (int64_t i = 0; i < out; i++) {
      R real = source_index<R>(s, i, align_corners, true), lambda;
      int64_t j;
      guard_index_and_lambda(real, in, j, lambda);
      R c[4] = {cubic2<R>(lambda + R(1.0), A), cubic1<R>(lambda, A), cubic1<R>(R(1.0) - lambda, A),
                cubic2<R>(R(1.0) - lambda + R(1.0), A)};
      for (int k = 0; k < 4; k++) {
        t.idx[k].push_back(std::max<int64_t>(std::min<int64_t>(j - 1 + k, in - 1), 0));
        t.w[k].push_back(double(weight_in(dt, c[k])));
      }
    }
    return t;
  }
  // linear
  t.idx.resize(2);
  t.w.resize(2);
  for (int64_t i = 0; i < out; i++) {
    int64_t i0, i1;
    R l0, l1;
    if (out == in) {
      i0 = i1 = i;
      l0 = R(1);
      l1 = R(0);
    } else {
      R real = source_index<R>(s, i, align_corners, false);
      guard_index_and_lambda(real, in, i0, l1);
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
      l1 = weight_in(dt, l1);
      l0 = weight_in(dt, R(1) - l1);
    }
    t.idx[0].push_back(i0);
    t.idx[1].push_back(i1);
    t.w[0].push_back(double(l0));
    t.w[1].push_back(double(l1));
  }
  return t;
}

}  // namespace

namespace {

using Csr = ResampleMatrix;

Csr to_csr(const Taps& t, int64_t out) {
  Csr c;
  c.start.push_back(0);
  for (int64_t j = 0; j < out; j++) {
    for (size_t k = 0; k < t.idx.size(); k++) {
      c.idx.push_back(t.idx[k][size_t(j)]);
      c.w.push_back(t.w.empty() ? 1.0 : t.w[k][size_t(j)]);
    }
    c.start.push_back(int64_t(c.idx.size()));
  }
  return c;
}

// interpolate(antialias=True) ("bilinear-aa", "bicubic-aa"): PIL's resampling filters (a triangle,
// or Keys' cubic with a = -0.5) stretched by the scale when downsampling, normalized per output
template <class R>
Csr antialias_csr(std::string_view mode, int64_t in, int64_t out, bool align_corners, std::optional<double> scale_opt) {
  bool cubic = mode == "bicubic-aa";
  R scale = compute_scale<R>(in, out, align_corners, scale_opt);
  R support = R(cubic ? 2.0 : 1.0) * (scale >= R(1) ? scale : R(1));
  int64_t max_taps = int64_t(std::ceil(double(support))) * 2 + 1;
  R invscale = scale >= R(1) ? R(1) / scale : R(1);
  auto filter = [&](R x) -> R {
    x = std::abs(x);
    if (!cubic) return x < R(1) ? R(1) - x : R(0);
    const R a = R(-0.5);
    if (x < R(1)) return cubic1<R>(x, a);
    if (x < R(2)) return cubic2<R>(x, a);
    return R(0);
  };
  Csr c;
  c.start.push_back(0);
  for (int64_t j = 0; j < out; j++) {
    R center = scale * (R(j) + R(0.5));
    int64_t xmin = std::max(int64_t(center - support + R(0.5)), int64_t(0));
    int64_t xsize = std::min(int64_t(center + support + R(0.5)), in) - xmin;
    xsize = std::min(std::max<int64_t>(xsize, 0), max_taps);
    std::vector<R> w(static_cast<size_t>(xsize));
    R total = 0;
    for (int64_t t = 0; t < xsize; t++) {
      w[size_t(t)] = filter((R(t + xmin) - center + R(0.5)) * invscale);
      total += w[size_t(t)];
    }
    for (int64_t t = 0; t < xsize; t++) {
      c.idx.push_back(xmin + t);
      c.w.push_back(double(total != R(0) ? w[size_t(t)] / total : w[size_t(t)]));
    }
    c.start.push_back(int64_t(c.idx.size()));
  }
  return c;
}

// uint8 images, bilinear/bicubic with or without antialiasing, as PyTorch's separable uint8 kernel:
// one dim's weights in double (antialiased: PIL's filters as above; else the float path's taps with
// A = -0.75, those that fall outside the input folded onto the edge sample), then in fixed point with
// the most fractional bits (at most 22) that keep the largest weight of the dim within int16.
Csr uint8_csr(std::string_view mode, int64_t in, int64_t out, bool align_corners, std::optional<double> scale_opt) {
  Csr c;
  double wt_max = 0;
  if (mode == "bilinear-aa" || mode == "bicubic-aa") {
    c = antialias_csr<double>(mode, in, out, align_corners, scale_opt);
    for (double w : c.w) wt_max = std::max(wt_max, w);
  } else {
    const bool cubic = mode == "bicubic";
    const int64_t taps = cubic ? 4 : 2, support = taps / 2;
    const double scale = compute_scale<double>(in, out, align_corners, scale_opt), A = -0.75;
    auto filter = [&](double x) {
      x = std::abs(x);
      if (!cubic) return x < 1.0 ? 1.0 - x : 0.0;
      return x < 1.0 ? cubic1<double>(x, A) : x < 2.0 ? cubic2<double>(x, A) : 0.0;
    };
    c.start.push_back(0);
    for (int64_t j = 0; j < out; j++) {
      int64_t index;
      double lambda;
      guard_index_and_lambda(source_index<double>(scale, j, align_corners, cubic), in, index, lambda);
      const int64_t lo = index - support + 1;  // the taps' first input index, before clamping
      const int64_t first = std::max<int64_t>(lo, 0);
      const int64_t size = std::clamp<int64_t>(std::min(index + support + 1, in) - first, 0, taps);
      double w[4] = {0, 0, 0, 0};
      int64_t slot = 0;
      for (int64_t t = 0; t < taps; t++) {  // (the running maximum, as PyTorch takes it)
        if (lo + t <= 0) slot = 0;
        else if (lo + t >= in - 1) slot = size - 1;
        w[slot] += filter(double(t + 1 - support) - lambda);
        wt_max = std::max(wt_max, w[slot]);
        slot++;
      }
      for (int64_t t = 0; t < size; t++) {
        c.idx.push_back(first + t);
        c.w.push_back(w[t]);
      }
      c.start.push_back(int64_t(c.idx.size()));
    }
  }
  int precision = 0;
  for (; precision < 22; ++precision)
    if (int(0.5 + wt_max * double(1 << (precision + 1))) >= (1 << 15)) break;
  EMBER_CHECK(precision > 0, "upsample: no fixed-point precision for uint8 weights up to ", wt_max);
  c.precision = precision;
  for (double w : c.w) {
    const double v = w * double(1 << precision);
    c.w16.push_back(int16_t(v < 0 ? int(-0.5 + v) : int(0.5 + v)));
  }
  return c;
}

// y = A x along `dim` of a contiguous x (x's dim has A's column count), or with transpose
// y = A^T x (x's dim has A's row count, y's has `cols`): allocated here, computed by the backend.
Tensor apply_dim(const Tensor& x, int64_t dim, const Csr& a, bool transpose, int64_t cols, const char* op = "upsample") {
  int64_t rows = int64_t(a.start.size()) - 1;
  DimVector shape(x.sizes());
  shape[dim] = transpose ? cols : rows;
  Tensor y = transpose ? ember::zeros(shape, TensorOptions(x.dtype()).device(x.device()))
                       : empty_tensor(shape, x.dtype(), x.device());
  resample_dim_stub(x.device(), op)(y, x, dim, a, transpose);
  return y;
}

}  // namespace

ResampleMatrix area_matrix(int64_t in, int64_t out) {
  Csr c;
  c.start.push_back(0);
  for (int64_t j = 0; j < out; j++) {
    int64_t a = (j * in) / out, b = ((j + 1) * in + out - 1) / out;
    for (int64_t i = a; i < b; i++) {
      c.idx.push_back(i);
      c.w.push_back(1.0 / double(b - a));
    }
    c.start.push_back(int64_t(c.idx.size()));
  }
  return c;
}

Tensor resample_separable(const Tensor& x_in, const std::vector<ResampleMatrix>& mats, IntArrayRef in_sizes,
                          bool adjoint, const char* op) {
  const int64_t k = int64_t(mats.size()), lead = x_in.dim() - k;
  EMBER_CHECK(lead >= 0 && int64_t(in_sizes.size()) == k, op, ": ", k, " matrices for a ", x_in.dim(), "-D input");
  DimVector out_sizes(x_in.sizes());
  for (int64_t i = 0; i < k; i++) out_sizes[size_t(lead + i)] = adjoint ? in_sizes[i] : int64_t(mats[size_t(i)].start.size()) - 1;
  const ScalarType dt = x_in.dtype(), compute = dt == kDouble ? kDouble : kFloat;
  if (prod(out_sizes) == 0 || x_in.numel() == 0)
    return ember::zeros(out_sizes, TensorOptions(dt).device(x_in.device()));
  // the dims that shrink most go first (less data for the later passes), the last dim last among equals
  // (its pass transposes blocks of rows: better on the smaller tensor; avg_pool2d(2) fwd+bwd 1.5x faster);
  // the adjoint takes them in the reverse order
  std::vector<int64_t> order;
  for (int64_t i = 0; i < k; i++) order.push_back(i);
  auto ratio = [&](int64_t i) { return double(mats[size_t(i)].start.size() - 1) / double(std::max<int64_t>(in_sizes[i], 1)); };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return ratio(a) < ratio(b); });
  if (adjoint) std::reverse(order.begin(), order.end());
  Tensor x = x_in.to(compute).contiguous();
  for (int64_t i : order) x = apply_dim(x, lead + i, mats[size_t(i)], adjoint, in_sizes[i], op);
  return x.to(dt);
}

namespace {

struct UpsamplePlan {
  std::vector<Csr> mats;  // per spatial dim
  ScalarType compute = kFloat;
};

UpsamplePlan plan_upsample(IntArrayRef in_sizes, IntArrayRef output_size, std::string_view mode, bool align_corners,
                           ScalarType dt, const std::optional<double>* scales, ScalarType weight_dt) {
  int64_t k = int64_t(output_size.size());
  UpsamplePlan p;
  // the math type of the indices and weights (PyTorch's opmath: double for float64, else float)
  p.compute = dt == kDouble ? kDouble : kFloat;
  for (int64_t i = 0; i < k; i++) {
    int64_t in = in_sizes[2 + i], out = output_size[i];
    if (mode == "area") {
      p.mats.push_back(area_matrix(in, out));
      continue;
    }
    if (mode == "bilinear-aa" || mode == "bicubic-aa") {
      p.mats.push_back(p.compute == kDouble ? antialias_csr<double>(mode, in, out, align_corners, scales[i])
                                            : antialias_csr<float>(mode, in, out, align_corners, scales[i]));
      continue;
    }
    Taps t = p.compute == kDouble ? make_taps<double>(mode, in, out, align_corners, scales[i], k == 2, weight_dt)
                                  : make_taps<float>(mode, in, out, align_corners, scales[i], k == 2, weight_dt);
    p.mats.push_back(to_csr(t, out));
  }
  return p;
}

void check_upsample(IntArrayRef in_sizes, IntArrayRef output_size, std::string_view mode, ScalarType dt) {
  int64_t k = int64_t(output_size.size());
  EMBER_CHECK(k >= 1 && k <= 3 && int64_t(in_sizes.size()) == k + 2, "upsample: expected a ", k + 2, "-D input for ",
              k, " output sizes, got ", in_sizes);
  bool nearest = mode == "nearest" || mode == "nearest-exact";
  bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  bool aa = mode == "bilinear-aa" || mode == "bicubic-aa";
  EMBER_CHECK_KIND(nearest || linear || aa || mode == "bicubic" || mode == "area", NotImplemented,
                   "upsample: unknown mode ", mode);
  EMBER_CHECK(!aa || k == 2, "upsample: antialiasing needs a 4-D input");
  bool ok = true;
  for (int64_t i = 0; i < k; i++) ok = ok && in_sizes[2 + i] > 0 && output_size[i] > 0;
  if (!ok) {
    std::string in, out;
    const char* names[] = {"D", "H", "W"};
    for (int64_t i = 0; i < k; i++) {
      const char* n = names[3 - k + i];
      in += std::string(i ? ", " : "") + n + ": " + std::to_string(in_sizes[2 + i]);
      out += std::string(i ? ", " : "") + n + ": " + std::to_string(output_size[i]);
    }
    EMBER_FAIL(Runtime, "Input and output sizes should be greater than 0, but got input (", in, ") output (", out, ")");
  }
  const bool uint8_2d = k == 2 && (mode == "bilinear" || mode == "bicubic" || aa);  // PyTorch's uint8 kernels
  EMBER_CHECK_KIND(is_floating(dt) || (dt == kByte && (nearest || uint8_2d)), NotImplemented, "\"upsample_", mode,
                   "\" not implemented for '", dt, "'");
  // the plan below does work per output index: an output that cannot exist fails here, first
  DimVector out_sizes{in_sizes[0], in_sizes[1]};
  for (int64_t o : output_size) out_sizes.push_back(o);
  check_output_size(out_sizes, itemsize(dt), "upsample");
}

Tensor run_upsample(const Tensor& x_in, IntArrayRef in_sizes, IntArrayRef output_size, std::string_view mode,
                    bool align_corners, const std::optional<double>* scales, bool backward) {
  ScalarType dt = x_in.dtype();
  check_upsample(in_sizes, output_size, mode, dt);
  const int64_t k = int64_t(output_size.size());
  if (dt == kByte && mode != "nearest" && mode != "nearest-exact") {
    // fixed point on the bytes (uint8_csr); the last dim first, a dim of unchanged size left as it is
    EMBER_CHECK_KIND(x_in.device().is_cpu(), NotImplemented, "\"upsample_", mode, "\" for uint8 runs on the CPU only");
    Tensor x = x_in.contiguous();
    for (int64_t i = k - 1; i >= 0; i--) {
      const int64_t dim = 2 + i;
      if (in_sizes[dim] != output_size[i])
        x = apply_dim(x, dim, uint8_csr(mode, in_sizes[dim], output_size[i], align_corners, scales[i]), false, 0);
    }
    return x.is_same(x_in) ? x_in.clone() : x;
  }
  // PyTorch's forward keeps 1-d/3-d linear and cubic weights in the input's dtype (half/bfloat16 inputs get
  // them rounded); its 2-d bilinear forward and every backward keep them float (found by matching its results)
  const ScalarType weight_dt = backward || mode == "bilinear" ? kFloat : dt;
  UpsamplePlan p = plan_upsample(in_sizes, output_size, mode, align_corners, dt, scales, weight_dt);
  if (!backward && (mode == "nearest" || mode == "nearest-exact") && x_in.device().is_cpu()) {
    // nearest only selects: every output value copied from its source in one pass, in its own dtype
    Tensor x = x_in.contiguous();
    DimVector out_sizes{in_sizes[0], in_sizes[1]};
    std::vector<const int64_t*> idx;
    for (int64_t i = 0; i < k; i++) {
      out_sizes.push_back(output_size[i]);
      idx.push_back(p.mats[size_t(i)].idx.data());
    }
    Tensor y = empty_tensor(out_sizes, dt, x.device());
    nearest_select_stub(x.device(), "upsample")(y, x, idx);
    return y;
  }
  Tensor x = x_in.to(p.compute).contiguous();
  // forward: last dim first; the adjoint undoes that order
  for (int64_t step = 0; step < k; step++) {
    int64_t i = backward ? step : k - 1 - step;
    int64_t dim = 2 + i;
    if ((mode == "linear" || mode == "bilinear" || mode == "trilinear") && in_sizes[dim] == output_size[i])
      continue;  // PyTorch copies: weights (1, 0) at the same index
    x = apply_dim(x, dim, p.mats[size_t(i)], backward, in_sizes[dim]);
  }
  if (x.is_same(x_in)) return x_in.clone();
  return x.to(dt);
}

}  // namespace

Tensor upsample(const Tensor& input, IntArrayRef output_size, std::string_view mode, bool align_corners,
                std::optional<double> scale0, std::optional<double> scale1, std::optional<double> scale2) {
  const std::optional<double> scales[3] = {scale0, scale1, scale2};
  EMBER_CHECK(input.dim() >= 2, "upsample: expected a batched input, got ", input.sizes());
  return to_memory_format(run_upsample(input, input.sizes(), output_size, mode, align_corners, scales, false),
                          suggest_memory_format(input));
}

Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         std::string_view mode, bool align_corners, std::optional<double> scale0,
                         std::optional<double> scale1, std::optional<double> scale2) {
  const std::optional<double> scales[3] = {scale0, scale1, scale2};
  int64_t k = int64_t(output_size.size());
  EMBER_CHECK(int64_t(input_size.size()) == k + 2 && grad_output.dim() == k + 2,
              "upsample_backward: expected input_size of ", k + 2, " dims and a ", k + 2, "-D grad_output");
  for (int64_t d = 0; d < k + 2; d++) {
    int64_t want = d < 2 ? input_size[d] : output_size[d - 2];
    EMBER_CHECK(grad_output.sizes()[d] == want, "upsample_backward: expected grad_output of size ", want,
                " at dim ", d, ", got ", grad_output.sizes());
  }
  return run_upsample(grad_output, input_size, output_size, mode, align_corners, scales, true);
}

// ---------------------------------------------------------------- grid_sample
namespace {

// PyTorch's grid_sampler_compute_source_index, with differentiable ops: unnormalize, then clip
// (border) or reflect and clip (reflection).
Tensor unnormalize(const Tensor& coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1) * (double(size - 1) / 2) : (coord + 1) * (double(size) / 2) - 0.5;
}

// PyTorch's CPU kernel for 2-D float32 computes (coord + 1) * scale - 0.5 as one fused multiply-add: in
// double the product and difference are exact (a float times a half-integer), rounded to float once
Tensor unnormalize_fused(const Tensor& coord, int64_t size, bool align_corners) {
  Tensor c1 = (coord + 1).to(kDouble);
  return (align_corners ? c1 * (double(size - 1) / 2) : c1 * (double(size) / 2) - 0.5).to(kFloat);
}

// the padding mode applied to unnormalized coordinates c: clipped (border), reflected and clipped
// (reflection), or kept (zeros: outside positions read 0)
Tensor pad_coords(const Tensor& c, int64_t size, int64_t padding_mode, bool align_corners) {
  auto clip = [&](const Tensor& t) {
    return ember::clamp(t, scalar_to_tensor(0.0), scalar_to_tensor(double(size - 1)));
  };
  if (padding_mode == 1) return clip(c);
  if (padding_mode == 2) {
    double lo2 = align_corners ? 0.0 : -1.0, hi2 = align_corners ? 2.0 * double(size - 1) : 2.0 * double(size) - 1.0;
    if (lo2 == hi2) return c * 0.0;
    double mn = lo2 / 2, span = (hi2 - lo2) / 2;
    Tensor in = (c - mn).abs();
    Tensor extra = ember::fmod(in, scalar_to_tensor(span));
    Tensor flips = ember::floor(in / span);
    Tensor even = ember::eq(ember::remainder(flips, scalar_to_tensor(2.0)), scalar_to_tensor(0.0));
    return clip(ember::where(even, extra + mn, (extra * -1.0) + (span + mn)));
  }
  return c;
}

Tensor source_coords(const Tensor& coord, int64_t size, int64_t padding_mode, bool align_corners) {
  return pad_coords(unnormalize(coord, size, align_corners), size, padding_mode, align_corners);
}

}  // namespace

namespace {
Tensor grid_sampler_composite(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                              int64_t padding_mode, bool align_corners);
// the fused kernel's cases: 2-D bilinear or nearest of float or double on the CPU
bool fused_grid_sample(const Tensor& input, int64_t interpolation_mode) {
  return input.device().is_cpu() && input.dim() == 4 && interpolation_mode <= 1 &&
         (input.dtype() == kFloat || input.dtype() == kDouble);
}
}  // namespace

Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                    bool align_corners) {
  EMBER_CHECK(input.dtype() == grid.dtype(), "grid_sampler(): expected input and grid to have same dtype, but input has ",
              input.dtype(), " and grid has ", grid.dtype());
  check_same_device("grid_sampler", input.device(), {&grid});
  EMBER_CHECK((input.dim() == 4 || input.dim() == 5) && input.dim() == grid.dim(),
              "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with "
              "sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  EMBER_CHECK(input.sizes()[0] == grid.sizes()[0], "grid_sampler(): expected grid and input to have same batch size, but "
              "got input with sizes ", input.sizes(), " and grid with sizes ", grid.sizes());
  int64_t k = input.dim() - 2;
  EMBER_CHECK(grid.sizes().back() == k, "grid_sampler(): expected grid to have size ", k, " in last dimension, but got "
              "grid with sizes ", grid.sizes());
  for (int64_t i = 2; i < input.dim(); i++)
    EMBER_CHECK(input.sizes()[i] > 0, "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                "has sizes ", input.sizes(), " with dimension ", i, " being empty");
  EMBER_CHECK(interpolation_mode >= 0 && interpolation_mode <= 2, "grid_sampler(): unknown interpolation mode ",
              interpolation_mode);
  EMBER_CHECK(padding_mode >= 0 && padding_mode <= 2, "grid_sampler(): unknown padding mode ", padding_mode);
  EMBER_CHECK(interpolation_mode != 2 || input.dim() == 4, "grid_sampler(): bicubic interp only supports 4D input");
  EMBER_CHECK_KIND(is_floating(input.dtype()), NotImplemented, "\"grid_sampler_", k, "d_cpu\" not implemented for '",
                   input.dtype(), "'");
  if (fused_grid_sample(input, interpolation_mode))
    return ember::grid_sampler_2d_fused(input, grid, interpolation_mode, padding_mode, align_corners);
  return grid_sampler_composite(input, grid, interpolation_mode, padding_mode, align_corners);
}

namespace {
// The composite: differentiable ops (index_select of corner rows, where, mul, add), any mode and rank;
// its gradients of every order come from autograd.
Tensor grid_sampler_composite(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                              int64_t padding_mode, bool align_corners) {
  const int64_t k = input.dim() - 2;
  int64_t n = input.sizes()[0], c = input.sizes()[1];
  DimVector spatial, out_spatial;  // [(D,) H, W] of the input and of the output
  for (int64_t i = 2; i < input.dim(); i++) spatial.push_back(input.sizes()[i]);
  for (int64_t i = 1; i + 1 < grid.dim(); i++) out_spatial.push_back(grid.sizes()[i]);
  int64_t npts = 1, nin = 1;
  for (int64_t s : out_spatial) npts = checked_mul(npts, s, "numel");
  for (int64_t s : spatial) nin = checked_mul(nin, s, "numel");
  // source coordinates per spatial dim (grid's last dim holds x, y(, z): W first)
  std::vector<Tensor> coord(static_cast<size_t>(k));
  for (int64_t d = 0; d < k; d++) {
    int64_t size = spatial[k - 1 - d];
    Tensor g = grid.select(-1, d).reshape({n, npts});
    if (interpolation_mode == 2)  // bicubic pads each of its 4x4 taps' positions instead of the coordinate
      coord[k - 1 - d] = input.device().is_cpu() && input.dtype() == kFloat ? unnormalize_fused(g, size, align_corners)
                                                                            : unnormalize(g, size, align_corners);
    else
      coord[k - 1 - d] = source_coords(g, size, padding_mode, align_corners);
  }
  // the input as rows of channels, [n * nin, c]: a corner's values are whole rows (index_select)
  Tensor rows = input.reshape({n, c, nin}).transpose(1, 2).reshape({n * nin, c});
  Tensor batch_base =
      ember::arange(Scalar(int64_t(0)), Scalar(n * nin), Scalar(nin), TensorOptions(kLong).device(input.device()))
          .unsqueeze(1);
  // values at integer positions pos[d] ([n, npts] float tensors) as [n, npts, c], times the weights w when
  // given, zero outside the input (a NaN position is outside: its weight is not multiplied in, as in
  // PyTorch's scalar kernels)
  auto sample = [&](const std::vector<Tensor>& pos, const Tensor& w = Tensor()) {
    Tensor lin, inside;
    int64_t mult = 1;
    for (int64_t d = k - 1; d >= 0; d--) {
      int64_t size = spatial[d];
      Tensor ok = ember::logical_and(ember::ge(pos[d], scalar_to_tensor(0.0)),
                                     ember::le(pos[d], scalar_to_tensor(double(size - 1))));
      Tensor p = ember::clamp(ember::nan_to_num(pos[d], 0.0, std::nullopt, std::nullopt), scalar_to_tensor(0.0),
                              scalar_to_tensor(double(size - 1))).to(kLong);
      lin = lin.defined() ? lin + p * mult : p * mult;
      inside = inside.defined() ? ember::logical_and(inside, ok) : ok;
      mult *= size;
    }
    Tensor v = ember::index_select(rows, 0, (lin + batch_base).reshape({-1})).reshape({n, npts, c});
    if (w.defined()) v = v * w.unsqueeze(2);
    return ember::where(inside.unsqueeze(2), v, ember::zeros({}, TensorOptions(input.dtype())));
  };
  Tensor out;  // [n, npts, c]
  if (interpolation_mode == 2) {
    // 4 x 4 taps around floor(coord) with PyTorch's cubic convolution weights (A = -0.75), each tap's
    // position padded on its own
    std::vector<Tensor> lo, t;
    for (int64_t d = 0; d < 2; d++) {
      Tensor f = ember::floor(coord[d].detach());
      lo.push_back(f);
      t.push_back(coord[d] - f);
    }
    auto cc1 = [](const Tensor& x) { return ((x * 1.25 - 2.25) * x) * x + 1; };           // |x| <= 1
    auto cc2 = [](const Tensor& x) { return ((x * -0.75 + 3.75) * x - 6.0) * x + 3.0; };  // 1 < |x| < 2
    auto coeffs = [&](const Tensor& x) {
      return std::vector<Tensor>{cc2(x + 1), cc1(x), cc1((x * -1.0) + 1), cc2((x * -1.0) + 2)};
    };
    std::vector<Tensor> wy = coeffs(t[0]), wx = coeffs(t[1]);
    for (int64_t i = 0; i < 4; i++) {
      Tensor row;
      for (int64_t j = 0; j < 4; j++) {
        std::vector<Tensor> pos = {pad_coords(lo[0] + double(i - 1), spatial[0], padding_mode, align_corners),
                                   pad_coords(lo[1] + double(j - 1), spatial[1], padding_mode, align_corners)};
        Tensor term = sample(pos) * wx[size_t(j)].unsqueeze(2);
        row = row.defined() ? row + term : term;
      }
      Tensor term = row * wy[size_t(i)].unsqueeze(2);
      out = out.defined() ? out + term : term;
    }
  } else if (interpolation_mode == 1) {
    std::vector<Tensor> pos;
    for (int64_t d = 0; d < k; d++) pos.push_back(ember::round(coord[d].detach()));
    out = sample(pos);
    // the sampled values do not depend on the grid (PyTorch's gradient for it is zero, not absent)
    if (grid.requires_grad()) out = out + grid.select(-1, 0).reshape({n, npts, 1}) * 0.0;
  } else {
    std::vector<Tensor> lo, frac;
    for (int64_t d = 0; d < k; d++) {
      Tensor f = ember::floor(coord[d].detach());
      lo.push_back(f);
      frac.push_back(coord[d] - f);  // weight of the upper corner
    }
    // corners in PyTorch's order (nw, ne, sw, se, then the far plane): bit d set = upper along d,
    // the x (last) dim varying fastest
    for (int64_t m = 0; m < (int64_t(1) << k); m++) {
      std::vector<Tensor> pos(static_cast<size_t>(k));
      Tensor w;
      for (int64_t d = 0; d < k; d++) {
        bool up = (m >> (k - 1 - d)) & 1;
        pos[d] = up ? lo[d] + 1 : lo[d];
        Tensor wd = up ? frac[d] : (lo[d] + 1) - coord[d];
        w = w.defined() ? w * wd : wd;
      }
      Tensor term = sample(pos, w);
      out = out.defined() ? out + term : term;
    }
  }
  out = out.transpose(1, 2);
  DimVector shape = {n, c};
  for (int64_t s : out_spatial) shape.push_back(s);
  return out.reshape(shape);
}
}  // namespace

// 2-D bilinear/nearest sampling in one kernel (the CPU's, float and double): grid_sampler's path there.
Tensor grid_sampler_2d_fused(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                             bool align_corners) {
  EMBER_CHECK(input.dim() == 4 && grid.dim() == 4 && grid.sizes()[3] == 2 && input.sizes()[0] == grid.sizes()[0] &&
              input.dtype() == grid.dtype() && interpolation_mode >= 0 && interpolation_mode <= 1 &&
              padding_mode >= 0 && padding_mode <= 2, "grid_sampler_2d_fused: expected a 4-D input, a [N, H, W, 2] "
              "grid of its dtype and batch, bilinear or nearest, got input ", input.sizes(), " ", input.dtype(),
              ", grid ", grid.sizes(), " ", grid.dtype(), ", mode ", interpolation_mode, ", padding ", padding_mode);
  check_same_device("grid_sampler_2d_fused", input.device(), {&grid});
  auto kernel = grid_sample_2d_stub(input.device(), "grid_sampler_2d");
  Tensor out = empty_tensor({input.sizes()[0], input.sizes()[1], grid.sizes()[1], grid.sizes()[2]}, input.dtype(),
                            input.device());
  if (out.numel() > 0) kernel(out, input.contiguous(), grid.contiguous(), interpolation_mode, padding_mode, align_corners);
  return out;
}

}  // namespace ember::native

namespace ember::autograd {

// With create_graph, the composite's gradients through autograd (differentiable again: double backward
// works, where PyTorch's raises); otherwise the fused kernel's.
std::tuple<Tensor, Tensor> grid_sampler_2d_fused_backward(const Tensor& grad, const Tensor& input, const Tensor& grid,
                                                          int64_t interpolation_mode, int64_t padding_mode,
                                                          bool align_corners, std::array<bool, 2> mask) {
  if (!grad.defined()) return {};
  if (grad_enabled()) {
    Tensor out = native::grid_sampler_composite(input, grid, interpolation_mode, padding_mode, align_corners);
    variable_list wrt;
    if (mask[0]) wrt.push_back(input);
    if (mask[1]) wrt.push_back(grid);
    variable_list g = ember::autograd::grad({out}, wrt, {grad}, true, true, true);
    Tensor gi = mask[0] ? g[0] : Tensor(), gg = mask[1] ? g[mask[0] ? 1 : 0] : Tensor();
    if (mask[0] && !gi.defined()) gi = ember::zeros_like(input);
    if (mask[1] && !gg.defined()) gg = ember::zeros_like(grid);
    return {gi, gg};
  }
  Tensor x = input.contiguous(), g = grid.contiguous(), go = grad.contiguous();
  Tensor gi = mask[0] ? ember::zeros(x.sizes(), TensorOptions(x.dtype()).device(x.device())) : Tensor();
  Tensor gg = mask[1] ? empty_tensor(g.sizes(), g.dtype(), g.device()) : Tensor();
  if (x.numel() > 0 && go.numel() > 0)
    grid_sample_2d_backward_stub(x.device(), "grid_sampler_2d_backward")(gi, gg, go, x, g, interpolation_mode,
                                                                         padding_mode, align_corners);
  else if (gg.defined())
    gg.zero_();
  return {gi, gg};
}

}  // namespace ember::autograd

namespace ember::native {

// ---------------------------------------------------------------- affine_grid
namespace {
Tensor linspace_from_neg_one(int64_t steps, bool align_corners, const TensorOptions& opts) {
  if (steps <= 1) return ember::zeros({}, opts);
  Tensor r = ember::linspace(-1, 1, steps, opts);
  if (!align_corners) r = r * double(steps - 1) / double(steps);
  return r;
}
}  // namespace

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  EMBER_CHECK(size.size() == 4 || size.size() == 5, "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.");
  int64_t k = int64_t(size.size()) - 2, n = size[0];
  ScalarType dt = theta.dtype();
  DimVector base_shape = {n};
  for (int64_t i = 2; i < int64_t(size.size()); i++) base_shape.push_back(size[i]);
  base_shape.push_back(k + 1);
  TensorOptions opts = TensorOptions(dt).device(theta.device());
  Tensor base = ember::empty(base_shape, opts);
  // x varies along W (the last spatial dim), y along H, z along D; the last coordinate is 1
  for (int64_t d = 0; d < k; d++) {
    Tensor r = linspace_from_neg_one(size[size.size() - 1 - d], align_corners, opts);
    for (int64_t j = 0; j < d && r.dim(); j++) r = r.unsqueeze(-1);
    ember::copy_(base.select(-1, d), r);
  }
  base.select(-1, k).fill_(1);
  int64_t npts = 1;  // the points per batch entry (not numel / n: n may be 0)
  for (int64_t i = 2; i < int64_t(size.size()); i++) npts *= size[i];
  Tensor grid = ember::matmul(base.view({n, npts, k + 1}), theta.transpose(1, 2));
  DimVector out_shape(base_shape);
  out_shape.back() = k;
  return grid.view(out_shape);
}

}  // namespace ember::native
