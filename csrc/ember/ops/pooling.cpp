// Pooling: max pooling (a direct kernel returning indices; its backward scatters through them),
// average and adaptive average pooling (separable window averages on interpolation's resampling
// matrices, ops/resample.h; their gradients the adjoints) and adaptive max pooling, up to 3 spatial
// dims. The ops check and size; the loops are the backend's (kernels/pooling.h, kernels/interp.h).
#include <algorithm>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/pooling.h"
#include "ember/ops/conv.h"
#include "ember/ops/resample.h"

EMBER_DEFINE_STUB(max_pool_stub)
EMBER_DEFINE_STUB(max_pool_backward_stub)
EMBER_DEFINE_STUB(adaptive_max_pool_stub)

namespace ember::native {

namespace {
// Pooling parameters are limited to int32, as PyTorch's kernels are: with them, the output size
// arithmetic below cannot overflow int64.
void check_pool_params(const char* op, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d) {
  for (IntArrayRef v : {k, s, p, d})
    for (int64_t x : v)
      EMBER_CHECK(x >= INT32_MIN && x <= INT32_MAX, op, ": value cannot be converted to type int without overflow "
                  "(kernel_size=", k, ", stride=", s, ", padding=", p, ", dilation=", d, ")");
}

// floor((in + 2 pad - dil (k - 1) - 1 [+ stride - 1 in ceil mode]) / stride) + 1; floored, so a window
// larger than the padded input gives 0 (rejected as "Output size is too small"), as in PyTorch.
int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  int64_t num = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = num / stride - (num % stride != 0 && num < 0) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) out--;  // last window must start inside the input
  return out;
}
}  // namespace

// Each gradient goes to the input position its window picked; planes run in parallel.
Tensor max_pool_with_indices_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  EMBER_CHECK(self.dim() >= 3 && grad_output.sizes() == indices.sizes() && grad_output.dim() == self.dim() &&
              grad_output.sizes()[0] == self.sizes()[0] && grad_output.sizes()[1] == self.sizes()[1],
              "max_pool_with_indices_backward: expected grad_output and indices of one shape matching the input's "
              "batch and channel dims, got grad_output ", grad_output.sizes(), ", indices ", indices.sizes(),
              " and input ", self.sizes());
  EMBER_CHECK(indices.dtype() == kLong, "max_pool_with_indices_backward: indices must be int64, got ", indices.dtype());
  check_same_device("max_pool_with_indices_backward", grad_output.device(), {&self, &indices});
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  EMBER_CHECK_KIND(is_floating(cd), NotImplemented, "\"max_pool_with_indices_backward\" not implemented for '",
                   self.dtype(), "'");
  auto kernel = max_pool_backward_stub(grad_output.device(), "max_pool_with_indices_backward");
  Tensor g = grad_output.to(cd).contiguous(), idx = indices.contiguous();
  Tensor gi = ember::zeros(self.sizes(), TensorOptions(cd).device(self.device()));
  int64_t planes = self.sizes()[0] * self.sizes()[1];
  if (planes == 0 || g.numel() == 0) return gi.to(self.dtype());
  kernel(gi, g, idx);
  return gi.to(self.dtype());
}

