// Convolution: im2col, col2im, convolution (plain and transposed, up to 3 spatial dims: 1-D and
// 2-D problems run as 3-D ones with unit dims in front), conv1d/2d/3d and conv_transpose1d/2d/3d,
// and convolution's backward formula. The ops check and size; the backend's entries
// (kernels/conv.h) compute and allocate: the CPU's (kernels/cpu/conv.cpp) run float32 on oneDNN
// and the rest as the im2col + GEMM composite below. Backward passes that must themselves be
// differentiable (create_graph=True) always take the composite: autograd flows through
// im2col/col2im and matmul, so gradients of any order work. Pooling lives in ops/pooling.cpp,
// padding in ops/padding.cpp.
#include "ember/autograd/formulas.h"
#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/conv.h"
#include "ember/ops/conv.h"

EMBER_DEFINE_STUB(im2col_stub)
EMBER_DEFINE_STUB(col2im_stub)
EMBER_DEFINE_STUB(convolution_stub)
EMBER_DEFINE_STUB(convolution_backward_stub)

namespace ember::native {

DimVector expand_param(IntArrayRef v, int64_t n, const char* name, int64_t fill_if_empty) {
  if (v.empty()) return DimVector(static_cast<size_t>(n), fill_if_empty);
  if (v.size() == 1) return DimVector(static_cast<size_t>(n), v[0]);
  EMBER_CHECK(int64_t(v.size()) == n, "expected ", name, " to be a single integer value or a list of ", n,
              " values to match the convolution dimensions, but got ", name, "=", v);
  return DimVector(v);
}

WindowGeometry make_geometry(IntArrayRef in, IntArrayRef out, IntArrayRef k, IntArrayRef d, IntArrayRef p,
                             IntArrayRef s) {
  WindowGeometry g;
  int64_t n = int64_t(in.size()), off = 3 - n;
  for (int i = 0; i < 3; i++) {
    bool real = i >= off;
    g.in[i] = real ? in[i - off] : 1;
    g.out[i] = real ? out[i - off] : 1;
    g.k[i] = real ? k[i - off] : 1;
    g.d[i] = real ? d[i - off] : 1;
    g.p[i] = real ? p[i - off] : 0;
    g.s[i] = real ? s[i - off] : 1;
  }
  return g;
}

namespace {
// Geometry arithmetic runs in 128 bits: padding, dilation and output_size come from the user and may
// be near 2**63, where the int64 expressions wrap. A value that does not fit in int64 is an error.
int64_t geometry_int64(__int128 v, const char* what) {
  EMBER_CHECK(v >= INT64_MIN && v <= INT64_MAX, what, ": the computed size does not fit in int64 (padding, "
              "dilation, stride or kernel size too large)");
  return int64_t(v);
}

// floor((in + 2p - d(k - 1) - 1) / s) + 1 for s > 0; floored (not truncated) so that a kernel larger
// than the padded input gives a size <= 0, which the callers reject as "Output size is too small".
int64_t conv_out_size(int64_t in, int64_t k, int64_t d, int64_t p, int64_t s) {
  __int128 num = __int128(in) + 2 * __int128(p) - __int128(d) * (k - 1) - 1;
  __int128 q = num / s;
  if (num % s != 0 && num < 0) q -= 1;
  return geometry_int64(q + 1, "convolution");
}

}  // namespace

// A complex im2col / col2im: the same real op on each part (they only move and add values).
template <class F>
static Tensor per_part(const Tensor& self, F f) {
  return ember::complex(f(autograd::real_part(self)), f(autograd::imag_part(self)));
}

// [N, C, *S] -> [N, C * prod(K), L]
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  if (self.dtype() == kBool)  // (as bytes: a copy of each value)
    return native::im2col(self.to(kByte), kernel_size, dilation, padding, stride).to(kBool);
  if (is_complex(self.dtype()))
    return per_part(self, [&](const Tensor& t) { return native::im2col(t, kernel_size, dilation, padding, stride); });
  int64_t ns = self.dim() - 2;
  EMBER_CHECK(ns >= 1 && ns <= 3, "im2col: expected a batched input with 1 to 3 spatial dims, got ", self.sizes());
  auto kernel = im2col_stub(self.device(), "im2col");
  DimVector k = expand_param(kernel_size, ns, "kernel_size", 1), d = expand_param(dilation, ns, "dilation", 1),
            p = expand_param(padding, ns, "padding", 0), s = expand_param(stride, ns, "stride", 1);
  DimVector in(IntArrayRef(self.sizes().data() + 2, size_t(ns))), out(static_cast<size_t>(ns));
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(k[i] > 0 && d[i] > 0 && s[i] > 0 && p[i] >= 0, "im2col: kernel_size, dilation and stride must be "
                "positive and padding non-negative, got kernel_size=", k.ref(), " dilation=", d.ref(), " padding=",
                p.ref(), " stride=", s.ref());
    out[i] = conv_out_size(in[i], k[i], d[i], p[i], s[i]);
    EMBER_CHECK(out[i] > 0, "Given input with spatial size ", in.ref(), ", kernel_size=", k.ref(), ", dilation=",
                d.ref(), ", padding=", p.ref(), ", calculated shape of the array of sliding blocks as ", out.ref(),
                ", but its components must be at least one.");
  }
  WindowGeometry g = make_geometry(in, out, k, d, p, s);
  int64_t n = self.sizes()[0], c = self.sizes()[1], kk = prod(k), L = prod(out);
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor x = self.to(cd).contiguous();
  Tensor cols = empty_tensor({n, c * kk, L}, cd, self.device());
  kernel(cols, x, g);
  return cols.to(self.dtype());
}

