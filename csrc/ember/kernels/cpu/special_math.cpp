// Scalar special functions (see special_math.h). Boost.Math supplies the hard cores (digamma,
// incomplete gamma, Bessel functions, Airy, inverse erfc) under a policy that returns NaN/inf
// instead of throwing; the code here adds PyTorch's values at poles and infinities, the exponentially
// scaled forms (asymptotic series where the unscaled value overflows), Hurwitz zeta and the
// orthogonal polynomials.
#include "ember/kernels/cpu/special_math.h"

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

// Past this the unscaled Bessel values overflow (or underflow) a double; the scaled forms switch to
// their large-argument expansions, which are at full precision long before it.
constexpr double kAsymptotic = 700.0;

// e^-x I_nu(x) ~ (2 pi x)^-1/2 sum_k (-1)^k a_k(nu) / x^k; e^x K_nu(x) ~ (pi / 2x)^1/2 sum_k a_k(nu) / x^k,
// a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k).
double bessel_asymptotic_sum(double nu, double x, bool alternating) {
  double term = 1, sum = 1, mu = 4 * nu * nu;
  for (int k = 1; k < 60; ++k) {
    double next = term * (mu - double(2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);
    if (alternating) next = -next;
    if (std::fabs(next) >= std::fabs(term)) break;  // the series is asymptotic: stop at its smallest term
    term = next;
    sum += term;
    if (std::fabs(term) < kEps * std::fabs(sum)) break;
  }
  return sum;
}

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

// (2k)! / B_2k for k = 1..12: the Euler-Maclaurin tail coefficients of the zeta sum
struct ZetaTail {
  double a[12];
  ZetaTail() {
    const double bernoulli[12] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                                  -3617.0 / 510, 43867.0 / 798, -174611.0 / 330, 854513.0 / 138,
                                  -236364091.0 / 2730};
    double fact = 1;
    for (int k = 1; k <= 12; ++k) {
      fact *= double(2 * k - 1) * (2 * k);
      a[k - 1] = fact / bernoulli[k - 1];
    }
  }
};
const ZetaTail kZetaTail;

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

double zeta(double x, double q) {  // a NaN falls through to the sum, as in PyTorch (zeta(NaN, 0) is inf)
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;  // (negative q)^-x is not real
  }
  // sum the first terms directly (at least 9, and until q + i > 9), then add the Euler-Maclaurin tail
  double s = std::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kEps) return s;
  }
  double w = a;
  s += b * w / (x - 1) - 0.5 * b;
  double rising = 1, k = 0;
  for (double coef : kZetaTail.a) {
    rising *= x + k;
    b /= w;
    double t = rising * b / coef;
    s += t;
    if (std::fabs(t / s) < kEps) return s;
    k += 1;
    rising *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  // psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x)
  double sign = (n % 2) ? 1.0 : -1.0;
  return sign * std::exp(lgamma(double(n) + 1.0)) * zeta(double(n) + 1.0, x);
}

// The edge cases are tested in PyTorch's order, which decides a NaN's fate: igamma(NaN, inf) is 1
double igamma(double a, double x) {
  if (x < 0 || a < 0) return kNaN;
  if (a == 0) return x > 0 ? 1.0 : kNaN;
  if (x == 0) return 0.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1.0;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
  return boost::math::gamma_p(a, x, Quiet());
}

double igammac(double a, double x) {
  if (x < 0 || a < 0) return kNaN;
  if (a == 0) return x > 0 ? 0.0 : kNaN;
  if (x == 0) return 1.0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0.0;
  if (std::isnan(a) || std::isnan(x)) return kNaN;
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
double spherical_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (std::fabs(x) < 0.5) {  // sin(x)/x loses digits near 0: its Taylor series instead
    double x2 = x * x, term = 1, sum = 1;
    for (int k = 1; k < 12; ++k) {
      term *= -x2 / double((2 * k) * (2 * k + 1));
      sum += term;
    }
    return sum;
  }
  return std::sin(x) / x;
}
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

