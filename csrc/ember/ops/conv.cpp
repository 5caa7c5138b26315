// Convolution and pooling. float32 convolutions run on oneDNN (onednn/conv.h); the other dtypes, and
// backward passes that must themselves be differentiable (create_graph=True), are im2col + GEMM
// composites: OpenBLAS does the FLOPs and autograd flows through im2col/col2im and matmul, so
// gradients of any order work. Max pooling has
// a direct kernel returning indices; its backward scatters through them. Up to 3 spatial dims:
// 1-D and 2-D problems run as 3-D ones with unit dims in front.
#include <atomic>
#include <cmath>
#include <cstring>

#include "ember/autograd/formulas.h"
#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/onednn/conv.h"
#include "ember/ops/conv.h"
#include "ember/parallel/parallel.h"

namespace ember::native {

namespace {

// One spatial geometry, padded to 3 dims (leading unit dims).
struct Geometry {
  int64_t in[3], out[3], k[3], d[3], p[3], s[3];
};

DimVector expand_param(IntArrayRef v, int64_t n, const char* name, int64_t fill_if_empty) {
  if (v.empty()) return DimVector(static_cast<size_t>(n), fill_if_empty);
  if (v.size() == 1) return DimVector(static_cast<size_t>(n), v[0]);
  EMBER_CHECK(int64_t(v.size()) == n, "expected ", name, " to be a single integer value or a list of ", n,
              " values to match the convolution dimensions, but got ", name, "=", v);
  return DimVector(v);
}

Geometry make_geometry(IntArrayRef in, IntArrayRef out, IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s) {
  Geometry g;
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

template <class T>
void im2col_plane(const T* x, T* cols, const Geometry& g) {
  const int64_t L = g.out[0] * g.out[1] * g.out[2];
  int64_t row = 0;
  for (int64_t kd = 0; kd < g.k[0]; kd++)
    for (int64_t kh = 0; kh < g.k[1]; kh++)
      for (int64_t kw = 0; kw < g.k[2]; kw++, row++) {
        T* dst = cols + row * L;
        for (int64_t od = 0; od < g.out[0]; od++) {
          int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
          for (int64_t oh = 0; oh < g.out[1]; oh++) {
            int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            T* o = dst + (od * g.out[1] + oh) * g.out[2];
            if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) {
              for (int64_t ow = 0; ow < g.out[2]; ow++) o[ow] = T(0);
              continue;
            }
            const T* src = x + (id * g.in[1] + ih) * g.in[2];
            int64_t base = kw * g.d[2] - g.p[2];
            for (int64_t ow = 0; ow < g.out[2]; ow++) {
              int64_t iw = ow * g.s[2] + base;
              o[ow] = (iw >= 0 && iw < g.in[2]) ? src[iw] : T(0);
            }
          }
        }
      }
}

template <class T>
void col2im_plane(const T* cols, T* x, const Geometry& g) {
  const int64_t L = g.out[0] * g.out[1] * g.out[2];
  int64_t row = 0;
  for (int64_t kd = 0; kd < g.k[0]; kd++)
    for (int64_t kh = 0; kh < g.k[1]; kh++)
      for (int64_t kw = 0; kw < g.k[2]; kw++, row++) {
        const T* src = cols + row * L;
        for (int64_t od = 0; od < g.out[0]; od++) {
          int64_t id = od * g.s[0] - g.p[0] + kd * g.d[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t oh = 0; oh < g.out[1]; oh++) {
            int64_t ih = oh * g.s[1] - g.p[1] + kh * g.d[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            const T* c = src + (od * g.out[1] + oh) * g.out[2];
            T* dst = x + (id * g.in[1] + ih) * g.in[2];
            int64_t base = kw * g.d[2] - g.p[2];
            for (int64_t ow = 0; ow < g.out[2]; ow++) {
              int64_t iw = ow * g.s[2] + base;
              if (iw >= 0 && iw < g.in[2]) dst[iw] += c[ow];
            }
          }
        }
      }
}

// c ? a : b through a bit mask: compilers turn the ternary into a branch, which mispredicts half the
// time on random data (max pooling's running maximum)
template <class T>
inline T blend(bool c, T a, T b) {
  using U = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 2, uint16_t,
            std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const U m = U(0) - U(c);
  U r = U((ua & m) | (ub & U(~m)));
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

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

// [N, C, *S] -> [N, C * prod(K), L]
Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  int64_t ns = self.dim() - 2;
  EMBER_CHECK(ns >= 1 && ns <= 3, "im2col: expected a batched input with 1 to 3 spatial dims, got ", self.sizes());
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
  Geometry g = make_geometry(in, out, k, d, p, s);
  int64_t n = self.sizes()[0], c = self.sizes()[1], kk = prod(k), L = prod(out), plane = prod(in);
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor x = self.to(cd).contiguous();
  Tensor cols = empty_tensor({n, c * kk, L}, cd);
  EMBER_DISPATCH_ALL(cd, "im2col", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>) {
      EMBER_FAIL(NotImplemented, "\"im2col\" not implemented for '", cd, "'");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* cp = static_cast<T*>(cols.data_ptr());
      parallel_for(0, n * c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(kk * L, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) im2col_plane(xp + i * plane, cp + i * kk * L, g);
      });
    }
  });
  return cols.to(self.dtype());
}