// [N, C * prod(K), L] -> [N, C, *output_size], summing overlapping blocks
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  if (self.dtype() == kBool)  // overlapping blocks add up as bytes: true where any is (torch's bool +=)
    return native::col2im(self.to(kByte), output_size, kernel_size, dilation, padding, stride).to(kBool);
  if (is_complex(self.dtype()))
    return per_part(self, [&](const Tensor& t) {
      return native::col2im(t, output_size, kernel_size, dilation, padding, stride);
    });
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == 3, "col2im: expected a 3-D input [N, C*prod(kernel), L] and 1 to 3 "
              "output dims, got input ", self.sizes(), " and output_size ", output_size);
  auto kernel = col2im_stub(self.device(), "col2im");
  DimVector k = expand_param(kernel_size, ns, "kernel_size", 1), d = expand_param(dilation, ns, "dilation", 1),
            p = expand_param(padding, ns, "padding", 0), s = expand_param(stride, ns, "stride", 1);
  DimVector in(output_size), out(static_cast<size_t>(ns));
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(k[i] > 0 && d[i] > 0 && s[i] > 0 && p[i] >= 0 && in[i] >= 0, "col2im: kernel_size, dilation and "
                "stride must be positive, padding and output_size non-negative, got output_size=", output_size,
                " kernel_size=", k.ref(), " dilation=", d.ref(), " padding=", p.ref(), " stride=", s.ref());
    out[i] = conv_out_size(in[i], k[i], d[i], p[i], s[i]);
    EMBER_CHECK(out[i] > 0, "Given output_size=", output_size, ", kernel_size=", k.ref(), ", dilation=", d.ref(),
                ", padding=", p.ref(), ", stride=", s.ref(), ", calculated shape of the array of sliding blocks as ",
                out.ref(), ", but its components must be at least one.");
  }
  int64_t kk = prod(k), L = prod(out);
  EMBER_CHECK(self.sizes()[1] % kk == 0, "Expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=", self.sizes()[1], " and kernel_size=", k.ref());
  EMBER_CHECK(self.sizes()[2] == L, "Given output_size=", output_size, ", kernel_size=", k.ref(), ", dilation=", d.ref(),
              ", padding=", p.ref(), ", stride=", s.ref(), ", expected size of input's dimension 2 to match the "
              "calculated number of sliding blocks ", L, ", but got input.size(2)=", self.sizes()[2], ".");
  WindowGeometry g = make_geometry(in, out, k, d, p, s);
  int64_t n = self.sizes()[0], c = self.sizes()[1] / kk;
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor cols = self.to(cd).contiguous();
  DimVector shape = {n, c};
  for (int64_t v : in) shape.push_back(v);
  Tensor x = ember::zeros(shape, TensorOptions(cd).device(self.device()));
  kernel(x, cols, g);
  return x.to(self.dtype());
}
static Tensor convolution_rowmajor(const Tensor& input_in, const Tensor& weight, const Tensor& bias,
                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                   IntArrayRef output_padding, int64_t groups);

