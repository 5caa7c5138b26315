// kernels/special_functions.h is compiled for the GPU too, where its digamma, trigamma and polygamma
// replace Boost.Math's: here, on the host, they must agree with the CPU's (Boost) to near double
// precision over the whole line, poles and infinities included, so the GPU's values are checked
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/kernels/cpu/special_math.h"
#include "ember/kernels/special_functions.h"

namespace {

std::vector<double> sample_points() {
  std::vector<double> xs = {0.0, -0.0, 1e-300, 1e-12, 1e-6, 0.1, 0.5, 1.0, 1.4616321449683622, 2.0, 2.5, 5.999,
                            6.0, 9.99, 10.0, 10.5, 33.3, 1e3, 1e8, 1e15, 1e300, -0.5, -1.5, -2.25, -7.75, -10.5,
                            -100.3, -1e-9, -1.0, -2.0, -1e6};
  for (int i = -400; i <= 400; i++) xs.push_back(i * 0.0731);
  const double inf = std::numeric_limits<double>::infinity();
  xs.push_back(inf);
  xs.push_back(-inf);
  xs.push_back(std::numeric_limits<double>::quiet_NaN());
  return xs;
}

// Equal as PyTorch's tests see it: both NaN, same infinity, or within rel of each other (abs near 0).
void expect_agree(double got, double want, double x, const char* what, double rel = 1e-12) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << "(" << x << ") = " << got << ", want NaN";
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what << "(" << x << ")";
  } else {
    EXPECT_NEAR(got, want, rel * std::max(1.0, std::fabs(want))) << what << "(" << x << ")";
  }
}

}  // namespace

TEST(SpecialFunctions, DigammaAgreesWithBoost) {
  for (double x : sample_points()) expect_agree(ember::special_fn::digamma(x), ember::special_math::digamma(x), x, "digamma");
}

TEST(SpecialFunctions, TrigammaAgreesWithBoost) {
  for (double x : sample_points()) {
    const double want = ember::special_math::trigamma(x);
    // near the poles trigamma is huge and its relative error is what matters
    expect_agree(ember::special_fn::trigamma(x), want, x, "trigamma", std::fabs(want) > 1e6 ? 1e-9 : 1e-12);
  }
}

TEST(SpecialFunctions, PolygammaAgreesWithTheCpu) {
  for (int64_t n : {0, 1, 2, 3, 5}) {
    for (double x : sample_points()) {
      if (x <= 0 && n >= 2) continue;  // zeta's domain: both sides give the same inf / NaN, checked below
      const double want = ember::special_math::polygamma(n, x);
      expect_agree(ember::special_fn::polygamma(n, x), want, x, "polygamma", 1e-10);
    }
    expect_agree(ember::special_fn::polygamma(n, -2.0), ember::special_math::polygamma(n, -2.0), -2.0, "polygamma");
  }
}

TEST(SpecialFunctions, TheSharedOnesAreTheCpusOwn) {
  // the CPU's special_math forwards to special_fn: identical, bit for bit
  for (double x : sample_points()) {
    expect_agree(ember::special_fn::zeta(3.0, x), ember::special_math::zeta(3.0, x), x, "zeta", 0.0);
    expect_agree(ember::special_fn::legendre_p(x / 100, 7), ember::special_math::legendre_p(x / 100, 7), x, "legendre_p", 0.0);
  }
  EXPECT_NEAR(ember::special_fn::zeta(2.0, 1.0), 1.6449340668482264, 1e-15);  // pi^2 / 6
  EXPECT_EQ(ember::special_fn::polynomial_degree(-5.5), -1);
  EXPECT_EQ(ember::special_fn::polynomial_degree(3.9), 3);
  // past int64, infinite or NaN: -1 (the polynomial is 0), as PyTorch's CPU cast gives; no 9e18-step recurrence
  EXPECT_EQ(ember::special_fn::polynomial_degree(1e30), -1);
  EXPECT_EQ(ember::special_fn::polynomial_degree(std::numeric_limits<double>::infinity()), -1);
  EXPECT_EQ(ember::special_fn::polynomial_degree(std::numeric_limits<double>::quiet_NaN()), -1);
  EXPECT_EQ(ember::special_fn::legendre_p(0.3, ember::special_fn::polynomial_degree(1e30)), 0.0);
}
