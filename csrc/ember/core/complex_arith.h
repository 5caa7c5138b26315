#pragma once
// Complex products and quotients as PyTorch computes them: the textbook product (std::complex's
// C99 Annex G version recovers infinities through a slow call per element), and Smith's scaled
// quotient (NumPy's), which avoids overflow in c^2 + d^2. Shared by the elementwise kernels and the
// complex reductions.
#include <cmath>
#include <complex>

namespace ember {

template <class C>
inline C textbook_mul(C x, C y) {
  return C(x.real() * y.real() - x.imag() * y.imag(), x.real() * y.imag() + x.imag() * y.real());
}

template <class C>
inline C smith_div(C x, C y) {
  using R = typename C::value_type;
  const R a = x.real(), b = x.imag(), c = y.real(), d = y.imag();
  const R ac = std::abs(c), ad = std::abs(d);
  if (ac >= ad) {
    if (ac == R(0) && ad == R(0)) return C(a / ac, b / ad);  // a complex infinity or NaN
    const R rat = d / c, scl = R(1) / (c + d * rat);
    return C((a + b * rat) * scl, (b - a * rat) * scl);
  }
  const R rat = c / d, scl = R(1) / (d + c * rat);
  return C((a * rat + b) * scl, (b * rat - a) * scl);
}

}  // namespace ember