// The kernels write row-major outputs; a channels-last input or weight gets a channels-last output, as PyTorch's.
Tensor convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  Tensor r = convolution_rowmajor(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
  MemoryFormat f = suggest_memory_format(input);
  if (f == MemoryFormat::Contiguous && input.dim() == weight.dim()) f = suggest_memory_format(weight);
  return to_memory_format(r, f);
}

static Tensor convolution_rowmajor(const Tensor& input_in, const Tensor& weight, const Tensor& bias,
                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                   IntArrayRef output_padding, int64_t groups) {
  int64_t ns = weight.dim() - 2;
  EMBER_CHECK(ns >= 1 && ns <= 3, "convolution: weight must have 3 to 5 dims, got ", weight.sizes());
  const char* name = ns == 1 ? "conv1d" : ns == 2 ? "conv2d" : "conv3d";
  bool batched = input_in.dim() == ns + 2;
  EMBER_CHECK(batched || input_in.dim() == ns + 1, "Expected ", ns + 1, "D (unbatched) or ", ns + 2, "D (batched) input to ",
              name, ", but got input of size: ", input_in.sizes());
  // integers (not bool) convolve exactly through the im2col + integer matmul composite, as PyTorch's slow
  // path; its transposed convolution takes int64 only
  const ScalarType dt = input_in.dtype();
  EMBER_CHECK_KIND(is_floating(dt) || (is_integral(dt, false) && (!transposed || dt == kLong)), NotImplemented, "\"",
                   name, "\" not implemented for '", dt, "'");
  EMBER_CHECK(input_in.dtype() == weight.dtype(), "Input type (", input_in.dtype(), ") and weight type (",
              weight.dtype(), ") should be the same");
  EMBER_CHECK(!bias.defined() || bias.dtype() == input_in.dtype(), "Input type (", input_in.dtype(), ") and bias type (",
              bias.dtype(), ") should be the same");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  check_same_device("convolution", input_in.device(), {&weight, &bias});
  auto kernel = convolution_stub(input_in.device(), "convolution");
  Tensor input = batched ? input_in : input_in.unsqueeze(0);
  DimVector s = expand_param(stride, ns, "stride", 1), p = expand_param(padding, ns, "padding", 0),
            d = expand_param(dilation, ns, "dilation", 1), op = expand_param(output_padding, ns, "output_padding", 0);
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(s[i] > 0, "non-positive stride is not supported");
    EMBER_CHECK(p[i] >= 0, "negative padding is not supported");
    EMBER_CHECK(d[i] > 0, "dilation should be greater than zero");
  }
  int64_t cin = input.sizes()[1];
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(ns)));
  DimVector out_shape = {input.sizes()[0]};
  if (!transposed) {
    int64_t cout = weight.sizes()[0];
    EMBER_CHECK(cout % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
                " at dimension 0, but got weight of size ", weight.sizes(), " instead");
    EMBER_CHECK(cin == weight.sizes()[1] * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", input_in.sizes(), " to have ", weight.sizes()[1] * groups,
                " channels, but got ", cin, " channels instead");
    out_shape.push_back(cout);
    for (int64_t i = 0; i < ns; i++) {
      int64_t padded = geometry_int64(__int128(input.sizes()[2 + i]) + 2 * __int128(p[i]), name),
              eff = geometry_int64(__int128(d[i]) * (ksz[i] - 1) + 1, name);
      EMBER_CHECK(padded >= eff, "Calculated padded input size per channel: (", padded, "). Kernel size: (", eff,
                  "). Kernel size can't be greater than actual input size");
      out_shape.push_back(conv_out_size(input.sizes()[2 + i], ksz[i], d[i], p[i], s[i]));
    }
  } else {
    EMBER_CHECK(weight.sizes()[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ",
                groups, " at dimension 0, but got weight of size ", weight.sizes(), " instead");
    EMBER_CHECK(weight.sizes()[0] == cin, "Given transposed=1, weight of size ", weight.sizes(), ", expected input",
                input_in.sizes(), " to have ", weight.sizes()[0], " channels, but got ", cin, " channels instead");
    out_shape.push_back(weight.sizes()[1] * groups);
    for (int64_t i = 0; i < ns; i++) {
      EMBER_CHECK(op[i] < s[i] || op[i] < d[i], "output padding must be smaller than either stride or dilation, but got "
                  "output_padding=", op.ref(), ", stride=", s.ref(), ", dilation=", d.ref());
      int64_t o = geometry_int64(__int128(input.sizes()[2 + i] - 1) * s[i] - 2 * __int128(p[i]) +
                                     __int128(d[i]) * (ksz[i] - 1) + op[i] + 1, name);
      EMBER_CHECK(o > 0, "Given input size per channel: ", IntArrayRef(input.sizes().data() + 2, size_t(ns)),
                  ". Calculated output size per channel: ", o, ". Output size is too small");
      out_shape.push_back(o);
    }
  }
  Tensor out = kernel(input, weight, bias, conv_params(ns, s, p, d, op, groups, transposed),
                      IntArrayRef(out_shape.data() + 2, size_t(ns)));
  return batched ? out : out.squeeze(IntArrayRef({int64_t(0)}));
}

}  // namespace ember::native