static std::tuple<Tensor, Tensor> max_pool_rowmajor(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride_in,
                                                    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
// outputs in the input's layout (channels-last stays so, as PyTorch's); the kernels write row-major
std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                 IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  auto [v, i] = max_pool_rowmajor(self, kernel_size, stride, padding, dilation, ceil_mode);
  MemoryFormat f = suggest_memory_format(self);
  return {to_memory_format(v, f), to_memory_format(i, f)};
}
static std::tuple<Tensor, Tensor> max_pool_rowmajor(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride_in,
                                                    IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  int64_t ns = int64_t(kernel_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == ns + 2, "max_pool", ns, "d: expected a batched ", ns + 2,
              "-D input, got ", self.sizes());
  DimVector k = expand_param(kernel_size, ns, "kernel_size", 1);
  DimVector s = stride_in.empty() ? k : expand_param(stride_in, ns, "stride", 1);
  DimVector p = expand_param(padding, ns, "padding", 0), d = expand_param(dilation, ns, "dilation", 1);
  check_pool_params("max_pool", k, s, p, d);
  DimVector in(IntArrayRef(self.sizes().data() + 2, size_t(ns))), out(static_cast<size_t>(ns));
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(k[i] > 0, "kernel_size must be greater than zero, but got ", k.ref());
    EMBER_CHECK(s[i] > 0, "stride must be greater than zero, but got ", s.ref());
    EMBER_CHECK(d[i] > 0, "dilation must be greater than zero, but got ", d.ref());
    EMBER_CHECK(p[i] >= 0 && p[i] <= (d[i] * (k[i] - 1) + 1) / 2, "pad should be at most half of effective kernel "
                "size, but got pad=", p[i], ", kernel_size=", k[i], " and dilation=", d[i]);
    out[i] = pool_out_size(in[i], k[i], p[i], s[i], d[i], ceil_mode);
    EMBER_CHECK(out[i] > 0, "Given input size: ", IntArrayRef(self.sizes().data() + 1, size_t(ns + 1)),
                ". Calculated output size: ", out.ref(), ". Output size is too small");
  }
  EMBER_CHECK_KIND(is_floating(self.dtype()) || is_integral(self.dtype(), false), NotImplemented, "\"max_pool\" not implemented for '",
              self.dtype(), "'");
  auto kernel = max_pool_stub(self.device(), "max_pool");
  WindowGeometry g = make_geometry(in, out, k, d, p, s);
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor x = self.to(cd).contiguous();
  DimVector shape = {self.sizes()[0], self.sizes()[1]};
  for (int64_t v : out) shape.push_back(v);
  Tensor vals = empty_tensor(shape, cd, self.device()), idx = empty_tensor(shape, kLong, self.device());
  kernel(vals, idx, x, g);
  return {vals.to(self.dtype()), idx};
}

#define EMBER_MAXPOOL(N)                                                                                          \
  Tensor max_pool##N##d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,     \
                        IntArrayRef dilation, bool ceil_mode) {                                                   \
    bool batched = self.dim() == N + 2;                                                                           \
    EMBER_CHECK(batched || self.dim() == N + 1, "max_pool" #N "d: Expected ", N + 1, "D or ", N + 2,              \
                "D input, got ", self.sizes());                                                                   \
    Tensor x = batched ? self : self.unsqueeze(0);                                                                \
    DimVector k = expand_param(kernel_size, N, "kernel_size", 1);                                                 \
    DimVector s = stride.empty() ? k : expand_param(stride, N, "stride", 1);                                      \
    Tensor r = std::get<0>(ember::max_pool_with_indices(x, k, s, expand_param(padding, N, "padding", 0),          \
                                                        expand_param(dilation, N, "dilation", 1), ceil_mode));    \
    return batched ? r : r.squeeze(IntArrayRef({int64_t(0)}));                                                    \
  }
EMBER_MAXPOOL(1)
EMBER_MAXPOOL(2)
EMBER_MAXPOOL(3)
#undef EMBER_MAXPOOL

namespace {
struct AvgPoolPlan {
  DimVector in, out, k, s, p;
};

// checks and sizes average pooling over the trailing k dims of a batched input (sizes `in_sizes`)
AvgPoolPlan plan_avg_pool(IntArrayRef in_sizes, ScalarType dt, IntArrayRef kernel_size, IntArrayRef stride_in,
                          IntArrayRef padding, bool ceil_mode, std::optional<int64_t> divisor_override) {
  int64_t ns = int64_t(kernel_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && int64_t(in_sizes.size()) == ns + 2, "avg_pool", ns, "d: expected a batched ",
              ns + 2, "-D input, got ", in_sizes);
  // int64 averages truncate toward zero, as PyTorch's (its only integer avg_pool)
  EMBER_CHECK_KIND(is_floating(dt) || dt == kLong, NotImplemented, "\"avg_pool", ns, "d\" not implemented for '", dt,
                   "'");
  EMBER_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  AvgPoolPlan g;
  g.k = expand_param(kernel_size, ns, "kernel_size", 1);
  g.s = stride_in.empty() ? g.k : expand_param(stride_in, ns, "stride", 1);
  g.p = expand_param(padding, ns, "padding", 0);
  check_pool_params("avg_pool", g.k, g.s, g.p, {});
  g.in = DimVector(IntArrayRef(in_sizes.data() + 2, size_t(ns)));
  g.out = DimVector(static_cast<size_t>(ns));
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(g.k[i] > 0 && g.s[i] > 0, "avg_pool: kernel_size and stride must be greater than zero");
    EMBER_CHECK(g.p[i] >= 0 && g.p[i] <= g.k[i] / 2, "pad should be smaller than or equal to half of kernel size, but "
                "got padW = ", g.p[i], ", padH = ", g.p[i], ", kW = ", g.k[i], ", kH = ", g.k[i]);
    g.out[i] = pool_out_size(g.in[i], g.k[i], g.p[i], g.s[i], 1, ceil_mode);
    EMBER_CHECK(g.out[i] > 0, "Given input size: ", IntArrayRef(in_sizes.data() + 1, size_t(ns + 1)),
                ". Calculated output size: ", g.out.ref(), ". Output size is too small");
  }
  return g;
}

