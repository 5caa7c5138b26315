// The CPU's convolution entries: im2col/col2im loops, and convolution forward/backward, which run
// on oneDNN when it can take the problem (float32, kernels/cpu/onednn/) and otherwise as
// im2col + GEMM (OpenBLAS does the FLOPs through matmul).
#include <algorithm>
#include <type_traits>

#include "ember/kernels/conv.h"
#include "ember/kernels/cpu/onednn/conv.h"
#include "ember/ops/conv.h"
#include "ember/parallel/parallel.h"

namespace ember {

namespace {

template <class T>
void im2col_plane(const T* x, T* cols, const WindowGeometry& g) {
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
void col2im_plane(const T* cols, T* x, const WindowGeometry& g) {
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

template <class T>
constexpr bool kNoWindowLoops = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>;

void im2col_cpu(const Tensor& cols, const Tensor& x, const WindowGeometry& g) {
  const int64_t planes = x.sizes()[0] * x.sizes()[1], plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t block = cols.sizes()[2] * (cols.sizes()[1] / std::max<int64_t>(x.sizes()[1], 1));  // kk * L
  EMBER_DISPATCH_ALL(x.dtype(), "im2col", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kNoWindowLoops<T>) {
      EMBER_FAIL(NotImplemented, "\"im2col\" not implemented for '", x.dtype(), "'");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* cp = static_cast<T*>(cols.data_ptr());
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(block, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) im2col_plane(xp + i * plane, cp + i * block, g);
      });
    }
  });
}

void col2im_cpu(const Tensor& x, const Tensor& cols, const WindowGeometry& g) {
  const int64_t planes = x.sizes()[0] * x.sizes()[1], plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t block = cols.sizes()[2] * (cols.sizes()[1] / std::max<int64_t>(x.sizes()[1], 1));
  EMBER_DISPATCH_ALL(x.dtype(), "col2im", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kNoWindowLoops<T>) {
      EMBER_FAIL(NotImplemented, "\"col2im\" not implemented for '", x.dtype(), "'");
    } else {
      const T* cp = static_cast<const T*>(cols.data_ptr());
      T* xp = static_cast<T*>(x.data_ptr());
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(block, 1)), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; i++) col2im_plane(cp + i * block, xp + i * plane, g);
      });
    }
  });
}

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                       IntArrayRef out_spatial) {
  if (onednn::usable(input, weight, p)) return onednn::conv_forward(input, weight, bias, p, out_spatial);
  return conv_forward_composite(input, weight, bias, p, out_spatial);
}

ConvGrads convolution_backward_cpu(const Tensor& grad, const Tensor& input, const Tensor& weight, bool has_bias,
                                   const ConvParams& p, ConvMask mask) {
  if (onednn::usable(input, weight, p) && grad.numel())
    return onednn::conv_backward(grad, input, weight, has_bias, p, mask);
  return conv_backward_composite(grad, input, weight, has_bias, p, mask);
}

}  // namespace

EMBER_REGISTER_KERNEL(im2col_stub, CPU, &im2col_cpu);
EMBER_REGISTER_KERNEL(col2im_stub, CPU, &col2im_cpu);
EMBER_REGISTER_KERNEL(convolution_stub, CPU, &convolution_cpu);
EMBER_REGISTER_KERNEL(convolution_backward_stub, CPU, &convolution_backward_cpu);

}  // namespace ember