namespace ember {

ConvParams conv_params(int64_t ns, IntArrayRef s, IntArrayRef p, IntArrayRef d, IntArrayRef op, int64_t groups,
                       bool transposed) {
  ConvParams g{ns, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, groups, transposed};
  for (int64_t i = 0; i < ns; i++) {
    g.s[i] = s[i];
    g.p[i] = p[i];
    g.d[i] = d[i];
    g.op[i] = op[i];
  }
  return g;
}

namespace {
DimVector spatial(const std::array<int64_t, 3>& v, int64_t ns) { return DimVector(IntArrayRef(v.data(), size_t(ns))); }

// A transposed convolution with output_padding >= stride (allowed while < dilation) has more output rows than
// col2im's padded geometry fills: both passes then work on the blocks' full unpadded extent, returned here
// per spatial dim (in_sp: the input's spatial sizes); empty when the usual geometry covers the output.
DimVector wide_output_extent(const ConvParams& prm, IntArrayRef in_sp, IntArrayRef ksz) {
  bool wide = false;
  for (int64_t i = 0; i < prm.ns; i++) wide = wide || prm.op[i] >= prm.s[i];
  DimVector full;
  if (wide)
    for (int64_t i = 0; i < prm.ns; i++) full.push_back((in_sp[i] - 1) * prm.s[i] + prm.d[i] * (ksz[i] - 1) + 1);
  return full;
}
}  // namespace

Tensor conv_forward_composite(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& prm,
                              IntArrayRef out_spatial) {
  int64_t ns = prm.ns, groups = prm.groups;
  DimVector s = spatial(prm.s, ns), p = spatial(prm.p, ns), d = spatial(prm.d, ns);
  int64_t n = input.sizes()[0], cin = input.sizes()[1];
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(ns)));
  int64_t kk = prod(ksz);
  Tensor out;
  if (!prm.transposed) {
    int64_t cout = weight.sizes()[0];
    Tensor cols = ember::im2col(input, ksz, d, p, s);  // [N, Cin*K, L]
    int64_t L = cols.sizes()[2];
    if (groups == 1) {
      out = ember::matmul(weight.reshape({cout, cin * kk}), cols);  // [N, Cout, L]
    } else {
      Tensor cg = cols.reshape({n, groups, cin / groups * kk, L});
      Tensor wg = weight.reshape({groups, cout / groups, cin / groups * kk});
      out = ember::matmul(wg, cg).reshape({n, cout, L});
    }
    DimVector shape = {n, cout};
    for (int64_t v : out_spatial) shape.push_back(v);
    out = out.reshape(shape);
  } else {
    int64_t cout = weight.sizes()[1] * groups;
    int64_t L = prod(IntArrayRef(input.sizes().data() + 2, size_t(ns)));
    Tensor x = input.reshape({n, groups, cin / groups, L});
    Tensor w = weight.reshape({groups, cin / groups, cout / groups * kk});
    Tensor cols = ember::matmul(w.transpose(1, 2), x).reshape({n, cout * kk, L});  // [N, Cout*K, L]
    DimVector full = wide_output_extent(prm, IntArrayRef(input.sizes().data() + 2, size_t(ns)), ksz);
    if (full.empty()) {
      out = ember::col2im(cols, out_spatial, ksz, d, p, s);
    } else {
      // sum the blocks unpadded over their full extent, then crop the padding and zero-fill what no block reaches
      DimVector zero(static_cast<size_t>(ns), 0);
      out = ember::col2im(cols, full, ksz, d, zero, s);
      std::vector<int64_t> tail(size_t(2 * ns), 0);
      for (int64_t i = 0; i < ns; i++) {
        int64_t keep = std::min(out_spatial[i], full[i] - p[i]);
        out = out.narrow(2 + i, p[i], keep);
        tail[size_t(2 * (ns - 1 - i) + 1)] = out_spatial[i] - keep;
      }
      out = ember::pad(out, tail, "constant", 0.0);
    }
  }
  if (bias.defined()) {
    DimVector bshape(static_cast<size_t>(ns + 2), 1);
    bshape[1] = bias.numel();
    out = ember::add(out, bias.reshape(bshape));
  }
  return out;
}