// [N, C * prod(K), L] -> [N, C, *output_size], summing overlapping blocks
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == 3, "col2im: expected a 3-D input [N, C*prod(kernel), L] and 1 to 3 "
              "output dims, got input ", self.sizes(), " and output_size ", output_size);
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
  int64_t kk = prod(k), L = prod(out), plane = prod(in);
  EMBER_CHECK(self.sizes()[1] % kk == 0, "Expected size of input's dimension 1 to be divisible by the product of "
              "kernel_size, but got input.size(1)=", self.sizes()[1], " and kernel_size=", k.ref());
  EMBER_CHECK(self.sizes()[2] == L, "Given output_size=", output_size, ", kernel_size=", k.ref(), ", dilation=", d.ref(),
              ", padding=", p.ref(), ", stride=", s.ref(), ", expected size of input's dimension 2 to match the "
              "calculated number of sliding blocks ", L, ", but got input.size(2)=", self.sizes()[2], ".");
  Geometry g = make_geometry(in, out, k, d, p, s);
  int64_t n = self.sizes()[0], c = self.sizes()[1] / kk;
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor cols = self.to(cd).contiguous();
  DimVector shape = {n, c};
  for (int64_t v : in) shape.push_back(v);
  Tensor x = ember::zeros(shape, TensorOptions(cd));
  EMBER_DISPATCH_ALL(cd, "col2im", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>) {
      EMBER_FAIL(NotImplemented, "\"col2im\" not implemented for '", cd, "'");
    } else {
      const T* cp = static_cast<const T*>(cols.data_ptr());
      T* xp = static_cast<T*>(x.data_ptr());
      parallel_for(0, n * c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(kk * L, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) col2im_plane(cp + i * kk * L, xp + i * plane, g);
      });
    }
  });
  return x.to(self.dtype());
}

