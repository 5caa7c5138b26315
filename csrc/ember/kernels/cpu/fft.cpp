// The CPU's Fourier transforms: pocketfft (the FFT NumPy, SciPy and PyTorch's CPU build use), on
// strided data directly. Its plans are cached (a few recent lengths), so repeated transforms of
// one size don't replan.
#define POCKETFFT_NO_MULTITHREADING
#define POCKETFFT_CACHE_SIZE 16
#include "pocketfft_hdronly.h"

#include "ember/kernels/fft.h"

namespace ember::cpu {
namespace {

pocketfft::shape_t shape_of(const Tensor& t) { return pocketfft::shape_t(t.sizes().begin(), t.sizes().end()); }
pocketfft::stride_t byte_strides(const Tensor& t) {
  pocketfft::stride_t s;
  for (int64_t st : t.strides()) s.push_back(ptrdiff_t(st * t.element_size()));
  return s;
}
pocketfft::shape_t axes_of(IntArrayRef dims) { return pocketfft::shape_t(dims.begin(), dims.end()); }

// pocketfft reads a zero-length dim's stride too: nothing to do for an empty tensor
bool empty(const Tensor& a, const Tensor& b) { return a.numel() == 0 || b.numel() == 0; }

void c2c(const Tensor& out, const Tensor& in, IntArrayRef dims, bool forward, double scale) {
  if (empty(out, in)) return;
  if (in.dtype() == kComplexFloat) {
    pocketfft::c2c(shape_of(in), byte_strides(in), byte_strides(out), axes_of(dims), forward,
                   static_cast<const std::complex<float>*>(in.data_ptr()), static_cast<std::complex<float>*>(out.data_ptr()),
                   float(scale), 1);
  } else {
    pocketfft::c2c(shape_of(in), byte_strides(in), byte_strides(out), axes_of(dims), forward,
                   static_cast<const std::complex<double>*>(in.data_ptr()),
                   static_cast<std::complex<double>*>(out.data_ptr()), scale, 1);
  }
}

void r2c(const Tensor& out, const Tensor& in, IntArrayRef dims, double scale) {
  if (empty(out, in)) return;
  if (in.dtype() == kFloat) {
    pocketfft::r2c(shape_of(in), byte_strides(in), byte_strides(out), axes_of(dims), true,
                   static_cast<const float*>(in.data_ptr()), static_cast<std::complex<float>*>(out.data_ptr()),
                   float(scale), 1);
  } else {
    pocketfft::r2c(shape_of(in), byte_strides(in), byte_strides(out), axes_of(dims), true,
                   static_cast<const double*>(in.data_ptr()), static_cast<std::complex<double>*>(out.data_ptr()), scale, 1);
  }
}

void c2r(const Tensor& out, const Tensor& in, IntArrayRef dims, double scale) {
  if (empty(out, in)) return;
  if (out.dtype() == kFloat) {
    pocketfft::c2r(shape_of(out), byte_strides(in), byte_strides(out), axes_of(dims), false,
                   static_cast<const std::complex<float>*>(in.data_ptr()), static_cast<float*>(out.data_ptr()),
                   float(scale), 1);
  } else {
    pocketfft::c2r(shape_of(out), byte_strides(in), byte_strides(out), axes_of(dims), false,
                   static_cast<const std::complex<double>*>(in.data_ptr()), static_cast<double*>(out.data_ptr()), scale, 1);
  }
}

}  // namespace
}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(fft_c2c_stub, CPU, &ember::cpu::c2c);
EMBER_REGISTER_KERNEL(fft_r2c_stub, CPU, &ember::cpu::r2c);
EMBER_REGISTER_KERNEL(fft_c2r_stub, CPU, &ember::cpu::c2r);