// The adjoint of the composite forward, written with differentiable ops.
std::tuple<Tensor, Tensor, Tensor> conv_backward_composite(const Tensor& grad, const Tensor& input,
                                                           const Tensor& weight, bool has_bias, const ConvParams& prm,
                                                           std::array<bool, 3> mask) {
  int64_t ns = prm.ns, G = prm.groups;
  DimVector s = spatial(prm.s, ns), p = spatial(prm.p, ns), d = spatial(prm.d, ns);
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(ns)));
  int64_t n = input.sizes()[0], cin = input.sizes()[1], kk = prod(ksz);
  DimVector in_sp(IntArrayRef(input.sizes().data() + 2, size_t(ns)));
  Tensor gi, gw, gb;
  if (!prm.transposed) {
    int64_t cout = weight.sizes()[0];
    Tensor gog = grad.reshape({n, G, cout / G, -1});
    if (mask[0]) {
      Tensor wg = weight.reshape({G, cout / G, cin / G * kk});
      Tensor gcols = ember::matmul(wg.transpose(1, 2), gog).reshape({n, cin * kk, -1});
      gi = ember::col2im(gcols, in_sp, ksz, d, p, s);
    }
    if (mask[1]) {
      Tensor cg = ember::im2col(input, ksz, d, p, s).reshape({n, G, cin / G * kk, -1});
      gw = ember::sum(ember::matmul(gog, cg.transpose(2, 3)), IntArrayRef({int64_t(0)}), false).reshape(weight.sizes());
    }
  } else {
    int64_t cout = weight.sizes()[1] * G;
    Tensor g = grad;
    DimVector gp = p;
    if (DimVector full = wide_output_extent(prm, in_sp, ksz); !full.empty()) {
      // re-pad grad to the forward's unpadded extent (a negative tail crops what no block reached), then no padding
      std::vector<int64_t> spec(size_t(2 * ns), 0);
      for (int64_t i = 0; i < ns; i++) {
        spec[size_t(2 * (ns - 1 - i))] = p[i];
        spec[size_t(2 * (ns - 1 - i) + 1)] = full[i] - p[i] - grad.sizes()[2 + i];
        gp[i] = 0;
      }
      g = ember::pad(grad, spec, "constant", 0.0);
    }
    Tensor gcols = ember::im2col(g, ksz, d, gp, s).reshape({n, G, cout / G * kk, prod(in_sp)});
    if (mask[0]) {
      Tensor w = weight.reshape({G, cin / G, cout / G * kk});
      gi = ember::matmul(w, gcols).reshape(input.sizes());
    }
    if (mask[1]) {
      Tensor xg = input.reshape({n, G, cin / G, -1});
      gw = ember::sum(ember::matmul(xg, gcols.transpose(2, 3)), IntArrayRef({int64_t(0)}), false).reshape(weight.sizes());
    }
  }
  if (mask[2] && has_bias) {
    std::vector<int64_t> red = {0};
    for (int64_t i = 2; i < grad.dim(); i++) red.push_back(i);
    gb = ember::sum(grad, IntArrayRef(red), false);
  }
  return {gi, gw, gb};
}