Tensor convolution(const Tensor& input_in, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  int64_t ns = weight.dim() - 2;
  EMBER_CHECK(ns >= 1 && ns <= 3, "convolution: weight must have 3 to 5 dims, got ", weight.sizes());
  const char* name = ns == 1 ? "conv1d" : ns == 2 ? "conv2d" : "conv3d";
  bool batched = input_in.dim() == ns + 2;
  EMBER_CHECK(batched || input_in.dim() == ns + 1, "Expected ", ns + 1, "D (unbatched) or ", ns + 2, "D (batched) input to ",
              name, ", but got input of size: ", input_in.sizes());
  EMBER_CHECK_KIND(is_floating(input_in.dtype()), NotImplemented, "\"", name, "\" not implemented for '", input_in.dtype(), "'");
  EMBER_CHECK(input_in.dtype() == weight.dtype(), "Input type (", input_in.dtype(), ") and weight type (",
              weight.dtype(), ") should be the same");
  EMBER_CHECK(!bias.defined() || bias.dtype() == input_in.dtype(), "Input type (", input_in.dtype(), ") and bias type (",
              bias.dtype(), ") should be the same");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  Tensor input = batched ? input_in : input_in.unsqueeze(0);
  DimVector s = expand_param(stride, ns, "stride", 1), p = expand_param(padding, ns, "padding", 0),
            d = expand_param(dilation, ns, "dilation", 1), op = expand_param(output_padding, ns, "output_padding", 0);
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(s[i] > 0, "non-positive stride is not supported");
    EMBER_CHECK(p[i] >= 0, "negative padding is not supported");
    EMBER_CHECK(d[i] > 0, "dilation should be greater than zero");
  }
  int64_t n = input.sizes()[0], cin = input.sizes()[1];
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(ns)));
  int64_t kk = prod(ksz);
  Tensor out;
  if (!transposed) {
    int64_t cout = weight.sizes()[0];
    EMBER_CHECK(cout % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ", groups,
                " at dimension 0, but got weight of size ", weight.sizes(), " instead");
    EMBER_CHECK(cin == weight.sizes()[1] * groups, "Given groups=", groups, ", weight of size ", weight.sizes(),
                ", expected input", input_in.sizes(), " to have ", weight.sizes()[1] * groups,
                " channels, but got ", cin, " channels instead");
    DimVector outS;
    for (int64_t i = 0; i < ns; i++) {
      int64_t padded = geometry_int64(__int128(input.sizes()[2 + i]) + 2 * __int128(p[i]), name),
              eff = geometry_int64(__int128(d[i]) * (ksz[i] - 1) + 1, name);
      EMBER_CHECK(padded >= eff, "Calculated padded input size per channel: (", padded, "). Kernel size: (", eff,
                  "). Kernel size can't be greater than actual input size");
      outS.push_back(conv_out_size(input.sizes()[2 + i], ksz[i], d[i], p[i], s[i]));
    }
    onednn::ConvGeometry geo = conv_geometry(ns, s, p, d, op, groups, false);
    if (onednn::usable(input, weight, geo)) {
      out = onednn::conv_forward(input, weight, bias, geo, outS);
      return batched ? out : out.squeeze(IntArrayRef({int64_t(0)}));
    }
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
    for (int64_t v : outS) shape.push_back(v);
    out = out.reshape(shape);
  } else {
    EMBER_CHECK(weight.sizes()[0] % groups == 0, "Given groups=", groups, ", expected weight to be divisible by ",
                groups, " at dimension 0, but got weight of size ", weight.sizes(), " instead");
    EMBER_CHECK(weight.sizes()[0] == cin, "Given transposed=1, weight of size ", weight.sizes(), ", expected input",
                input_in.sizes(), " to have ", weight.sizes()[0], " channels, but got ", cin, " channels instead");
    int64_t cout = weight.sizes()[1] * groups;
    DimVector outS;
    for (int64_t i = 0; i < ns; i++) {
      EMBER_CHECK(op[i] < s[i] || op[i] < d[i], "output padding must be smaller than either stride or dilation, but got "
                  "output_padding=", op.ref(), ", stride=", s.ref(), ", dilation=", d.ref());
      int64_t o = geometry_int64(__int128(input.sizes()[2 + i] - 1) * s[i] - 2 * __int128(p[i]) +
                                     __int128(d[i]) * (ksz[i] - 1) + op[i] + 1, name);
      EMBER_CHECK(o > 0, "Given input size per channel: ", IntArrayRef(input.sizes().data() + 2, size_t(ns)),
                  ". Calculated output size per channel: ", o, ". Output size is too small");
      outS.push_back(o);
    }
    onednn::ConvGeometry geo = conv_geometry(ns, s, p, d, op, groups, true);
    if (onednn::usable(input, weight, geo)) {
      out = onednn::conv_forward(input, weight, bias, geo, outS);
      return batched ? out : out.squeeze(IntArrayRef({int64_t(0)}));
    }
    int64_t L = prod(IntArrayRef(input.sizes().data() + 2, size_t(ns)));
    Tensor x = input.reshape({n, groups, cin / groups, L});
    Tensor w = weight.reshape({groups, cin / groups, cout / groups * kk});
    Tensor cols = ember::matmul(w.transpose(1, 2), x).reshape({n, cout * kk, L});  // [N, Cout*K, L]
    out = ember::col2im(cols, outS, ksz, d, p, s);
  }
  if (bias.defined()) {
    DimVector bshape(static_cast<size_t>(ns + 2), 1);
    bshape[1] = bias.numel();
    out = ember::add(out, bias.reshape(bshape));
  }
  return batched ? out : out.squeeze(IntArrayRef({int64_t(0)}));
}

}  // namespace ember::native