// Average pooling is separable: a window is a box clipped to the input, and its divisor the product of
// the per-dim counts (inside input+padding with count_include_pad, else inside the input; ceil_mode's
// overhang never counts), so each dim is one sparse matrix whose row averages its window (rows sum
// with weight 1 under divisor_override, the divisor applied once, on the last dim's matrix).
std::vector<ResampleMatrix> avg_pool_matrices(const AvgPoolPlan& g, bool count_include_pad,
                                              std::optional<int64_t> divisor_override) {
  std::vector<ResampleMatrix> mats;
  const int64_t ns = int64_t(g.k.size());
  for (int64_t i = 0; i < ns; i++) {
    ResampleMatrix m;
    m.start.push_back(0);
    for (int64_t j = 0; j < g.out[i]; j++) {
      int64_t lo = j * g.s[i] - g.p[i], hi = std::min(lo + g.k[i], g.in[i] + g.p[i]);
      const int64_t with_pad = hi - lo;
      lo = std::max<int64_t>(lo, 0);
      hi = std::min(hi, g.in[i]);
      double w = divisor_override ? 1.0 : 1.0 / double(count_include_pad ? with_pad : hi - lo);
      if (divisor_override && i == ns - 1) w = 1.0 / double(*divisor_override);
      for (int64_t t = lo; t < hi; t++) {
        m.idx.push_back(t);
        m.w.push_back(w);
      }
      m.start.push_back(int64_t(m.idx.size()));
    }
    mats.push_back(std::move(m));
  }
  return mats;
}

// int64 average pooling (no kernel of its own, and no gradient): padded windows summed by im2col,
// divided with truncation
Tensor avg_pool_integral(const Tensor& self, const AvgPoolPlan& g, bool count_include_pad,
                         std::optional<int64_t> divisor_override) {
  const int64_t ns = int64_t(g.k.size());
  DimVector extra(static_cast<size_t>(ns), 0);  // right padding for ceil_mode's last window
  for (int64_t i = 0; i < ns; i++)
    extra[i] = std::max<int64_t>(0, (g.out[i] - 1) * g.s[i] + g.k[i] - (g.in[i] + 2 * g.p[i]));
  auto pads = [&](bool with_extra, bool with_pad) {
    std::vector<int64_t> v;
    for (int64_t i = ns - 1; i >= 0; i--) {
      v.push_back(with_pad ? g.p[i] : 0);
      v.push_back((with_pad ? g.p[i] : 0) + (with_extra ? extra[i] : 0));
    }
    return v;
  };
  DimVector zero(static_cast<size_t>(ns), 0), one(static_cast<size_t>(ns), 1);
  int64_t n = self.sizes()[0], c = self.sizes()[1];
  Tensor cols = ember::im2col(ember::pad(self, pads(true, true), "constant", 0.0), g.k, one, zero, g.s);
  Tensor sums = ember::sum(cols.reshape({n, c, prod(g.k), prod(g.out)}), IntArrayRef({int64_t(2)}), false);
  Tensor div;
  if (divisor_override) {
    div = scalar_to_tensor(Scalar(*divisor_override));
  } else {  // each window's count: ones over the input (and the padding with count_include_pad), zeros beyond
    DimVector mshape = {1, 1};
    for (int64_t v : g.in) mshape.push_back(v);
    Tensor m = ember::ones(mshape, TensorOptions(kLong).device(self.device()));
    if (count_include_pad) m = ember::pad(m, pads(false, true), "constant", 1.0);
    m = ember::pad(m, count_include_pad ? pads(true, false) : pads(true, true), "constant", 0.0);
    div = ember::sum(ember::im2col(m, g.k, one, zero, g.s), IntArrayRef({int64_t(1)}), false);  // [1, L]
  }
  DimVector shape = {n, c};
  for (int64_t v : g.out) shape.push_back(v);
  return ember::div(sums, div, "trunc").reshape(shape);
}
}  // namespace