namespace autograd {

// create_graph=True needs a differentiable backward: the composite. Otherwise this is the backward
// op's body: checked, then computed by the backend's entry.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_in, const Tensor& input_in,
                                                        const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                                                        IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                                        IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> mask) {
  if (!grad_in.defined()) return {};
  int64_t ns = weight.dim() - 2;
  bool batched = input_in.dim() == ns + 2;
  Tensor input = batched ? input_in : input_in.unsqueeze(0), grad = batched ? grad_in : grad_in.unsqueeze(0);
  DimVector s = native::expand_param(stride, ns, "stride", 1), p = native::expand_param(padding, ns, "padding", 0),
            d = native::expand_param(dilation, ns, "dilation", 1),
            op = native::expand_param(output_padding, ns, "output_padding", 0);
  ConvParams prm = conv_params(ns, s, p, d, op, groups, transposed);
  Tensor gi, gw, gb;
  if (grad_enabled()) {
    std::tie(gi, gw, gb) = conv_backward_composite(grad, input, weight, bias.defined(), prm, mask);
  } else {
    check_same_device("convolution_backward", grad.device(), {&input, &weight, &bias});
    std::tie(gi, gw, gb) =
        convolution_backward_stub(grad.device(), "convolution_backward")(grad, input, weight, bias.defined(), prm, mask);
  }
  if (gi.defined() && !batched) gi = gi.squeeze(IntArrayRef({int64_t(0)}));
  return {gi, gw, gb};
}

Tensor conv_bias_jvp(const Tensor& bias_t, const Tensor& result, const Tensor& weight) {
  DimVector shape(size_t(result.dim()), 1);
  shape[result.dim() == weight.dim() ? 1 : 0] = bias_t.numel();  // channels: dim 1, or dim 0 unbatched
  return bias_t.reshape(shape).expand(result.sizes());
}

}  // namespace autograd
}  // namespace ember

