#pragma once
// Discrete Fourier transforms over a set of dims (the ops in ops/fft.cpp check, resize and normalize
// their arguments; a backend's entry transforms). The CPU's uses pocketfft (kernels/cpu/fft.cpp).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// out = scale * DFT of complex `in` over `dims` (forward: exp(-2 pi i jk/n)); out and in have
// the same shape and complex dtype, any strides.
EMBER_DECLARE_STUB(fft_c2c_stub, void, (const Tensor& out, const Tensor& in, IntArrayRef dims, bool forward, double scale))
// out (complex, last of `dims` n/2 + 1 long) = scale * forward DFT of real `in`: the onesided half.
EMBER_DECLARE_STUB(fft_r2c_stub, void, (const Tensor& out, const Tensor& in, IntArrayRef dims, double scale))
// out (real, last of `dims` of its own length n) = scale * backward DFT of the Hermitian signal
// whose onesided half is `in` (n/2 + 1 long on the last dim; further entries ignored).
EMBER_DECLARE_STUB(fft_c2r_stub, void, (const Tensor& out, const Tensor& in, IntArrayRef dims, double scale))