namespace ember {

onednn::ConvGeometry conv_geometry(int64_t ns, IntArrayRef s, IntArrayRef p, IntArrayRef d, IntArrayRef op,
                                   int64_t groups, bool transposed) {
  onednn::ConvGeometry g{ns, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, groups, transposed};
  for (int64_t i = 0; i < ns; i++) {
    g.s[i] = s[i];
    g.p[i] = p[i];
    g.d[i] = d[i];
    g.op[i] = op[i];
  }
  return g;
}

namespace autograd {

// oneDNN when the backward need not be differentiable; otherwise im2col + matmul written with
// differentiable ops (the adjoint of the composite forward), so double backward works.
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
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(ns)));
  onednn::ConvGeometry geo = conv_geometry(ns, s, p, d, op, groups, transposed);
  Tensor gi, gw, gb;
  if (!grad_enabled() && onednn::usable(input, weight, geo) && grad.numel()) {
    std::tie(gi, gw, gb) = onednn::conv_backward(grad, input, weight, bias.defined(), geo, mask);
  } else {
    int64_t n = input.sizes()[0], cin = input.sizes()[1], kk = prod(ksz), G = groups;
    DimVector in_sp(IntArrayRef(input.sizes().data() + 2, size_t(ns)));
    if (!transposed) {
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
      Tensor gcols = ember::im2col(grad, ksz, d, p, s).reshape({n, G, cout / G * kk, -1});
      if (mask[0]) {
        Tensor w = weight.reshape({G, cin / G, cout / G * kk});
        gi = ember::matmul(w, gcols).reshape(input.sizes());
      }
      if (mask[1]) {
        Tensor xg = input.reshape({n, G, cin / G, -1});
        gw = ember::sum(ember::matmul(xg, gcols.transpose(2, 3)), IntArrayRef({int64_t(0)}), false).reshape(weight.sizes());
      }
    }
    if (mask[2] && bias.defined()) {
      std::vector<int64_t> red = {0};
      for (int64_t i = 2; i < grad.dim(); i++) red.push_back(i);
      gb = ember::sum(grad, IntArrayRef(red), false);
    }
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

#define EMBER_CONV(N)                                                                                              \
  Tensor conv##N##d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,             \
                    IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                   \
    EMBER_CHECK(weight.dim() == N + 2, "conv" #N "d: weight must be ", N + 2, "-D, got ", weight.sizes());         \
    return unbatched_call(input, N, [&](const Tensor& x) {                                                         \
      return ember::convolution(x, weight, bias, stride, padding, dilation, false, {}, groups);                    \
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
      return ember::convolution(x, weight, bias, stride, padding, dilation, true, output_padding, groups);         \
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
  if (padding == "valid") return ember::convolution(input, weight, bias, stride, {0}, dilation, false, {}, groups);
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
  return ember::convolution(x, weight, bias, stride, sym, dilation, false, {}, groups);
}

EMBER_CONV(1)
EMBER_CONV(2)
EMBER_CONV(3)
#undef EMBER_CONV

// ---------------------------------------------------------------- pooling
namespace {
// Pooling parameters are limited to int32, as PyTorch's kernels are: with them, the output size
// arithmetic below cannot overflow int64.
void check_pool_params(const char* op, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d) {
  for (IntArrayRef v : {k, s, p, d})
    for (int64_t x : v)
      EMBER_CHECK(x >= INT32_MIN && x <= INT32_MAX, op, ": value cannot be converted to type int without overflow "
                  "(kernel_size=", k, ", stride=", s, ", padding=", p, ", dilation=", d, ")");
}

// The kernel offsets kk in [window_begin, window_end) are those with base + kk * dil in [0, in).
inline int64_t window_begin(int64_t base, int64_t dil) { return base >= 0 ? 0 : (-base + dil - 1) / dil; }
inline int64_t window_end(int64_t base, int64_t dil, int64_t in, int64_t k) {
  return base >= in ? 0 : std::min(k, (in - 1 - base) / dil + 1);
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
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  EMBER_CHECK_KIND(is_floating(cd), NotImplemented, "\"max_pool_with_indices_backward\" not implemented for '",
                   self.dtype(), "'");
  Tensor g = grad_output.to(cd).contiguous(), idx = indices.contiguous();
  Tensor gi = ember::zeros(self.sizes(), TensorOptions(cd));
  int64_t planes = self.sizes()[0] * self.sizes()[1];
  if (planes == 0 || g.numel() == 0) return gi.to(self.dtype());
  int64_t in_plane = self.numel() / planes, out_plane = g.numel() / planes;
  std::atomic<bool> bad{false};
  EMBER_DISPATCH_ALL(cd, "max_pool_with_indices_backward", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      const T* gp = static_cast<const T*>(g.data_ptr());
      const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
      T* op = static_cast<T*>(gi.data_ptr());
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(out_plane, 1)), [&](int64_t b, int64_t e) {
        for (int64_t pl = b; pl < e; pl++) {
          const T* gq = gp + pl * out_plane;
          const int64_t* iq = ip + pl * out_plane;
          T* oq = op + pl * in_plane;
          for (int64_t j = 0; j < out_plane; j++) {
            int64_t k = iq[j];
            if (k < 0 || k >= in_plane) {
              bad.store(true, std::memory_order_relaxed);
              continue;
            }
            oq[k] += gq[j];
          }
        }
      });
    }
  });
  EMBER_CHECK_KIND(!bad.load(), Index, "max_pool_with_indices_backward: an index is out of bounds for a plane of ",
                   in_plane, " elements");
  return gi.to(self.dtype());
}

