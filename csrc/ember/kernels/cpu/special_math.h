// Scalar special functions behind ember.special and the gamma/Bessel ops (lgamma, digamma,
// polygamma, igamma, i0, ...). Out of line and in double: the kernels call them per element, and
// Boost.Math's templates stay in one translation unit (special_math.cpp) instead of every ISA build.
// Values at poles, infinities and outside the domain follow PyTorch's CPU kernels.
#pragma once
#include <cstdint>

namespace ember::special_math {

double lgamma(double x);
double digamma(double x);
double trigamma(double x);
double polygamma(int64_t n, double x);
double zeta(double x, double q);  // Hurwitz zeta(x, q) = sum_k (k + q)^-x
double igamma(double a, double x);   // regularized lower incomplete gamma P(a, x)
double igammac(double a, double x);  // regularized upper incomplete gamma Q(a, x)

double i0(double x);
double i0e(double x);
double i1(double x);
double i1e(double x);
double k0(double x);
double k1(double x);
double k0e(double x);
double k1e(double x);
double j0(double x);
double j1(double x);
double y0(double x);
double y1(double x);
double spherical_j0(double x);
double airy_ai(double x);

double erfcx(double x);
double ndtri(double p);
double log_ndtr(double x);
double entr(double x);
double sinc(double x);
double xlogy(double x, double y);
double xlog1py(double x, double y);

// Orthogonal polynomials of integer degree n (n < 0 gives 0), as torch.special evaluates them.
double chebyshev_t(double x, int64_t n);
double chebyshev_u(double x, int64_t n);
double chebyshev_v(double x, int64_t n);
double chebyshev_w(double x, int64_t n);
double shifted_chebyshev_t(double x, int64_t n);
double shifted_chebyshev_u(double x, int64_t n);
double shifted_chebyshev_v(double x, int64_t n);
double shifted_chebyshev_w(double x, int64_t n);
double hermite_h(double x, int64_t n);
double hermite_he(double x, int64_t n);
double laguerre_l(double x, int64_t n);
double legendre_p(double x, int64_t n);

}  // namespace ember::special_math
