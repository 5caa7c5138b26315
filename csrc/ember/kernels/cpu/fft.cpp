// The CPU's Fourier transforms: pocketfft (the FFT NumPy, SciPy and PyTorch's CPU build use), on
// strided data directly. Its plans are cached (a few recent lengths), so repeated transforms of
// one size don't replan.
#define POCKETFFT_NO_MULTITHREADING
#define POCKETFFT_CACHE_SIZE 16
#include "pocketfft_hdronly.h"

#include "ember/kernels/fft.h"
#include "ember/generated/ops.h"
#include "ember/parallel/parallel.h"

namespace ember::cpu {
namespace {

// Runs fn(out_part, in_part) over slices of the largest dim not transformed, across threads (each
// slice's transforms are independent), or once for small or unbatched transforms.
template <class F>
void over_batches(const Tensor& out, const Tensor& in, IntArrayRef dims, F&& fn) {
  int64_t batch_dim = -1, best = 1;
  for (int64_t d = 0; d < in.dim(); d++) {
    bool transformed = false;
    for (int64_t t : dims) transformed = transformed || t == d;
    if (!transformed && in.sizes()[d] > best) best = in.sizes()[batch_dim = d];
  }
  const int64_t work = std::max(in.numel(), out.numel());
  if (batch_dim < 0 || get_num_threads() == 1 || work < (int64_t(1) << 15)) return fn(out, in);
  // narrow() views share their base's version counter, made on first use: make it here, not in threads
  (void)out.impl()->version_counter();
  (void)in.impl()->version_counter();
  parallel_for(0, best, 1, [&](int64_t b, int64_t e) {
    fn(out.narrow(batch_dim, b, e - b), in.narrow(batch_dim, b, e - b));
  });
}

pocketfft::shape_t shape_of(const Tensor& t) { return pocketfft::shape_t(t.sizes().begin(), t.sizes().end()); }
pocketfft::stride_t byte_strides(const Tensor& t) {
  pocketfft::stride_t s;
  for (int64_t st : t.strides()) s.push_back(ptrdiff_t(st * t.element_size()));
  return s;
}
pocketfft::shape_t axes_of(IntArrayRef dims) { return pocketfft::shape_t(dims.begin(), dims.end()); }

// pocketfft reads a zero-length dim's stride too: nothing to do for an empty tensor
bool empty(const Tensor& a, const Tensor& b) { return a.numel() == 0 || b.numel() == 0; }

void c2c_part(const Tensor& out, const Tensor& in, IntArrayRef dims, bool forward, double scale) {
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

void r2c_part(const Tensor& out, const Tensor& in, IntArrayRef dims, double scale) {
  if (in.dtype() == kFloat) {
    pocketfft::r2c(shape_of(in), byte_strides(in), byte_strides(out), axes_of(dims), true,
                   static_cast<const float*>(in.data_ptr()), static_cast<std::complex<float>*>(out.data_ptr()),
                   float(scale), 1);
  } else {
    pocketfft::r2c(shape_of(in), byte_strides(in), byte_strides(out), axes_of(dims), true,
                   static_cast<const double*>(in.data_ptr()), static_cast<std::complex<double>*>(out.data_ptr()), scale, 1);
  }
}

void c2r_part(const Tensor& out, const Tensor& in, IntArrayRef dims, double scale) {
  if (out.dtype() == kFloat) {
    pocketfft::c2r(shape_of(out), byte_strides(in), byte_strides(out), axes_of(dims), false,
                   static_cast<const std::complex<float>*>(in.data_ptr()), static_cast<float*>(out.data_ptr()),
                   float(scale), 1);
  } else {
    pocketfft::c2r(shape_of(out), byte_strides(in), byte_strides(out), axes_of(dims), false,
                   static_cast<const std::complex<double>*>(in.data_ptr()), static_cast<double*>(out.data_ptr()), scale, 1);
  }
}

void c2c(const Tensor& out, const Tensor& in, IntArrayRef dims, bool forward, double scale) {
  if (empty(out, in)) return;
  over_batches(out, in, dims, [&](const Tensor& o, const Tensor& i) { c2c_part(o, i, dims, forward, scale); });
}
void r2c(const Tensor& out, const Tensor& in, IntArrayRef dims, double scale) {
  if (empty(out, in)) return;
  over_batches(out, in, dims, [&](const Tensor& o, const Tensor& i) { r2c_part(o, i, dims, scale); });
}
void c2r(const Tensor& out, const Tensor& in, IntArrayRef dims, double scale) {
  if (empty(out, in)) return;
  over_batches(out, in, dims, [&](const Tensor& o, const Tensor& i) { c2r_part(o, i, dims, scale); });
}

}  // namespace
}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(fft_c2c_stub, CPU, &ember::cpu::c2c);
EMBER_REGISTER_KERNEL(fft_r2c_stub, CPU, &ember::cpu::r2c);
EMBER_REGISTER_KERNEL(fft_c2r_stub, CPU, &ember::cpu::c2r);