std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride_in,
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
  Geometry g = make_geometry(in, out, k, d, p, s);
  int64_t planes = self.sizes()[0] * self.sizes()[1], plane = prod(in), L = prod(out);
  ScalarType cd = is_reduced_float(self.dtype()) ? kFloat : self.dtype();
  Tensor x = self.to(cd).contiguous();
  DimVector shape = {self.sizes()[0], self.sizes()[1]};
  for (int64_t v : out) shape.push_back(v);
  Tensor vals = empty_tensor(shape, cd), idx = empty_tensor(shape, kLong);
  int64_t* ip = static_cast<int64_t*>(idx.data_ptr());
  EMBER_DISPATCH_ALL(cd, "max_pool", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>) {
      EMBER_FAIL(NotImplemented, "\"max_pool\" not implemented for '", cd, "'");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* vp = static_cast<T*>(vals.data_ptr());
      // Output rows are built in chunks of 64 by sweeping each window offset (kd, kh, kw) across the
      // chunk: the outputs are independent, so there is no dependency chain and no unpredictable
      // branch (the select is branch-free); each offset's valid output range is clipped once. The
      // offsets are visited in a window's scan order, so the first maximum and the first NaN win.
      constexpr int64_t kChunk = 64;
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L * prod(k), 1)), [&](int64_t b, int64_t e) {
        T best[kChunk];
        int64_t bi[kChunk];
        for (int64_t pl = b; pl < e; pl++) {
          const T* src = xp + pl * plane;
          for (int64_t od = 0; od < g.out[0]; od++)
            for (int64_t oh = 0; oh < g.out[1]; oh++)
              for (int64_t c0 = 0; c0 < g.out[2]; c0 += kChunk) {
                const int64_t c1 = std::min(g.out[2], c0 + kChunk);
                for (int64_t j = 0; j < c1 - c0; j++) best[j] = T(0), bi[j] = -1;
                // only the kernel offsets that land in the input are visited: a window far larger
                // than the input (kernel 2**31 with padding) costs what the input holds, not what it spans
                const int64_t bd = od * g.s[0] - g.p[0], bh = oh * g.s[1] - g.p[1];
                const int64_t kd1 = window_end(bd, g.d[0], g.in[0], g.k[0]);
                const int64_t kh1 = window_end(bh, g.d[1], g.in[1], g.k[1]);
                const int64_t kw0 = window_begin((c1 - 1) * g.s[2] - g.p[2], g.d[2]);
                const int64_t kw1 = window_end(c0 * g.s[2] - g.p[2], g.d[2], g.in[2], g.k[2]);
                for (int64_t kd = window_begin(bd, g.d[0]); kd < kd1; kd++) {
                  const int64_t id = bd + kd * g.d[0];
                  for (int64_t kh = window_begin(bh, g.d[1]); kh < kh1; kh++) {
                    const int64_t ih = bh + kh * g.d[1];
                    const int64_t row = (id * g.in[1] + ih) * g.in[2];
                    const T* srow = src + row;
                    for (int64_t kw = kw0; kw < kw1; kw++) {
                      const int64_t off = kw * g.d[2] - g.p[2];  // iw = ow * s + off must lie in [0, in)
                      const int64_t lo = std::max(c0, off >= 0 ? int64_t(0) : (-off + g.s[2] - 1) / g.s[2]);
                      const int64_t hi = std::min(c1, off >= g.in[2] ? int64_t(0) : (g.in[2] - 1 - off) / g.s[2] + 1);
                      for (int64_t ow = lo; ow < hi; ow++) {
                        const int64_t iw = ow * g.s[2] + off, j = ow - c0;
                        const T v = srow[iw], cur = best[j];
                        const bool take = (bi[j] < 0) | ((cur == cur) & ((v > cur) | (v != v)));
                        best[j] = blend(take, v, cur);
                        bi[j] = blend(take, row + iw, bi[j]);
                      }
                    }
                  }
                }
                const int64_t o0 = pl * L + (od * g.out[1] + oh) * g.out[2] + c0;
                for (int64_t j = 0; j < c1 - c0; j++) vp[o0 + j] = best[j], ip[o0 + j] = bi[j];
              }
        }
      });
    }
  });
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
Tensor avg_pool_nd(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride_in, IntArrayRef padding,
                   bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  int64_t ns = int64_t(kernel_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == ns + 2, "avg_pool", ns, "d: expected a batched ", ns + 2,
              "-D input, got ", self.sizes());
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"avg_pool", ns, "d\" not implemented for '", self.dtype(), "'");
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
    div = scalar_to_tensor(double(*divisor_override));
  } else {
    // count per window: elements inside input+padding (count_include_pad) or inside the input only
    DimVector mshape = {1, 1};
    for (int64_t v : in) mshape.push_back(v);
    Tensor ones = ember::ones(mshape, TensorOptions(self.dtype()));
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
  return ember::div(sums, div).reshape(shape);
}

