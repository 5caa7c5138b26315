#pragma once
// Scalar special functions written once for both devices: the CPU's special_math.cpp calls them out
// of line, the GPU's elementwise.cu inside its kernels (EMBER_HOST_DEVICE; this header includes
// nothing nvcc would have to chew through). Hurwitz zeta, the orthogonal polynomials, spherical j0,
// log_ndtr, sinc, entr, xlogy; and for the GPU, which has no Boost.Math, digamma/trigamma/polygamma
// by recurrence and asymptotic series (the CPU keeps Boost's; tests/cpp compares the two).
// Values at poles, infinities and outside the domain follow PyTorch's CPU kernels.
#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/core/macros.h"

namespace ember::special_math {
double erfcx(double x);  // the CPU's (special_math.cpp); the GPU calls CUDA's
}  // namespace ember::special_math

namespace ember::special_fn {

constexpr double kPi = 3.14159265358979323846;
constexpr double kEps = 1.1102230246251565e-16;  // 2^-53

EMBER_HOST_DEVICE inline double nan_value() { return std::numeric_limits<double>::quiet_NaN(); }
EMBER_HOST_DEVICE inline double inf_value() { return std::numeric_limits<double>::infinity(); }
EMBER_HOST_DEVICE inline bool is_nan(double x) { return x != x; }
EMBER_HOST_DEVICE inline bool is_inf(double x) { return x == inf_value() || x == -inf_value(); }

EMBER_HOST_DEVICE inline double erfcx(double x) {
#ifdef __CUDA_ARCH__
  return ::erfcx(x);
#else
  return special_math::erfcx(x);
#endif
}

EMBER_HOST_DEVICE inline double log_gamma(double x) {
#ifdef __CUDA_ARCH__
  return ::lgamma(x);
#else
  int sign;
  return ::lgamma_r(x, &sign);  // lgamma() writes the global signgam: not thread-safe
#endif
}

// e^-x I_nu(x) ~ (2 pi x)^-1/2 sum_k (-1)^k a_k(nu) / x^k; e^x K_nu(x) ~ (pi / 2x)^1/2 sum_k a_k(nu) / x^k,
// a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k). Past kBesselAsymptotic the unscaled values
// overflow (or underflow) a double; the series are at full precision long before it.
constexpr double kBesselAsymptotic = 700.0;
EMBER_HOST_DEVICE inline double bessel_asymptotic_sum(double nu, double x, bool alternating) {
  double term = 1, sum = 1;
  const double mu = 4 * nu * nu;
  for (int k = 1; k < 60; ++k) {
    double next = term * (mu - double(2 * k - 1) * (2 * k - 1)) / (8.0 * k * x);
    if (alternating) next = -next;
    if (::fabs(next) >= ::fabs(term)) break;  // the series is asymptotic: stop at its smallest term
    term = next;
    sum += term;
    if (::fabs(term) < kEps * ::fabs(sum)) break;
  }
  return sum;
}

// Hurwitz zeta(x, q) = sum_k (k + q)^-x: the first terms directly (at least 9, and until q + i > 9),
// then the Euler-Maclaurin tail with the coefficients (2k)! / B_2k. A NaN falls through to the sum,
// as in PyTorch (zeta(NaN, 0) is inf).
EMBER_HOST_DEVICE inline double zeta(double x, double q) {
  if (x == 1) return inf_value();
  if (x < 1) return nan_value();
  if (q <= 0) {
    if (q == ::floor(q)) return inf_value();
    if (x != ::floor(x)) return nan_value();  // (negative q)^-x is not real
  }
  double s = ::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    ++i;
    a += 1;
    b = ::pow(a, -x);
    s += b;
    if (::fabs(b / s) < kEps) return s;
  }
  const double w = a;
  s += b * w / (x - 1) - 0.5 * b;
  const double bernoulli[12] = {1.0 / 6, -1.0 / 30, 1.0 / 42, -1.0 / 30, 5.0 / 66, -691.0 / 2730, 7.0 / 6,
                                -3617.0 / 510, 43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730};
  double rising = 1, k = 0, fact = 1;
  for (int j = 0; j < 12; ++j) {
    fact *= double(2 * j + 1) * double(2 * j + 2);
    rising *= x + k;
    b /= w;
    const double t = rising * b / (fact / bernoulli[j]);
    s += t;
    if (::fabs(t / s) < kEps) return s;
    k += 1;
    rising *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

// digamma for the GPU: reflection below 0, the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then
// psi(x) ~ ln x - 1/(2x) - sum B_2k / (2k x^2k).
EMBER_HOST_DEVICE inline double digamma(double x) {
  if (is_nan(x)) return x;
  if (x == 0) return ::copysign(inf_value(), -x);  // -inf at +0, +inf at -0, as PyTorch
  double result = 0;
  if (x < 0) {
    if (x == ::trunc(x)) return nan_value();  // poles (and -inf)
    // psi(x) = psi(1 - x) - pi / tan(pi x), with tan of the fractional part (exact where tan(pi x) is not)
    result = -kPi / ::tan(kPi * (x - ::trunc(x)));
    x = 1 - x;
  }
  if (is_inf(x)) return inf_value();
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double f = 1 / (x * x);
  const double series = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 +
                        f * (691.0 / 32760 + f * (-1.0 / 12 + f * (3617.0 / 8160))))))));
  return result + ::log(x) - 0.5 / x + series;
}

