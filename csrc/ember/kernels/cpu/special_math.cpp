// Scalar special functions (see special_math.h). Boost.Math supplies the hard cores (digamma,
// incomplete gamma, Bessel functions, Airy, inverse erfc) under a policy that returns NaN/inf
// instead of throwing; the code here adds PyTorch's values at poles and infinities and the exponentially
// scaled forms (asymptotic series where the unscaled value overflows). Hurwitz zeta, the orthogonal
// polynomials and the elementary ones are kernels/special_functions.h's, shared with the GPU.
#include "ember/kernels/cpu/special_math.h"

#include "ember/kernels/special_functions.h"

#include <cmath>
#include <limits>

#include <boost/math/special_functions/airy.hpp>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/special_functions/trigamma.hpp>

namespace ember::special_math {
namespace {
namespace bp = boost::math::policies;
using Quiet = bp::policy<bp::domain_error<bp::ignore_error>, bp::pole_error<bp::ignore_error>,
                         bp::overflow_error<bp::ignore_error>, bp::underflow_error<bp::ignore_error>,
                         bp::denorm_error<bp::ignore_error>, bp::evaluation_error<bp::ignore_error>,
                         bp::rounding_error<bp::ignore_error>, bp::indeterminate_result_error<bp::ignore_error>>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;
constexpr double kEps = 1.1102230246251565e-16;  // 2^-53

constexpr double kAsymptotic = special_fn::kBesselAsymptotic;
using special_fn::bessel_asymptotic_sum;

double scaled_i(int nu, double ax) {  // e^-ax I_nu(ax), ax >= 0
  if (std::isinf(ax)) return 0.0;
  if (ax < kAsymptotic) return std::exp(-ax) * boost::math::cyl_bessel_i(nu, ax, Quiet());
  return bessel_asymptotic_sum(nu, ax, true) / std::sqrt(2 * kPi * ax);
}

double scaled_k(int nu, double x) {  // e^x K_nu(x)
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (std::isinf(x)) return 0.0;
  if (x < kAsymptotic) return std::exp(x) * boost::math::cyl_bessel_k(nu, x, Quiet());
  return bessel_asymptotic_sum(nu, x, false) * std::sqrt(kPi / (2 * x));
}


}  // namespace

double lgamma(double x) {
  int sign;
  return ::lgamma_r(x, &sign);  // lgamma() writes the global signgam: not thread-safe
}

double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::copysign(kInf, -x);  // -inf at +0, +inf at -0, as PyTorch
  if (x < 0) {
    if (x == std::trunc(x)) return kNaN;  // poles (and -inf)
    // reflection; tan of the fractional part is exact where tan(pi x) would not be
    double whole;
    double frac = std::modf(x, &whole);
    return digamma(1 - x) - kPi / std::tan(kPi * frac);
  }
  if (std::isinf(x)) return kInf;
  return boost::math::digamma(x, Quiet());
}

double trigamma(double x) {
  if (std::isnan(x)) return x;
  if (x <= 0 && x == std::trunc(x)) return kInf;
  if (std::isinf(x)) return 0.0;
  return boost::math::trigamma(x, Quiet());
}

double zeta(double x, double q) { return special_fn::zeta(x, q); }

double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  // psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)
  double sign = (n % 2) ? 1.0 : -1.0;
  return sign * std::exp(lgamma(double(n) + 1.0)) * zeta(double(n) + 1.0, x);
}

// Past a = 1e10 Boost's gamma_p/gamma_q give up (its series runs out of iterations, and the quiet policy
// returns what it had: 0.99996 for P(1e20, 1e20), which is 0.5). There Temme's uniform asymptotic
// expansion (DiDonato & Morris 1986) to its first term is exact to ~1e-10, tails included:
//   Q(a, x) = erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2 / 2) / sqrt(2 pi a) C0(eta),  P = 1 - Q,
// with lambda = x / a, eta^2 / 2 = lambda - 1 - ln(lambda) (eta of the sign of lambda - 1) and
// C0 = 1 / (lambda - 1) - 1 / eta, taken from its series near eta = 0 where the difference cancels.
constexpr double kHugeShape = 1e10;
static double log1p_minus_x(double d) {  // log1p(d) - d without the cancellation for small d
  if (std::fabs(d) > 0.5) return std::log1p(d) - d;
  double sum = 0, power = d * d;
  for (int k = 2; k < 200; k++, power *= d) {
    double term = (k % 2 ? power : -power) / k;
    sum += term;
    if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
  }
  return sum;
}
static double temme_gamma(double a, double x, bool upper) {
  const double d = (x - a) / a;  // lambda - 1
  const double eta2 = -2 * log1p_minus_x(d);
  const double eta = std::copysign(std::sqrt(std::max(eta2, 0.0)), d);
  const double c0 = std::fabs(eta) < 0.1
                        ? -1.0 / 3 + eta * (1.0 / 12 + eta * (-2.0 / 135 + eta * (1.0 / 864 + eta * (1.0 / 2835 -
                                                                                                      eta * 139.0 / 777600))))
                        : 1 / d - 1 / eta;
  const double r = std::exp(-a * eta2 / 2) / std::sqrt(2 * kPi * a) * c0;
  const double u = eta * std::sqrt(a / 2);
  return upper ? 0.5 * std::erfc(u) + r : 0.5 * std::erfc(-u) - r;
}