// Adaptive average pooling as matrix products: each spatial dim is averaged by a fixed [out, in]
// matrix whose row i averages the window [floor(i*in/out), ceil((i+1)*in/out)).
Tensor adaptive_avg_pool_nd(const Tensor& self, IntArrayRef output_size) {
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && (self.dim() == ns + 1 || self.dim() == ns + 2), "adaptive_avg_pool", ns,
              "d(): Expected ", ns + 1, "D or ", ns + 2, "D tensor, but got ", self.sizes());
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"adaptive_avg_pool", ns, "d\" not implemented for '", self.dtype(), "'");
  Tensor x = self;
  for (int64_t i = 0; i < ns; i++) {
    int64_t dim = self.dim() - ns + i;
    int64_t in = self.sizes()[dim], o = output_size[i];
    EMBER_CHECK(o >= 0, "adaptive_avg_pool: output_size must be non-negative, got ", output_size);
    EMBER_CHECK(in > 0 || o == 0, "adaptive_avg_pool", ns, "d(): Expected input to have non-zero size for non-batch "
                "dimensions, but input has sizes ", self.sizes(), " with dimension ", dim, " being empty");
    Tensor P = ember::zeros({o, in}, TensorOptions(kDouble));
    double* pp = static_cast<double*>(P.data_ptr());
    for (int64_t r = 0; r < o; r++) {
      int64_t a = (r * in) / o, b = ((r + 1) * in + o - 1) / o;
      for (int64_t j = a; j < b; j++) pp[r * in + j] = 1.0 / double(b - a);
    }
    Tensor Pt = P.to(self.dtype());
    // contract dim `dim` of x with P's columns
    x = ember::matmul(x.movedim({dim}, {-1}), Pt.t()).movedim({-1}, {dim});
  }
  return x.contiguous();
}