Tensor avg_pool_nd(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  AvgPoolPlan g = plan_avg_pool(self.sizes(), self.dtype(), kernel_size, stride, padding, ceil_mode, divisor_override);
  Tensor y = self.dtype() == kLong ? avg_pool_integral(self, g, count_include_pad, divisor_override)
                                   : resample_separable(self, avg_pool_matrices(g, count_include_pad, divisor_override),
                                                        g.in, false, "avg_pool");
  return to_memory_format(y, suggest_memory_format(self));
}

// the adjoint: each output's gradient spread over its window with the forward's weights
Tensor avg_pool_nd_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef kernel_size,
                            IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                            std::optional<int64_t> divisor_override) {
  EMBER_CHECK_KIND(is_floating(grad_output.dtype()), NotImplemented, "\"avg_pool_backward\" not implemented for '",
                   grad_output.dtype(), "'");
  AvgPoolPlan g = plan_avg_pool(input_size, grad_output.dtype(), kernel_size, stride, padding, ceil_mode,
                                divisor_override);
  DimVector want{input_size[0], input_size[1]};
  for (int64_t o : g.out) want.push_back(o);
  EMBER_CHECK(grad_output.sizes() == want.ref(), "avg_pool_backward: expected grad_output of size ", want.ref(),
              " for an input of size ", input_size, ", got ", grad_output.sizes());
  return to_memory_format(resample_separable(grad_output, avg_pool_matrices(g, count_include_pad, divisor_override),
                                             g.in, true, "avg_pool_backward"),
                          suggest_memory_format(grad_output));
}

namespace {
void check_adaptive_avg(const char* op, IntArrayRef sizes, ScalarType dt, IntArrayRef output_size) {
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && (int64_t(sizes.size()) == ns + 1 || int64_t(sizes.size()) == ns + 2), op, ns,
              "d(): Expected ", ns + 1, "D or ", ns + 2, "D tensor, but got ", sizes);
  EMBER_CHECK_KIND(is_floating(dt) || is_complex(dt), NotImplemented, "\"", op, ns, "d\" not implemented for '", dt,
                   "'");
  for (int64_t i = 0; i < ns; i++) {
    int64_t dim = int64_t(sizes.size()) - ns + i;
    EMBER_CHECK(output_size[i] >= 0, op, ": output_size must be non-negative, got ", output_size);
    EMBER_CHECK(sizes[dim] > 0 || output_size[i] == 0, op, ns, "d(): Expected input to have non-zero size for "
                "non-batch dimensions, but input has sizes ", sizes, " with dimension ", dim, " being empty");
  }
}

std::vector<ResampleMatrix> area_matrices(IntArrayRef in, IntArrayRef out) {
  std::vector<ResampleMatrix> mats;
  for (size_t i = 0; i < out.size(); i++) mats.push_back(area_matrix(in[i], out[i]));
  return mats;
}

// complex inputs (beyond PyTorch's float-only kernels): each dim contracted with the dense averaging
// matrix by a matrix product (A^T with `adjoint`)
Tensor adaptive_avg_complex(const Tensor& self, IntArrayRef in, IntArrayRef out, bool adjoint) {
  Tensor x = self;
  const int64_t ns = int64_t(out.size());
  for (int64_t i = 0; i < ns; i++) {
    ResampleMatrix a = area_matrix(in[i], out[i]);
    Tensor P = ember::zeros({out[i], in[i]}, TensorOptions(kDouble));
    double* dense = static_cast<double*>(P.data_ptr());  // host memory: P is on the CPU
    for (int64_t j = 0; j < out[i]; j++)
      for (int64_t t = a.start[j]; t < a.start[j + 1]; t++) dense[j * in[i] + a.idx[t]] = a.w[t];
    P = P.to(self.device(), self.dtype());
    const int64_t dim = self.dim() - ns + i;
    x = ember::matmul(x.movedim({dim}, {-1}), adjoint ? P : P.t()).movedim({-1}, {dim});
  }
  return x.contiguous();
}
}  // namespace

