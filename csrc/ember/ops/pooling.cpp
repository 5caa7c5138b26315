// Pooling: max pooling (a direct kernel returning indices; its backward scatters through them),
// average pooling (a composite of pad, im2col and sum), adaptive average pooling (matrix products)
// and adaptive max pooling, up to 3 spatial dims. The ops check and size; the loops are the
// backend's (kernels/pooling.h; the CPU's in kernels/cpu/pooling.cpp).
#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/pooling.h"
#include "ember/ops/conv.h"

EMBER_DEFINE_STUB(max_pool_stub)
EMBER_DEFINE_STUB(max_pool_backward_stub)
EMBER_DEFINE_STUB(adaptive_max_pool_stub)
EMBER_DEFINE_STUB(adaptive_avg_pool_matrix_stub)

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

// Average pooling as a composite: im2col of the (zero-padded) input, summed over each window and
// divided by the window's element count (padding included or not); ceil_mode windows that run
// past the input are clipped like PyTorch's.
static Tensor avg_pool_rowmajor(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride_in,
                                IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor_override);
Tensor avg_pool_nd(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                   bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return to_memory_format(avg_pool_rowmajor(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                            divisor_override), suggest_memory_format(self));
}
static Tensor avg_pool_rowmajor(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride_in,
                                IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor_override) {
  int64_t ns = int64_t(kernel_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == ns + 2, "avg_pool", ns, "d: expected a batched ", ns + 2,
              "-D input, got ", self.sizes());
  // int64 averages truncate toward zero, as PyTorch's (its only integer avg_pool)
  const bool integral = self.dtype() == kLong;
  EMBER_CHECK_KIND(is_floating(self.dtype()) || integral, NotImplemented, "\"avg_pool", ns, "d\" not implemented for '",
                   self.dtype(), "'");
  EMBER_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  DimVector k = expand_param(kernel_size, ns, "kernel_size", 1);
  DimVector s = stride_in.empty() ? k : expand_param(stride_in, ns, "stride", 1);
  DimVector p = expand_param(padding, ns, "padding", 0);
  check_pool_params("avg_pool", k, s, p, {});
  DimVector in(IntArrayRef(self.sizes().data() + 2, size_t(ns))), out(static_cast<size_t>(ns));
  std::vector<int64_t> pad_spec;  // extra right padding so ceil_mode's last window fits in im2col
  DimVector extra(static_cast<size_t>(ns), 0);
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(k[i] > 0 && s[i] > 0, "avg_pool: kernel_size and stride must be greater than zero");
    EMBER_CHECK(p[i] >= 0 && p[i] <= k[i] / 2, "pad should be smaller than or equal to half of kernel size, but got "
                "padW = ", p[i], ", padH = ", p[i], ", kW = ", k[i], ", kH = ", k[i]);
    out[i] = pool_out_size(in[i], k[i], p[i], s[i], 1, ceil_mode);
    EMBER_CHECK(out[i] > 0, "Given input size: ", IntArrayRef(self.sizes().data() + 1, size_t(ns + 1)),
                ". Calculated output size: ", out.ref(), ". Output size is too small");
    int64_t need = (out[i] - 1) * s[i] + k[i];              // extent the windows cover
    extra[i] = std::max<int64_t>(0, need - (in[i] + 2 * p[i]));
  }
  for (int64_t i = ns - 1; i >= 0; i--) {
    pad_spec.push_back(p[i]);
    pad_spec.push_back(p[i] + extra[i]);
  }
  Tensor xp = ember::pad(self, pad_spec, "constant", 0.0);
  DimVector zero(static_cast<size_t>(ns), 0), one(static_cast<size_t>(ns), 1);
  int64_t n = self.sizes()[0], c = self.sizes()[1], kk = prod(k), L = prod(out);
  Tensor cols = ember::im2col(xp, k, one, zero, s).reshape({n, c, kk, L});
  Tensor sums = ember::sum(cols, IntArrayRef({int64_t(2)}), false);  // [N, C, L]
  Tensor div;
  if (divisor_override) {
    div = integral ? scalar_to_tensor(Scalar(*divisor_override)) : scalar_to_tensor(double(*divisor_override));
  } else {
    // count per window: elements inside input+padding (count_include_pad) or inside the input only
    DimVector mshape = {1, 1};
    for (int64_t v : in) mshape.push_back(v);
    Tensor ones = ember::ones(mshape, TensorOptions(self.dtype()).device(self.device()));
    std::vector<int64_t> mask_pad;
    for (int64_t i = ns - 1; i >= 0; i--) {
      mask_pad.push_back(p[i]);
      mask_pad.push_back(p[i] + extra[i]);
    }
    Tensor m = count_include_pad ? ember::pad(ones, mask_pad, "constant", 1.0) : ember::pad(ones, mask_pad, "constant", 0.0);
    if (count_include_pad && std::any_of(extra.begin(), extra.end(), [](int64_t e) { return e > 0; })) {
      // the ceil_mode overhang is not padding: it never counts
      std::vector<int64_t> only_pad;
      for (int64_t i = ns - 1; i >= 0; i--) {
        only_pad.push_back(p[i]);
        only_pad.push_back(p[i]);
      }
      m = ember::pad(ember::pad(ones, only_pad, "constant", 1.0), [&] {
        std::vector<int64_t> e;
        for (int64_t i = ns - 1; i >= 0; i--) { e.push_back(0); e.push_back(extra[i]); }
        return e;
      }(), "constant", 0.0);
    }
    div = ember::sum(ember::im2col(m, k, one, zero, s), IntArrayRef({int64_t(1)}), false);  // [1, L]
  }
  DimVector shape = {n, c};
  for (int64_t v : out) shape.push_back(v);
  return (integral ? ember::div(sums, div, "trunc") : ember::div(sums, div)).reshape(shape);
}

// Adaptive average pooling as matrix products: each spatial dim is averaged by a fixed [out, in]
// matrix whose row i averages the window [floor(i*in/out), ceil((i+1)*in/out)).
Tensor adaptive_avg_pool_nd(const Tensor& self, IntArrayRef output_size) {
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && (self.dim() == ns + 1 || self.dim() == ns + 2), "adaptive_avg_pool", ns,
              "d(): Expected ", ns + 1, "D or ", ns + 2, "D tensor, but got ", self.sizes());
  EMBER_CHECK_KIND(is_floating(self.dtype()) || is_complex(self.dtype()), NotImplemented, "\"adaptive_avg_pool", ns,
                   "d\" not implemented for '", self.dtype(), "'");
  auto matrix_kernel = adaptive_avg_pool_matrix_stub(self.device(), "adaptive_avg_pool");
  Tensor x = self;
  for (int64_t i = 0; i < ns; i++) {
    int64_t dim = self.dim() - ns + i;
    int64_t in = self.sizes()[dim], o = output_size[i];
    EMBER_CHECK(o >= 0, "adaptive_avg_pool: output_size must be non-negative, got ", output_size);
    EMBER_CHECK(in > 0 || o == 0, "adaptive_avg_pool", ns, "d(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ", self.sizes(), " with dimension ", dim, " being empty");
    Tensor P = ember::zeros({o, in}, TensorOptions(kDouble).device(self.device()));
    matrix_kernel(P);
    Tensor Pt = P.to(self.dtype());
    // contract dim `dim` of x with P's columns
    x = ember::matmul(x.movedim({dim}, {-1}), Pt.t()).movedim({-1}, {dim});
  }
  return x.contiguous();
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