std::tuple<Tensor, Tensor> adaptive_max_pool_with_indices(const Tensor& self, IntArrayRef output_size) {
  int64_t ns = int64_t(output_size.size());
  EMBER_CHECK(ns >= 1 && ns <= 3 && self.dim() == ns + 2, "adaptive_max_pool", ns, "d: expected a batched ", ns + 2,
              "-D input, got ", self.sizes());
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"adaptive_max_pool", ns, "d\" not implemented for '", self.dtype(), "'");
  DimVector in(IntArrayRef(self.sizes().data() + 2, size_t(ns)));
  for (int64_t i = 0; i < ns; i++) {
    EMBER_CHECK(output_size[i] > 0, "adaptive_max_pool: output_size must be positive, got ", output_size);
    EMBER_CHECK(in[i] > 0, "adaptive_max_pool", ns, "d(): Expected input to have non-zero size for non-batch dimensions");
  }
  DimVector o3(3, 1), i3(3, 1);
  for (int64_t i = 0; i < ns; i++) { o3[3 - ns + i] = output_size[i]; i3[3 - ns + i] = in[i]; }
  int64_t planes = self.sizes()[0] * self.sizes()[1], plane = prod(in), L = prod(output_size);
  Tensor x = self.to(is_reduced_float(self.dtype()) ? kFloat : self.dtype()).contiguous();
  DimVector shape = {self.sizes()[0], self.sizes()[1]};
  for (int64_t v : output_size) shape.push_back(v);
  Tensor vals = empty_tensor(shape, x.dtype()), idx = empty_tensor(shape, kLong);
  int64_t* ip = static_cast<int64_t*>(idx.data_ptr());
  EMBER_DISPATCH_ALL(x.dtype(), "adaptive_max_pool", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_floating_point_v<T>) {
      EMBER_FAIL(NotImplemented, "\"adaptive_max_pool\" not implemented for '", x.dtype(), "'");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* vp = static_cast<T*>(vals.data_ptr());
      auto lo = [](int64_t r, int64_t in, int64_t o) { return (r * in) / o; };
      auto hi = [](int64_t r, int64_t in, int64_t o) { return ((r + 1) * in + o - 1) / o; };
      parallel_for(0, planes, 1, [&](int64_t b, int64_t e) {
        for (int64_t pl = b; pl < e; pl++) {
          const T* src = xp + pl * plane;
          for (int64_t a = 0; a < o3[0]; a++)
            for (int64_t bb = 0; bb < o3[1]; bb++)
              for (int64_t c = 0; c < o3[2]; c++) {
                T best = 0;
                int64_t bi = -1;
                for (int64_t i0 = lo(a, i3[0], o3[0]); i0 < hi(a, i3[0], o3[0]); i0++)
                  for (int64_t i1 = lo(bb, i3[1], o3[1]); i1 < hi(bb, i3[1], o3[1]); i1++)
                    for (int64_t i2 = lo(c, i3[2], o3[2]); i2 < hi(c, i3[2], o3[2]); i2++) {
                      int64_t pos = (i0 * i3[1] + i1) * i3[2] + i2;
                      T v = src[pos];
                      if (bi < 0 || v > best || (v != v && best == best)) { best = v; bi = pos; }
                    }
                int64_t o = pl * L + (a * o3[1] + bb) * o3[2] + c;
                vp[o] = best;
                ip[o] = bi;
              }
        }
      });
    }
  });
  return {vals.to(self.dtype()), idx};
}