// trigamma: inf at the poles, reflection below 0, psi'(x) = psi'(x + 1) + 1/x^2 up to x >= 10, then
// psi'(x) ~ 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
EMBER_HOST_DEVICE inline double trigamma(double x) {
  if (is_nan(x)) return x;
  if (x <= 0 && x == ::trunc(x)) return inf_value();
  if (is_inf(x)) return 0.0;
  double result = 0;
  if (x < 0) {  // psi'(x) = -psi'(1 - x) + pi^2 / sin^2(pi x)
    const double s = ::sin(kPi * (x - ::trunc(x)));
    return -trigamma(1 - x) + kPi * kPi / (s * s);
  }
  while (x < 10) {
    result += 1 / (x * x);
    x += 1;
  }
  const double f = 1 / (x * x);
  const double series = 1 / x + f / 2 + f / x * (1.0 / 6 + f * (-1.0 / 30 + f * (1.0 / 42 + f * (-1.0 / 30 +
                        f * (5.0 / 66 + f * (-691.0 / 2730 + f * (7.0 / 6)))))));
  return result + series;
}

// psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 2
EMBER_HOST_DEVICE inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  if (n == 1) return trigamma(x);
  const double sign = (n % 2) ? 1.0 : -1.0;
  return sign * ::exp(log_gamma(double(n) + 1.0)) * zeta(double(n) + 1.0, x);
}

EMBER_HOST_DEVICE inline double spherical_j0(double x) {
  if (is_inf(x)) return 0.0;
  if (::fabs(x) < 0.5) {  // sin(x)/x loses digits near 0: its Taylor series instead
    double x2 = x * x, term = 1, sum = 1;
    for (int k = 1; k < 12; ++k) {
      term *= -x2 / double((2 * k) * (2 * k + 1));
      sum += term;
    }
    return sum;
  }
  return ::sin(x) / x;
}

EMBER_HOST_DEVICE inline double log_ndtr(double x) {
  const double t = x * 0.70710678118654752440;
  if (x < -1) return ::log(erfcx(-t) / 2) - t * t;  // Phi(x) = erfcx(-t) e^(-t^2) / 2: no underflow
  return ::log1p(-::erfc(t) / 2);
}

EMBER_HOST_DEVICE inline double entr(double x) {
  if (is_nan(x)) return x;
  if (x > 0) return -x * ::log(x);
  return x == 0 ? 0.0 : -inf_value();
}

EMBER_HOST_DEVICE inline double sinc(double x) {
  if (x == 0) return 1.0;
  const double px = kPi * x;
  return ::sin(px) / px;
}

EMBER_HOST_DEVICE inline double xlogy(double x, double y) {
  if (is_nan(y)) return y;
  if (x == 0) return 0.0;
  return x * ::log(y);
}
EMBER_HOST_DEVICE inline double xlog1py(double x, double y) {
  if (is_nan(y)) return y;
  if (x == 0) return 0.0;
  return x * ::log1p(y);
}

// ---- orthogonal polynomials of integer degree n (n < 0 gives 0), as torch.special evaluates them:
// closed forms at the interval's ends, the trigonometric form inside (-1, 1) for higher degrees, the
// three-term recurrence elsewhere. A NaN stops the recurrence early: once a term is NaN every later one is.
template <class Step>
EMBER_HOST_DEVICE inline double recur(double p, double q, int64_t n, Step step) {  // p = P_0, q = P_1; returns P_n
  for (int64_t k = 1; k < n && !is_nan(q); ++k) {
    const double r = step(p, q, k);
    p = q;
    q = r;
  }
  return q;
}