namespace ember::native {

// A complex convolution as three real ones (Gauss's trick, as PyTorch's): with x = a + ib and w = c + id,
// conv(x, w) = (t1 - t2) + i (t3 - t1 - t2), t1 = conv(a, c), t2 = conv(b, d), t3 = conv(a + b, c + d);
// the bias is added after. Differentiable through the real convolutions.
static Tensor any_convolution(const Tensor& x, const Tensor& w, const Tensor& bias, IntArrayRef stride,
                              IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                              int64_t groups) {
  if (!is_complex(x.dtype()) || x.dtype() != w.dtype() || (bias.defined() && bias.dtype() != x.dtype()))
    return ember::convolution(x, w, bias, stride, padding, dilation, transposed, output_padding, groups);
  auto conv = [&](const Tensor& in, const Tensor& k) {
    return ember::convolution(in, k, Tensor(), stride, padding, dilation, transposed, output_padding, groups);
  };
  Tensor a = autograd::real_part(x), b = autograd::imag_part(x);
  Tensor c = autograd::real_part(w), d = autograd::imag_part(w);
  Tensor t1 = conv(a, c), t2 = conv(b, d), t3 = conv(a + b, c + d);
  Tensor out = ember::complex(t1 - t2, t3 - t1 - t2);
  if (!bias.defined()) return out;
  DimVector shape(size_t(out.dim()), 1);
  shape[1] = bias.numel();
  return out + bias.reshape(shape);
}

#define EMBER_CONV(N)                                                                                              \
  Tensor conv##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,             \
                    IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                   \
    EMBER_CHECK(weight.dim() == N + 2, "conv" #N "d: weight must be ", N + 2, "-D, got ", weight.sizes());         \
    return unbatched_call(input, N, [&](const Tensor& x) {                                                         \
      return any_convolution(x, weight, bias, stride, padding, dilation, false, {}, groups);                    \
    });                                                                                                            \
  }                                                                                                                \
  Tensor conv##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,             \
                    std::string_view padding, IntArrayRef dilation, int64_t groups) {                              \
    return unbatched_call(input, N, [&](const Tensor& x) {                                                         \
      return conv_padding_str(x, weight, bias, stride, padding, dilation, groups, N);                              \
    });                                                                                                            \
  }                                                                                                                \
  Tensor conv_transpose##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,   \
                              IntArrayRef padding, IntArrayRef output_padding, int64_t groups,                     \
                              IntArrayRef dilation) {                                                              \
    EMBER_CHECK(weight.dim() == N + 2, "conv_transpose" #N "d: weight must be ", N + 2, "-D, got ", weight.sizes()); \
    return unbatched_call(input, N, [&](const Tensor& x) {                                                         \
      return any_convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);         \
    });                                                                                                            \
  }

// An unbatched input gets a batch dim of one around the call, as PyTorch's conv*d do (so the graph
// and its grad_fn names match).
template <class F>
static Tensor unbatched_call(const Tensor& input, int64_t ns, F f) {
  if (input.dim() != ns + 1) return f(input);
  return f(input.unsqueeze(0)).squeeze(IntArrayRef({int64_t(0)}));
}

// padding="valid" | "same"; "same" pads asymmetrically (extra on the right) when the total is odd.
static Tensor conv_padding_str(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                               std::string_view padding, IntArrayRef dilation, int64_t groups, int64_t ns) {
  if (padding == "valid") return any_convolution(input, weight, bias, stride, {0}, dilation, false, {}, groups);
  EMBER_CHECK_KIND(padding == "same", Value, "Invalid padding string '", padding, "', should be one of {'valid', 'same'}");
  DimVector s = expand_param(stride, ns, "stride", 1), d = expand_param(dilation, ns, "dilation", 1);
  for (int64_t v : s) EMBER_CHECK(v == 1, "padding='same' is not supported for strided convolutions");
  DimVector sym(static_cast<size_t>(ns)), extra;
  bool asym = false;
  std::vector<int64_t> pad_spec;  // F.pad order: last dim first
  for (int64_t i = 0; i < ns; i++) {
    int64_t total = d[i] * (weight.sizes()[2 + i] - 1);
    sym[i] = total / 2;
    if (total % 2) asym = true;
  }
  Tensor x = input;
  if (asym) {
    for (int64_t i = ns - 1; i >= 0; i--) {
      int64_t total = d[i] * (weight.sizes()[2 + i] - 1);
      pad_spec.push_back(0);
      pad_spec.push_back(total % 2);
    }
    x = ember::pad(input, pad_spec, "constant", 0.0);
  }
  return any_convolution(x, weight, bias, stride, sym, dilation, false, {}, groups);
}

EMBER_CONV(1)
EMBER_CONV(2)
EMBER_CONV(3)
#undef EMBER_CONV

}  // namespace ember::native