// ---------------------------------------------------------------- padding
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  EMBER_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  int64_t np = int64_t(pad.size()) / 2;
  EMBER_CHECK(np <= self.dim(), "Padding length should be less than or equal to two times the input dimension but got "
              "padding length ", pad.size(), " and input of dimension ", self.dim());
  // the output's size, checked before any part is built: each dim is n + lo + hi
  DimVector out_shape(self.sizes());
  for (int64_t i = 0; i < np; i++) {
    int64_t dim = self.dim() - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1], n = self.sizes()[dim];
    __int128 o = __int128(n) + lo + hi;
    if (o < 0) {  // constant mode: narrow() below raises PyTorch's error
      EMBER_CHECK(mode == "constant", "The input size ", n, ", plus negative padding ", lo, " and ", hi,
                  " resulted in a negative output size, which is invalid. Check dimension ", dim, " of your input.");
      break;
    }
    EMBER_CHECK(o <= INT64_MAX, "pad: the output size at dimension ", dim, " (", n, " + ", lo, " + ", hi,
                ") does not fit in int64");
    out_shape[dim] = int64_t(o);
    if (i == np - 1) check_output_size(out_shape, self.element_size(), "pad");
  }
  Tensor x = self;
  if (mode == "constant") {
    double v = value.value_or(0.0);
    for (int64_t i = 0; i < np; i++) {
      int64_t dim = self.dim() - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1];
      // -lo and size + lo in 128 bits: lo may be -2**63
      if (lo < 0) {
        EMBER_CHECK(__int128(x.sizes()[dim]) + lo >= 0, "narrow(): length must be non-negative.");
        x = x.narrow(dim, -lo, x.sizes()[dim] + lo), lo = 0;  // lo >= -size > -2**63: -lo fits
      }
      if (hi < 0) {
        EMBER_CHECK(__int128(x.sizes()[dim]) + hi >= 0, "narrow(): length must be non-negative.");
        x = x.narrow(dim, 0, x.sizes()[dim] + hi), hi = 0;
      }
      std::vector<Tensor> parts;
      DimVector shape(x.sizes());
      if (lo > 0) { shape[dim] = lo; parts.push_back(ember::full(shape, v, TensorOptions(x.dtype()))); }
      parts.push_back(x);
      if (hi > 0) { shape[dim] = hi; parts.push_back(ember::full(shape, v, TensorOptions(x.dtype()))); }
      if (parts.size() > 1) x = ember::cat(parts, dim);
    }
    return x.is_same(self) ? self.clone() : x;
  }
  EMBER_CHECK(!value || *value == 0.0, "Padding mode \"", mode, "\" doesn't take in value argument");
  bool reflect = mode == "reflect", replicate = mode == "replicate", circular = mode == "circular";
  EMBER_CHECK_KIND(reflect || replicate || circular, NotImplemented, "Unrecognised padding mode ", mode);
  EMBER_CHECK(np <= 3, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  EMBER_CHECK(self.dim() >= np + 1, mode, " padding of ", np, " dims expects a ", np + 1, "D or ", np + 2,
              "D input, got ", self.dim(), "D");
  for (int64_t i = 0; i < np; i++) {
    int64_t dim = self.dim() - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1], n = x.sizes()[dim];
    if (reflect)
      EMBER_CHECK(lo < n && hi < n, "Argument #4: Padding size should be less than the corresponding input dimension, "
                  "but got: padding (", lo, ", ", hi, ") at dimension ", dim, " of input ", self.sizes());
    if (circular)
      EMBER_CHECK(lo <= n && hi <= n, "Padding value causes wrapping around more than once.");
    std::vector<int64_t> idx;
    for (int64_t j = -lo; j < n + hi; j++) {
      int64_t src;
      if (replicate) src = std::min(std::max<int64_t>(j, 0), n - 1);
      else if (circular) src = ((j % n) + n) % n;
      else src = j < 0 ? -j : (j >= n ? 2 * (n - 1) - j : j);
      idx.push_back(src);
    }
    Tensor it = empty_tensor({int64_t(idx.size())}, kLong);
    std::copy(idx.begin(), idx.end(), static_cast<int64_t*>(it.data_ptr()));
    x = ember::index_select(x, dim, it);
  }
  return x;
}

}  // namespace ember::native