double log_ndtr(double x) {
  double t = x * 0.70710678118654752440;
  if (x < -1) return std::log(erfcx(-t) / 2) - t * t;  // Phi(x) = erfcx(-t) e^(-t^2) / 2: no underflow
  return std::log1p(-std::erfc(t) / 2);
}

double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  return x == 0 ? 0.0 : -kInf;
}

double sinc(double x) {
  if (x == 0) return 1.0;
  double px = kPi * x;
  return std::sin(px) / px;
}

double xlogy(double x, double y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0.0;
  return x * std::log(y);
}
double xlog1py(double x, double y) {
  if (std::isnan(y)) return y;
  if (x == 0) return 0.0;
  return x * std::log1p(y);
}

// ---- orthogonal polynomials: closed forms at the interval's ends, the trigonometric form inside
// (-1, 1) for higher degrees, the three-term recurrence elsewhere. A NaN stops the recurrence early:
// once a term is NaN every later one is.
namespace {
template <class Step>
double recur(double p, double q, int64_t n, Step step) {  // p = P_0, q = P_1; returns P_n
  for (int64_t k = 1; k < n && !std::isnan(q); ++k) {
    double r = step(p, q, k);
    p = q;
    q = r;
  }
  return q;
}
}  // namespace

double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n > 6 && std::fabs(x) < 1.0) return std::cos(double(n) * std::acos(x));
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return recur(1.0, x, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? double(n + 1) : -double(n + 1);
  if (n > 8 && std::fabs(x) < 1.0) {
    double t = std::acos(x), s = std::sin(t);
    if (s != 0) return std::sin(double(n + 1) * t) / s;
    return double(n + 1) * std::cos(double(n + 1) * t) / x;
  }
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x;
  return recur(1.0, 2 * x, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) {
    if (x > 0) return 1.0;
    return n % 2 == 0 ? double(2 * n + 1) : -double(2 * n + 1);
  }
  if (n > 8 && std::fabs(x) < 1.0) {
    double t = std::acos(x);
    return std::cos((double(n) + 0.5) * t) / std::cos(t / 2);
  }
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x - 1;
  return recur(1.0, 2 * x - 1, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) {
    if (x > 0) return double(2 * n + 1);
    return n % 2 == 0 ? 1.0 : -1.0;
  }
  if (n > 8 && std::fabs(x) < 1.0) {
    double t = std::acos(x);
    return std::sin((double(n) + 0.5) * t) / std::sin(t / 2);
  }
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x + 1;
  return recur(1.0, 2 * x + 1, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

// the shifted polynomials live on [0, 1]: P*_n(x) = P_n(2x - 1)
double shifted_chebyshev_t(double x, int64_t n) { return chebyshev_t(x + x - 1, n); }
double shifted_chebyshev_u(double x, int64_t n) { return chebyshev_u(x + x - 1, n); }
double shifted_chebyshev_v(double x, int64_t n) { return chebyshev_v(x + x - 1, n); }
double shifted_chebyshev_w(double x, int64_t n) { return chebyshev_w(x + x - 1, n); }

double hermite_h(double x, int64_t n) {  // physicists': H_{k+1} = 2x H_k - 2k H_{k-1}
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x;
  return recur(1.0, 2 * x, n, [x](double p, double q, int64_t k) { return 2 * x * q - 2 * double(k) * p; });
}

double hermite_he(double x, int64_t n) {  // probabilists': He_{k+1} = x He_k - k He_{k-1}
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return recur(1.0, x, n, [x](double p, double q, int64_t k) { return x * q - double(k) * p; });
}

double laguerre_l(double x, int64_t n) {  // (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}
  if (n < 0) return 0.0;
  if (x == 0 || n == 0) return 1.0;
  if (n == 1) return 1 - x;
  return recur(1.0, 1 - x, n, [x](double p, double q, int64_t k) {
    return ((double(2 * k + 1) - x) * q - double(k) * p) / double(k + 1);
  });
}

double legendre_p(double x, int64_t n) {  // (k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return recur(1.0, x, n, [x](double p, double q, int64_t k) {
    return (double(2 * k + 1) * x * q - double(k) * p) / double(k + 1);
  });
}

}  // namespace ember::special_math