// Adaptive average pooling: row j of each dim's matrix averages [floor(j in / out), ceil((j + 1) in / out))
// (global pooling, every output size 1, is a mean over the spatial dims, the reduction kernel's)
namespace {
bool is_global(IntArrayRef output_size) {
  return std::all_of(output_size.begin(), output_size.end(), [](int64_t o) { return o == 1; });
}
}  // namespace

Tensor adaptive_avg_pool_nd(const Tensor& self, IntArrayRef output_size) {
  check_adaptive_avg("adaptive_avg_pool", self.sizes(), self.dtype(), output_size);
  const int64_t ns = int64_t(output_size.size());
  IntArrayRef in(self.sizes().data() + self.dim() - ns, output_size.size());
  if (is_global(output_size) && self.numel() > 0) {
    DimVector dims;
    for (int64_t i = 0; i < ns; i++) dims.push_back(self.dim() - ns + i);
    return ember::mean(self, dims.ref(), true, std::nullopt);
  }
  Tensor y = is_complex(self.dtype()) ? adaptive_avg_complex(self, in, output_size, false)
                                      : resample_separable(self, area_matrices(in, output_size), in, false, "adaptive_avg_pool");
  return to_memory_format(y, suggest_memory_format(self));
}

Tensor adaptive_avg_pool_nd_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size) {
  check_adaptive_avg("adaptive_avg_pool_backward", input_size, grad_output.dtype(), output_size);
  const size_t ns = output_size.size(), lead = input_size.size() - ns;
  DimVector want(input_size);
  for (size_t i = 0; i < ns; i++) want[lead + i] = output_size[i];
  EMBER_CHECK(grad_output.sizes() == want.ref(), "adaptive_avg_pool_backward: expected grad_output of size ",
              want.ref(), " for an input of size ", input_size, ", got ", grad_output.sizes());
  for (size_t i = 0; i < ns; i++)  // PyTorch's backward refuses an empty pooled dim (its forward allows it)
    EMBER_CHECK(output_size[i] > 0, "adaptive_avg_pool", ns, "d_backward(): Expected grad_output to have non-zero size "
                "for non-batch dimensions, but grad_output has sizes ", grad_output.sizes(), " with dimension ",
                lead + i, " being empty");
  IntArrayRef in(input_size.data() + lead, ns);
  if (is_global(output_size) && grad_output.numel() > 0)  // every input gets its window's share
    return ember::div(grad_output.expand(input_size), scalar_to_tensor(double(prod(in))));
  Tensor g = is_complex(grad_output.dtype()) ? adaptive_avg_complex(grad_output, in, output_size, true)
                                             : resample_separable(grad_output, area_matrices(in, output_size), in, true,
                                                                  "adaptive_avg_pool_backward");
  return to_memory_format(g, suggest_memory_format(grad_output));
}

static std::tuple<Tensor, Tensor> adaptive_max_rowmajor(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool_with_indices(const Tensor& self, IntArrayRef output_size) {
  auto [v, i] = adaptive_max_rowmajor(self, output_size);
  MemoryFormat f = suggest_memory_format(self);
  return {to_memory_format(v, f), to_memory_format(i, f)};
}
static std::tuple<Tensor, Tensor> adaptive_max_rowmajor(const Tensor& self, IntArrayRef output_size) {
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == ns + 2, "adaptive_max_pool", ns, "d: expected a batched ", ns + 2,
              "-D input, got ", self.sizes());
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"adaptive_max_pool", ns, "d\" not implemented for '", self.dtype(), "'");
  auto kernel = adaptive_max_pool_stub(self.device(), "adaptive_max_pool");
  DimVector in(IntArrayRef(self.sizes().data() + 2, size_t(ns)));
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(output_size[i] > 0, "adaptive_max_pool: output_size must be positive, got ", output_size);
    EMBER_CHECK(in[i] > 0, "adaptive_max_pool", ns, "d(): Expected input to have non-zero size for non-batch dimensions");
  }
  Tensor x = self.to(is_reduced_float(self.dtype()) ? kFloat : self.dtype()).contiguous();
  DimVector shape = {self.sizes()[0], self.sizes()[1]};
  for (int64_t v : output_size) shape.push_back(v);
  Tensor vals = empty_tensor(shape, x.dtype(), self.device()), idx = empty_tensor(shape, kLong, self.device());
  kernel(vals, idx, x);
  return {vals.to(self.dtype()), idx};
}

}  // namespace ember::native
