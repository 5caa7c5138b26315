// Complex tensors from C++: creation from complex Scalars, arithmetic, the real views, reductions, the
// FFT primitives and printing.
#include <gtest/gtest.h>

#include <complex>
#include <sstream>

#include "ember/core/operators.h"
#include "ember/generated/ops.h"

using namespace ember;
using cd = std::complex<double>;

namespace {
cd at(const Tensor& t, int64_t i) { return t.select(0, i).item().to_complex(); }
}  // namespace

TEST(Complex, ScalarsArithmeticAndPromotion) {
  Tensor z = ember::full({3}, Scalar(cd(1.0, 2.0)), TensorOptions(kComplexDouble));
  EXPECT_EQ(z.dtype(), kComplexDouble);
  Tensor w = z * z + 1;  // (1+2i)^2 + 1 = -2 + 4i
  EXPECT_EQ(at(w, 2), cd(-2.0, 4.0));
  EXPECT_EQ(ember::abs(z).dtype(), kDouble);
  EXPECT_NEAR(ember::abs(z).select(0, 0).item().to_double(), std::sqrt(5.0), 1e-15);
  EXPECT_EQ(promote_types(kFloat, kComplexFloat), kComplexFloat);
  EXPECT_EQ(promote_types(kDouble, kComplexFloat), kComplexDouble);
  EXPECT_EQ((ember::ones({2}) * scalar_to_tensor(Scalar(cd(0, 1)))).dtype(), kComplexFloat);
}

TEST(Complex, RealViewsShareStorage) {
  Tensor z = ember::zeros({2, 3}, TensorOptions(kComplexFloat));
  Tensor parts = ember::view_as_real(z);
  EXPECT_EQ(parts.sizes(), IntArrayRef({2, 3, 2}));
  EXPECT_EQ(parts.dtype(), kFloat);
  parts.select(-1, 1).fill_(Scalar(3.0));  // every imaginary part
  EXPECT_EQ(at(z.select(0, 1), 2), cd(0.0, 3.0));
  EXPECT_EQ(ember::view_as_complex(parts).data_ptr(), z.data_ptr());
  EXPECT_THROW(ember::view_as_complex(ember::ones({3})), Error);
}

TEST(Complex, SumAndMatmul) {
  Tensor a = ember::complex(ember::arange(Scalar(4.0)).reshape({2, 2}), ember::ones({2, 2}));
  EXPECT_EQ(ember::sum(a).item().to_complex(), cd(6.0, 4.0));
  Tensor p = ember::matmul(a, a);  // with a = [[i, 1+i], [2+i, 3+i]]: i*i + (1+i)(2+i) = 3i
  EXPECT_EQ(at(p.select(0, 0), 0), cd(0.0, 3.0));
}

TEST(Complex, FftRoundTripAndPrinting) {
  Tensor x = ember::arange(Scalar(8.0), TensorOptions(kDouble));
  Tensor X = ember::_fft_r2c(x, {0}, 0, true);
  EXPECT_EQ(X.sizes(), IntArrayRef({5}));
  EXPECT_EQ(at(X, 0), cd(28.0, 0.0));
  Tensor back = ember::_fft_c2r(X, {0}, 2, 8);
  EXPECT_LT(ember::abs(back - x).max().item().to_double(), 1e-12);
  std::ostringstream os;
  os << ember::full({2}, Scalar(cd(1.5, -2.0)), TensorOptions(kComplexFloat));
  EXPECT_NE(os.str().find("-2"), std::string::npos);
  EXPECT_NE(os.str().find("CPUComplexFloatType{2}"), std::string::npos);
}

// LAPACK's complex routines from C++: A A^-1 = I, det of a diagonal matrix, A = L L^H, and mH conjugates.
TEST(Complex, LinearAlgebra) {
  Tensor A = ember::zeros({2, 2}, TensorOptions(kComplexDouble));
  A.select(0, 0).select(0, 0).fill_(Scalar(cd(2.0, 1.0)));
  A.select(0, 1).select(0, 1).fill_(Scalar(cd(0.0, 3.0)));
  A.select(0, 0).select(0, 1).fill_(Scalar(cd(1.0, -1.0)));
  Tensor I = ember::matmul(A, ember::linalg_inv(A));
  EXPECT_NEAR(std::abs(at(I.select(0, 0), 0) - cd(1.0, 0.0)), 0.0, 1e-12);
  EXPECT_NEAR(std::abs(at(I.select(0, 0), 1)), 0.0, 1e-12);
  EXPECT_NEAR(std::abs(ember::linalg_det(A).item().to_complex() - cd(2.0, 1.0) * cd(0.0, 3.0)), 0.0, 1e-12);
  EXPECT_EQ(at(A.mH().select(0, 1), 0), cd(1.0, 1.0));  // conj of A[0][1]
  Tensor H = ember::matmul(A, A.mH()) + ember::eye(2, std::nullopt, TensorOptions(kComplexDouble));
  Tensor L = ember::linalg_cholesky(H, false);
  Tensor back = ember::matmul(L, L.mH());
  EXPECT_NEAR(ember::abs(back - H).max().item().to_double(), 0.0, 1e-12);
  auto [U, S, Vh] = ember::linalg_svd(A, false);
  EXPECT_EQ(S.dtype(), kDouble);
  Tensor rec = ember::matmul(U * S.to(kComplexDouble).unsqueeze(0), Vh);
  EXPECT_NEAR(ember::abs(rec - A).max().item().to_double(), 0.0, 1e-12);
}

// conj() is a view with the conjugate bit (Note [Conjugate views]): ops read the values, writes go
// through the bit, resolve_conj() materializes, and the kernels never see it.
TEST(Complex, ConjugateViews) {
  Tensor x = ember::zeros({3}, TensorOptions(kComplexDouble));
  x.select(0, 0).fill_(Scalar(cd(1.0, 2.0)));
  Tensor y = x.conj();
  EXPECT_TRUE(y.is_conj());
  EXPECT_FALSE(x.is_conj());
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  EXPECT_EQ(y.select(0, 0).item().to_complex(), cd(1.0, -2.0));  // item reads through the bit
  EXPECT_EQ(at(y + 0, 0), cd(1.0, -2.0));                        // an op gets the values
  EXPECT_TRUE(y.transpose(0, 0).is_conj());                      // views keep the bit
  y.select(0, 1).fill_(Scalar(cd(0.0, 5.0)));                    // a write lands conjugated
  EXPECT_EQ(at(x, 1), cd(0.0, -5.0));
  Tensor r = y.resolve_conj();
  EXPECT_FALSE(r.is_conj());
  EXPECT_NE(r.data_ptr(), x.data_ptr());
  EXPECT_EQ(at(r, 1), cd(0.0, 5.0));
  std::ostringstream shown, resolved;
  shown << y;
  resolved << y.resolve_conj();
  EXPECT_EQ(shown.str(), resolved.str());                         // printing shows the values
  Tensor n = ember::_neg_view(ember::ones({2}));                  // the negative bit: reads -1
  EXPECT_TRUE(n.is_neg());
  EXPECT_EQ(n.select(0, 0).item().to_double(), -1.0);
  EXPECT_EQ((n * 2).select(0, 1).item().to_double(), -2.0);
  Tensor m = ember::zeros({2, 2}, TensorOptions(kComplexDouble));
  EXPECT_TRUE(m.mH().is_conj());
  EXPECT_FALSE(ember::zeros({2, 2}).mH().is_conj());
}