EMBER_HOST_DEVICE inline double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (::fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n > 6 && ::fabs(x) < 1.0) return ::cos(double(n) * ::acos(x));
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return recur(1.0, x, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

EMBER_HOST_DEVICE inline double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (::fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? double(n + 1) : -double(n + 1);
  if (n > 8 && ::fabs(x) < 1.0) {
    const double t = ::acos(x), s = ::sin(t);
    if (s != 0) return ::sin(double(n + 1) * t) / s;
    return double(n + 1) * ::cos(double(n + 1) * t) / x;
  }
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x;
  return recur(1.0, 2 * x, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

EMBER_HOST_DEVICE inline double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (::fabs(x) == 1.0) {
    if (x > 0) return 1.0;
    return n % 2 == 0 ? double(2 * n + 1) : -double(2 * n + 1);
  }
  if (n > 8 && ::fabs(x) < 1.0) {
    const double t = ::acos(x);
    return ::cos((double(n) + 0.5) * t) / ::cos(t / 2);
  }
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x - 1;
  return recur(1.0, 2 * x - 1, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

EMBER_HOST_DEVICE inline double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0.0;
  if (::fabs(x) == 1.0) {
    if (x > 0) return double(2 * n + 1);
    return n % 2 == 0 ? 1.0 : -1.0;
  }
  if (n > 8 && ::fabs(x) < 1.0) {
    const double t = ::acos(x);
    return ::sin((double(n) + 0.5) * t) / ::sin(t / 2);
  }
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x + 1;
  return recur(1.0, 2 * x + 1, n, [x](double p, double q, int64_t) { return 2 * x * q - p; });
}

// the shifted polynomials live on [0, 1]: P*_n(x) = P_n(2x - 1)
EMBER_HOST_DEVICE inline double shifted_chebyshev_t(double x, int64_t n) { return chebyshev_t(x + x - 1, n); }
EMBER_HOST_DEVICE inline double shifted_chebyshev_u(double x, int64_t n) { return chebyshev_u(x + x - 1, n); }
EMBER_HOST_DEVICE inline double shifted_chebyshev_v(double x, int64_t n) { return chebyshev_v(x + x - 1, n); }
EMBER_HOST_DEVICE inline double shifted_chebyshev_w(double x, int64_t n) { return chebyshev_w(x + x - 1, n); }

EMBER_HOST_DEVICE inline double hermite_h(double x, int64_t n) {  // physicists': H_{k+1} = 2x H_k - 2k H_{k-1}
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  if (n == 1) return 2 * x;
  return recur(1.0, 2 * x, n, [x](double p, double q, int64_t k) { return 2 * x * q - 2 * double(k) * p; });
}

EMBER_HOST_DEVICE inline double hermite_he(double x, int64_t n) {  // probabilists': He_{k+1} = x He_k - k He_{k-1}
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return recur(1.0, x, n, [x](double p, double q, int64_t k) { return x * q - double(k) * p; });
}

EMBER_HOST_DEVICE inline double laguerre_l(double x, int64_t n) {  // (k+1) L_{k+1} = (2k + 1 - x) L_k - k L_{k-1}
  if (n < 0) return 0.0;
  if (x == 0 || n == 0) return 1.0;
  if (n == 1) return 1 - x;
  return recur(1.0, 1 - x, n, [x](double p, double q, int64_t k) {
    return ((double(2 * k + 1) - x) * q - double(k) * p) / double(k + 1);
  });
}

EMBER_HOST_DEVICE inline double legendre_p(double x, int64_t n) {  // (k+1) P_{k+1} = (2k + 1) x P_k - k P_{k-1}
  if (n < 0) return 0.0;
  if (::fabs(x) == 1.0) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return recur(1.0, x, n, [x](double p, double q, int64_t k) {
    return (double(2 * k + 1) * x * q - double(k) * p) / double(k + 1);
  });
}

// The polynomial kernels (BinaryKernel name, function here), for each device's functor macro.
#define EMBER_ORTHOGONAL_POLYNOMIALS(X)                                                                \
  X(ChebyshevT, chebyshev_t) X(ChebyshevU, chebyshev_u) X(ChebyshevV, chebyshev_v) X(ChebyshevW, chebyshev_w) \
  X(ShiftedChebyshevT, shifted_chebyshev_t) X(ShiftedChebyshevU, shifted_chebyshev_u)                  \
  X(ShiftedChebyshevV, shifted_chebyshev_v) X(ShiftedChebyshevW, shifted_chebyshev_w)                  \
  X(HermiteH, hermite_h) X(HermiteHe, hermite_he) X(LaguerreL, laguerre_l) X(LegendreP, legendre_p)

// A polynomial's degree as torch.special reads it from a floating tensor: truncated to int64. NaN, the
// infinities and degrees past int64 become -1 (the polynomial is then 0), which is what PyTorch's CPU
// cast gives them; clamping them up instead made the recurrences run for 9e18 steps.
EMBER_HOST_DEVICE inline int64_t polynomial_degree(double n) {
  const double d = ::trunc(n);
  return !(::fabs(d) < 9.2e18) || d < -1.0 ? int64_t(-1) : int64_t(d);
}

}  // namespace ember::special_fn
