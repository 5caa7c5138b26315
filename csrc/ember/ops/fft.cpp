// The three FFT primitives under ember.fft (python/ember/fft.py), as PyTorch's: complex-to-complex,
// real-to-complex (onesided or full) and complex-to-real, over a list of dims, with a normalization
// (0: none, 1: 1/sqrt(n), 2: 1/n for n the signal's size over those dims). Gradients are the
// adjoint transforms; the Hermitian ones account for the bins the onesided half stands for twice.
#include <cmath>

#include "ember/autograd/formulas.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/kernels/fft.h"

EMBER_DEFINE_STUB(fft_c2c_stub)
EMBER_DEFINE_STUB(fft_r2c_stub)
EMBER_DEFINE_STUB(fft_c2r_stub)

namespace ember {

namespace {
DimVector checked_dims(const Tensor& t, IntArrayRef dim, const char* op) {
  DimVector dims;
  for (int64_t d : dim) {
    int64_t w = wrap_dim(d, t.dim());
    for (int64_t e : dims) EMBER_CHECK(e != w, op, ": FFT dims must be unique");
    dims.push_back(w);
  }
  EMBER_CHECK(!dims.empty() || t.dim() == 0, op, ": expects at least one dim to transform");
  return dims;
}

double norm_scale(int64_t normalization, IntArrayRef sizes, IntArrayRef dims) {
  EMBER_CHECK(normalization >= 0 && normalization <= 2, "Invalid normalization mode: ", normalization);
  if (normalization == 0) return 1.0;
  double n = 1;
  for (int64_t d : dims) n *= double(sizes[d]);
  return normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
}
}  // namespace

namespace native {

Tensor _fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  EMBER_CHECK(is_complex(self.dtype()), "_fft_c2c expects a complex input tensor, but got ", self.dtype());
  DimVector dims = checked_dims(self, dim, "_fft_c2c");
  Tensor out = ember::empty(self.sizes(), TensorOptions(self.dtype()));
  if (dims.empty()) return out.copy_(self);
  fft_c2c_stub(self.device(), "_fft_c2c")(out, self, dims, forward, norm_scale(normalization, self.sizes(), dims));
  return out;
}

Tensor _fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble,
              "_fft_r2c expects a float or double input tensor, but got ", self.dtype());
  DimVector dims = checked_dims(self, dim, "_fft_r2c");
  if (!onesided || dims.empty())  // the full spectrum: the complex transform of the real signal
    return native::_fft_c2c(self.to(to_complex_dtype(self.dtype())), dims, normalization, true);
  DimVector out_sizes(self.sizes());
  out_sizes[dims.back()] = out_sizes[dims.back()] / 2 + 1;
  Tensor out = ember::empty(out_sizes, TensorOptions(to_complex_dtype(self.dtype())));
  fft_r2c_stub(self.device(), "_fft_r2c")(out, self, dims, norm_scale(normalization, self.sizes(), dims));
  return out;
}

Tensor _fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  EMBER_CHECK(is_complex(self.dtype()), "_fft_c2r expects a complex input tensor, but got ", self.dtype());
  EMBER_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  DimVector dims = checked_dims(self, dim, "_fft_c2r");
  EMBER_CHECK(!dims.empty(), "_fft_c2r: expects at least one dim to transform");
  EMBER_CHECK(self.sizes()[dims.back()] >= last_dim_size / 2 + 1, "_fft_c2r: the input's last transformed dim has ",
              self.sizes()[dims.back()], " entries, fewer than the ", last_dim_size / 2 + 1, " an output of ",
              last_dim_size, " needs");
  DimVector out_sizes(self.sizes());
  out_sizes[dims.back()] = last_dim_size;
  Tensor out = ember::empty(out_sizes, TensorOptions(to_real_dtype(self.dtype())));
  // pocketfft's c2r overwrites nothing of its input, but reads it with the output's shape: a copy
  // narrowed to n/2 + 1 entries keeps it from reading past a longer input's end
  Tensor in = self.narrow(dims.back(), 0, last_dim_size / 2 + 1);
  fft_c2r_stub(self.device(), "_fft_c2r")(out, in, dims, norm_scale(normalization, out_sizes, dims));
  return out;
}

}  // namespace native

namespace autograd {

// y = the first n/2 + 1 bins of the DFT of real x: the gradient is the real part of the adjoint
// (inverse, unnormalized the same way) transform of the gradient zero-padded to the full n bins
Tensor fft_r2c_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization, bool onesided,
                        IntArrayRef self_sizes) {
  Tensor g = grad;
  if (onesided && !dim.empty()) {
    const int64_t last = wrap_dim(dim.back(), int64_t(self_sizes.size()));
    const int64_t n = self_sizes[last], have = grad.sizes()[last];
    if (n > have) {
      DimVector pad_sizes(grad.sizes());
      pad_sizes[last] = n - have;
      g = ember::cat({grad, ember::zeros(pad_sizes, TensorOptions(grad.dtype()))}, last);
    }
  }
  return real_part(ember::_fft_c2c(g, dim, normalization, false));
}

// y = the real inverse transform of the Hermitian signal stored as its first n/2 + 1 bins: the
// gradient is the onesided forward transform, doubled for the bins that stand for a conjugate pair
Tensor fft_c2r_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization) {
  Tensor gi = ember::_fft_r2c(grad, dim, normalization, true);
  const int64_t last = wrap_dim(dim.back(), grad.dim());
  const int64_t doubled = grad.sizes()[last] - gi.sizes()[last];
  if (doubled <= 0) return gi;
  Tensor w = ember::ones({gi.sizes()[last]}, TensorOptions(to_real_dtype(gi.dtype())));
  w.narrow(0, 1, doubled).fill_(Scalar(2.0));
  DimVector shape(gi.dim(), 1);
  shape[last] = gi.sizes()[last];
  return gi * w.view(shape);
}

}  // namespace autograd
}  // namespace ember