// The edge cases are tested in PyTorch's order, which decides a NaN's fate: igamma(NaN, inf) is 1
double igamma(double a, double x) {
  if (x < 0 || a < 0) return kNaN;
  if (a == 0) return x > 0 ? 1.0 : kNaN;
  if (x == 0) return 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1.0;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  if (a > kHugeShape) return temme_gamma(a, x, false);
  return boost::math::gamma_p(a, x, Quiet());
}

double igammac(double a, double x) {
  if (x < 0 || a < 0) return kNaN;
  if (a == 0) return x > 0 ? 0.0 : kNaN;
  if (x == 0) return 1.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0.0;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  if (a > kHugeShape) return temme_gamma(a, x, true);
  return boost::math::gamma_q(a, x, Quiet());
}

// PyTorch's i0/i1 and Bessel J/Y give NaN at +-inf; the scaled forms give 0 there.
double i0(double x) {
  if (!std::isfinite(x)) return kNaN;
  return boost::math::cyl_bessel_i(0, std::fabs(x), Quiet());
}
double i1(double x) {
  if (!std::isfinite(x)) return kNaN;
  double v = boost::math::cyl_bessel_i(1, std::fabs(x), Quiet());
  return x < 0 ? -v : v;
}
double i0e(double x) {
  if (std::isnan(x)) return x;
  return scaled_i(0, std::fabs(x));
}
double i1e(double x) {
  if (std::isnan(x)) return x;
  double v = scaled_i(1, std::fabs(x));
  return std::signbit(x) ? -v : v;
}
double k0e(double x) { return scaled_k(0, x); }
double k1e(double x) { return scaled_k(1, x); }
double k0(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  return std::isinf(x) ? 0.0 : boost::math::cyl_bessel_k(0, x, Quiet());
}
double k1(double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  return std::isinf(x) ? 0.0 : boost::math::cyl_bessel_k(1, x, Quiet());
}
double j0(double x) {
  if (!std::isfinite(x)) return kNaN;
  return boost::math::cyl_bessel_j(0, std::fabs(x), Quiet());
}
double j1(double x) {
  if (!std::isfinite(x)) return kNaN;
  double v = boost::math::cyl_bessel_j(1, std::fabs(x), Quiet());
  return std::signbit(x) ? -v : v;
}
double y0(double x) {
  if (!std::isfinite(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  return boost::math::cyl_neumann(0, x, Quiet());
}
double y1(double x) {
  if (!std::isfinite(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  return boost::math::cyl_neumann(1, x, Quiet());
}
double spherical_j0(double x) { return special_fn::spherical_j0(x); }
double airy_ai(double x) {
  if (!std::isfinite(x)) return kNaN;
  return boost::math::airy_ai(x, Quiet());
}

double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;  // e^(x^2) overflows
    return std::exp(x * x) * std::erfc(x);
  }
  if (x < 26.0) {
    // e^(x^2) with x^2 split into its rounded value and the rounding error, so no digits are lost
    double hi = x * x, lo = std::fma(x, x, -hi);
    return std::exp(hi) * std::exp(lo) * std::erfc(x);
  }
  if (std::isinf(x)) return 0.0;
  // large x: erfcx(x) ~ 1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k
  double term = 1, sum = 1, inv = 1 / (2 * x * x);
  for (int k = 1; k < 30; ++k) {
    term *= -(2 * k - 1) * inv;
    sum += term;
    if (std::fabs(term) < kEps) break;
  }
  return sum / (x * 1.7724538509055160273);
}

double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  return -1.4142135623730950488 * boost::math::erfc_inv(2 * p, Quiet());
}

double log_ndtr(double x) { return special_fn::log_ndtr(x); }
double entr(double x) { return special_fn::entr(x); }
double sinc(double x) { return special_fn::sinc(x); }
double xlogy(double x, double y) { return special_fn::xlogy(x, y); }
double xlog1py(double x, double y) { return special_fn::xlog1py(x, y); }

// ---- orthogonal polynomials (kernels/special_functions.h, shared with the GPU)
double chebyshev_t(double x, int64_t n) { return special_fn::chebyshev_t(x, n); }
double chebyshev_u(double x, int64_t n) { return special_fn::chebyshev_u(x, n); }
double chebyshev_v(double x, int64_t n) { return special_fn::chebyshev_v(x, n); }
double chebyshev_w(double x, int64_t n) { return special_fn::chebyshev_w(x, n); }
double shifted_chebyshev_t(double x, int64_t n) { return special_fn::shifted_chebyshev_t(x, n); }
double shifted_chebyshev_u(double x, int64_t n) { return special_fn::shifted_chebyshev_u(x, n); }
double shifted_chebyshev_v(double x, int64_t n) { return special_fn::shifted_chebyshev_v(x, n); }
double shifted_chebyshev_w(double x, int64_t n) { return special_fn::shifted_chebyshev_w(x, n); }
double hermite_h(double x, int64_t n) { return special_fn::hermite_h(x, n); }
double hermite_he(double x, int64_t n) { return special_fn::hermite_he(x, n); }
double laguerre_l(double x, int64_t n) { return special_fn::laguerre_l(x, n); }
double legendre_p(double x, int64_t n) { return special_fn::legendre_p(x, n); }

}  // namespace ember::special_math
