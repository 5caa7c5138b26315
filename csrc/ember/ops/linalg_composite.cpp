// torch.* and Tensor spellings of the linear-algebra functions, and the Householder products: composites
// of the LAPACK ops (ops/linalg_lapack.cpp) and differentiable ops, so autograd goes through those.
#include <algorithm>

#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

namespace {

void check_square(const Tensor& A, const char* name) {
  EMBER_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(A.sizes().back() == A.sizes()[A.dim() - 2], name, ": A must be batches of square matrices, but they are ",
              A.sizes()[A.dim() - 2], " by ", A.sizes().back(), " matrices");
}

Tensor eye_as(int64_t n, int64_t m, const Tensor& like) {
  return ember::eye(n, m, TensorOptions(like.dtype()).device(like.device()));
}

// The first k Householder vectors v_i of geqrf's compact form (column i: zeros above row i, 1 at row i,
// input below).
Tensor householder_vectors(const Tensor& input, int64_t k) {
  int64_t m = input.sizes()[input.dim() - 2];
  return input.narrow(-1, 0, k).tril(-1) + eye_as(m, k, input);
}

// The compact WY form H_0 H_1 ... H_{k-1} = I - V T V^H (H_i = I - tau_i v_i v_i^H): T is upper triangular
// with T^-1 = diag(1/tau) + triu(V^H V, 1) (LAPACK's larft), written so that tau = 0 needs no division:
// T = (I + diag(tau) triu(V^H V, 1))^-1 diag(tau), a unit-triangular solve. All differentiable ops.
Tensor householder_T(const Tensor& V, const Tensor& tau) {
  Tensor unit = ember::matmul(V.mH(), V).triu(1) * tau.unsqueeze(-1);
  int64_t k = tau.sizes().back();
  Tensor eye = eye_as(k, k, tau);
  return ember::linalg_solve_triangular(unit + eye, ember::diag_embed(tau), true, true, true);
}

void check_householder(const Tensor& input, const Tensor& tau, const char* name) {
  EMBER_CHECK(input.dim() >= 2, name, ": input must have at least 2 dimensions.");
  EMBER_CHECK(tau.dim() == input.dim() - 1, name, ": input.dim() - tau.dim() must be equal to 1.");
  EMBER_CHECK(IntArrayRef(tau.sizes().data(), size_t(tau.dim() - 1)) ==
                  IntArrayRef(input.sizes().data(), size_t(input.dim() - 2)),
              name, ": Expected batch dimensions of tau to be equal to input.shape[:-2], but got ",
              IntArrayRef(tau.sizes().data(), size_t(tau.dim() - 1)));
  EMBER_CHECK(tau.dtype() == input.dtype(), name, ": tau dtype ", tau.dtype(), " does not match input dtype ",
              input.dtype());
}

void check_lapack_dtype(const Tensor& A, const char* kernel) {
  EMBER_CHECK_KIND(A.dtype() == kFloat || A.dtype() == kDouble || is_complex(A.dtype()), NotImplemented, "\"", kernel,
                   "\" not implemented for '", A.dtype(), "'");
}

const Tensor& write(const Tensor& out, const Tensor& r) { return copy_to_out(out, r, true); }
// (some of torch's older spellings cast into out= like elementwise ops)
const Tensor& write_cast(const Tensor& out, const Tensor& r) { return copy_to_out(out, r, false); }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lu_unpack(const Tensor& LU_data, const Tensor& LU_pivots, bool unpack_data,
                                             bool unpack_pivots) {
  EMBER_CHECK(LU_data.dim() >= 2, "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: ",
              LU_data.sizes(), " instead");
  int64_t m = LU_data.sizes()[LU_data.dim() - 2], n = LU_data.sizes().back(), k = std::min(m, n);
  EMBER_CHECK(LU_pivots.dtype() == kInt, "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
              "torch.int32 dtype.\nNote: this function is intended to be used with the output produced by "
              "torch.linalg.lu_factor");
  EMBER_CHECK(LU_pivots.dim() >= 1 && LU_pivots.sizes().back() == k, "torch.lu_unpack: Expected LU_pivots.size(-1) "
              "to be min(LU_data.size(-2), LU_data.size(-1)) = ", k, ", but got ", LU_pivots.sizes().back());
  Tensor L, U, P;
  if (unpack_data) {
    L = LU_data.narrow(-1, 0, k).tril(-1) + eye_as(m, k, LU_data);
    U = LU_data.narrow(-2, 0, k).triu(0);
  } else {
    L = ember::empty({0}, TensorOptions(LU_data.dtype()).device(LU_data.device()));
    U = L;
  }
  if (!unpack_pivots) return {ember::empty({0}, TensorOptions(LU_data.dtype()).device(LU_data.device())), L, U};
  // the row order LAPACK's swaps make: row j of L U is row perm[j] of A, so P[perm[j], j] = 1
  DimVector batch(IntArrayRef(LU_data.sizes().data(), size_t(LU_data.dim() - 2)));
  int64_t nb = 1;
  for (int64_t d : batch) nb *= d;
  DimVector pshape(batch);
  pshape.push_back(k);
  Tensor piv = LU_pivots.expand(pshape).contiguous();
  Tensor Pd = ember::zeros({nb, m, m}, TensorOptions(kDouble));
  const int* pv = static_cast<const int*>(piv.data_ptr());
  double* pd = static_cast<double*>(Pd.data_ptr());
  std::vector<int64_t> perm(static_cast<size_t>(m));
  for (int64_t b = 0; b < nb; b++) {
    for (int64_t j = 0; j < m; j++) perm[size_t(j)] = j;
    for (int64_t i = 0; i < k; i++) {
      int p = pv[b * k + i];
      EMBER_CHECK(p >= 1 && p <= m, "pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive."
                  "Did you properly pass the result of lu_factor?");
      std::swap(perm[size_t(i)], perm[size_t(p - 1)]);
    }
    for (int64_t j = 0; j < m; j++) pd[b * m * m + perm[size_t(j)] * m + j] = 1.0;
  }
  DimVector ps(batch);
  ps.push_back(m);
  ps.push_back(m);
  P = Pd.reshape(ps).to(LU_data.dtype()).to(LU_data.device());
  return {P, L, U};
}

// Q = H_0 H_1 ... H_{k-1}, first n columns, with H_i = I - tau_i v_i v_i^H.
Tensor linalg_householder_product(const Tensor& input, const Tensor& tau) {
  const char* name = "torch.linalg.householder_product";
  check_householder(input, tau, name);
  int64_t m = input.sizes()[input.dim() - 2], n = input.sizes().back(), k = tau.sizes().back();
  EMBER_CHECK(m >= n, name, ": input.shape[-2] must be greater than or equal to input.shape[-1]");
  EMBER_CHECK(n >= k, name, ": input.shape[-1] must be greater than or equal to tau.shape[-1]");
  check_lapack_dtype(input, "orgqr_cpu");
  Tensor Q = eye_as(m, n, input).expand(input.sizes());
  if (k == 0) return Q.contiguous();
  Tensor V = householder_vectors(input, k);
  // Q = (I - V T V^H) I[:, :n]; V^H I[:, :n] is the first n rows of V, conjugate-transposed
  return (Q - ember::matmul(ember::matmul(V, householder_T(V, tau)), V.narrow(-2, 0, n).mH())).contiguous();
}

Tensor orgqr(const Tensor& self, const Tensor& input2) { return ember::linalg_householder_product(self, input2); }

// op(Q) C or C op(Q) for the m x m Q = H_0 ... H_{k-1} of geqrf's compact form, one reflector at a time.
Tensor ormqr(const Tensor& self, const Tensor& input2, const Tensor& input3, bool left, bool transpose) {
  const char* name = "torch.ormqr";
  check_householder(self, input2, name);
  EMBER_CHECK(input3.dim() >= 2, name, ": other must have at least 2 dimensions.");
  EMBER_CHECK(input3.dtype() == self.dtype(), name, ": Expected input and other to have the same dtype, but input "
              "has dtype ", self.dtype(), " and other has dtype ", input3.dtype(), " instead.");
  int64_t m = self.sizes()[self.dim() - 2], k = input2.sizes().back();
  int64_t other_m = input3.sizes()[input3.dim() - 2], other_n = input3.sizes().back();
  if (left)
    EMBER_CHECK(other_m == m, name, ": other.shape[-2] must be equal to input.shape[-2]");
  else
    EMBER_CHECK(other_n == m, name, ": other.shape[-1] must be equal to input.shape[-2]");
  EMBER_CHECK(k == std::min(m, self.sizes().back()), name, ": tau.shape[-1] must be equal to min(",
              left ? "other.shape[-2]" : "other.shape[-1]", ", input.shape[-1])");
  check_lapack_dtype(self, "ormqr_cpu");
  if (k == 0) return input3.clone();
  Tensor V = householder_vectors(self, k);
  Tensor T = householder_T(V, input2);
  if (transpose) T = T.mH();  // Q^H = I - V T^H V^H (torch's transpose conjugates complex Q)
  // op(Q) C = C - V T' (V^H C);  C op(Q) = C - (C V) T' V^H
  return left ? input3 - ember::matmul(V, ember::matmul(T, ember::matmul(V.mH(), input3)))
              : input3 - ember::matmul(ember::matmul(ember::matmul(input3, V), T), V.mH());
}

// A^n by repeated squaring; negative powers of the inverse.
Tensor matrix_power(const Tensor& self, int64_t n) {
  check_square(self, "linalg.matrix_power");
  int64_t size = self.sizes().back();
  if (n == 0) return eye_as(size, size, self).expand(self.sizes()).contiguous();
  Tensor base = n < 0 ? ember::linalg_inv(self) : self;
  uint64_t e = n < 0 ? uint64_t(-(n + 1)) + 1 : uint64_t(n);
  Tensor result;
  while (e) {
    if (e & 1) result = result.defined() ? ember::matmul(result, base) : base;
    e >>= 1;
    if (e) base = ember::matmul(base, base);
  }
  return n == 1 ? result.clone() : result;
}

Tensor det(const Tensor& self) { return ember::linalg_det(self); }

std::tuple<Tensor, Tensor> slogdet(const Tensor& self) { return ember::linalg_slogdet(self); }

// log det: NaN for a negative determinant (and -inf for a singular matrix, from log|det|); a complex
// matrix's is log|det| + i arg(det)
Tensor logdet(const Tensor& self) {
  EMBER_CHECK(is_differentiable_dtype(self.dtype()), "logdet: Expected a floating point or complex tensor as input. "
              "Got ", self.dtype());
  auto [sign, logabsdet] = ember::linalg_slogdet(self);
  if (is_complex(self.dtype())) return sign.log() + logabsdet;
  return logabsdet.masked_fill(sign < 0, NAN);
}

Tensor inverse(const Tensor& self) { return ember::linalg_inv(self); }

// The pseudo-inverse from the SVD, singular values below rcond * max(S) taken as zero.
Tensor pinverse(const Tensor& self, double rcond) {
  EMBER_CHECK(self.dim() >= 2 && (self.dtype() == kFloat || self.dtype() == kDouble || is_complex(self.dtype())),
              "linalg.pinv(", self.dtype(),
              "{", self.sizes(), "}): expected a tensor with 2 or more dimensions of float, double, cfloat or cdouble "
              "types");
  int64_t m = self.sizes()[self.dim() - 2], n = self.sizes().back();
  if (self.numel() == 0) {
    DimVector s(IntArrayRef(self.sizes().data(), size_t(self.dim() - 2)));
    s.push_back(n);
    s.push_back(m);
    return ember::zeros(s, TensorOptions(self.dtype()).device(self.device()));
  }
  auto [U, S, Vh] = ember::linalg_svd(self, false);
  Tensor keep = ember::gt(S, S.amax(IntArrayRef({int64_t(-1)}), true) * rcond);
  // 1/S only where kept: no inf that a zero-weighted gradient would turn into NaN
  Tensor Sinv = ember::where(keep, S, ember::ones_like(S)).reciprocal() * keep.to(S.dtype());
  return ember::matmul(Vh.mH() * Sinv.unsqueeze(-2), U.mH());
}

Tensor cholesky(const Tensor& self, bool upper) { return ember::linalg_cholesky(self, upper); }

// A = L L^H (or U^H U): X = L^-H (L^-1 B)
Tensor cholesky_solve(const Tensor& self, const Tensor& input2, bool upper) {
  EMBER_CHECK(self.dim() >= 2, "b should have at least 2 dimensions, but has ", self.dim(), " dimensions instead");
  EMBER_CHECK(input2.dim() >= 2, "u should have at least 2 dimensions, but has ", input2.dim(),
              " dimensions instead");
  EMBER_CHECK(self.dtype() == input2.dtype(), "Expected b and A to have the same dtype, but found b of type ",
              self.dtype(), " and A of type ", input2.dtype(), " instead.");
  check_square(input2, "cholesky_solve");
  check_lapack_dtype(self, "cholesky_solve_cpu");
  Tensor L = upper ? input2.mH() : input2;
  Tensor Y = ember::linalg_solve_triangular(L, self, false);
  return ember::linalg_solve_triangular(L.mH(), Y, true);
}

// A^-1 = L^-H L^-1
Tensor cholesky_inverse(const Tensor& self, bool upper) {
  check_square(self, "cholesky_inverse");
  check_lapack_dtype(self, "cholesky_inverse_out_cpu");
  int64_t n = self.sizes().back();
  Tensor L = upper ? self.mH() : self;
  Tensor Linv = ember::linalg_solve_triangular(L, eye_as(n, n, self).expand(self.sizes()), false);
  return ember::matmul(Linv.mH(), Linv);
}

std::tuple<Tensor, Tensor> qr(const Tensor& self, bool some) {
  return ember::linalg_qr(self, some ? std::string_view("reduced") : std::string_view("complete"));
}

// torch.svd: V (not V^H); without compute_uv, U and V are zero matrices of the full shapes.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& self, bool some, bool compute_uv) {
  EMBER_CHECK(self.dim() >= 2, "linalg.svd: The input tensor A must have at least 2 dimensions.");
  if (!compute_uv) {
    Tensor S = std::get<1>(ember::linalg_svd(self, false));
    int64_t m = self.sizes()[self.dim() - 2], n = self.sizes().back();
    DimVector us(IntArrayRef(self.sizes().data(), size_t(self.dim() - 2))), vs(us);
    us.push_back(m);
    us.push_back(m);
    vs.push_back(n);
    vs.push_back(n);
    TensorOptions o = TensorOptions(self.dtype()).device(self.device());
    return {ember::zeros(us, o), S, ember::zeros(vs, o)};
  }
  auto [U, S, Vh] = ember::linalg_svd(self, !some);
  return {U, S, Vh.mH()};
}

Tensor lu_solve(const Tensor& self, const Tensor& LU_data, const Tensor& LU_pivots) {
  EMBER_CHECK(self.dim() >= 2, "b should have at least 2 dimensions, but has ", self.dim(), " dimensions instead");
  return ember::linalg_lu_solve(LU_data, LU_pivots, self);
}

// torch.triangular_solve(b, A): X with op(A) X = b, and a copy of A.
std::tuple<Tensor, Tensor> triangular_solve(const Tensor& self, const Tensor& A, bool upper, bool transpose,
                                            bool unitriangular) {
  EMBER_CHECK(self.dim() >= 2, "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has ",
              self.dim(), " dimensions instead");
  EMBER_CHECK(A.dim() >= 2, "torch.triangular_solve: Expected A to have at least 2 dimensions, but it has ", A.dim(),
              " dimensions instead");
  EMBER_CHECK(self.dtype() == A.dtype(), "Expected b and A to have the same dtype, but found b of type ",
              self.dtype(), " and A of type ", A.dtype(), " instead.");
  Tensor X = ember::linalg_solve_triangular(transpose ? A.mT() : A, self, transpose ? !upper : upper, true,
                                            unitriangular);
  DimVector batch = broadcast_shapes(IntArrayRef(self.sizes().data(), size_t(self.dim() - 2)),
                                     IntArrayRef(A.sizes().data(), size_t(A.dim() - 2)));
  batch.push_back(A.sizes()[A.dim() - 2]);
  batch.push_back(A.sizes().back());
  return {X, A.expand(batch).clone()};  // A broadcast to the solution's batch shape, as torch returns it
}

// out= forms: the result written into out (of exactly the result's dtype where torch demands it)
std::tuple<Tensor, Tensor, Tensor> lu_unpack_out(const Tensor& out0, const Tensor& out1, const Tensor& out2,
                                                 const Tensor& LU_data, const Tensor& LU_pivots, bool unpack_data,
                                                 bool unpack_pivots) {
  auto [P, L, U] = native::lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots);
  return {write(out0, P), write(out1, L), write(out2, U)};
}
const Tensor& orgqr_out(const Tensor& out, const Tensor& self, const Tensor& input2) {
  return write_cast(out, native::orgqr(self, input2));
}
const Tensor& ormqr_out(const Tensor& out, const Tensor& self, const Tensor& input2, const Tensor& input3, bool left,
                        bool transpose) {
  return write(out, native::ormqr(self, input2, input3, left, transpose));
}
// torch copies A^0 and A^1 into out (casting), and writes products only of exactly their dtype
const Tensor& matrix_power_out(const Tensor& out, const Tensor& self, int64_t n) {
  EMBER_CHECK(can_cast(self.dtype(), out.dtype()), "matrix_power: Expected result to be safely castable from ",
              self.dtype(), " dtype, but got result with dtype ", out.dtype());
  Tensor r = native::matrix_power(self, n);
  return n == 0 || n == 1 ? write_cast(out, r) : write(out, r);
}
std::tuple<Tensor, Tensor> slogdet_out(const Tensor& out0, const Tensor& out1, const Tensor& self) {
  auto [sign, logabsdet] = native::slogdet(self);
  return {write(out0, sign), write(out1, logabsdet)};
}
const Tensor& inverse_out(const Tensor& out, const Tensor& self) { return write(out, native::inverse(self)); }
const Tensor& cholesky_out(const Tensor& out, const Tensor& self, bool upper) {
  return write_cast(out, native::cholesky(self, upper));
}
const Tensor& cholesky_solve_out(const Tensor& out, const Tensor& self, const Tensor& input2, bool upper) {
  return write_cast(out, native::cholesky_solve(self, input2, upper));
}
const Tensor& cholesky_inverse_out(const Tensor& out, const Tensor& self, bool upper) {
  return write_cast(out, native::cholesky_inverse(self, upper));
}
std::tuple<Tensor, Tensor> qr_out(const Tensor& out0, const Tensor& out1, const Tensor& self, bool some) {
  auto [Q, R] = native::qr(self, some);
  return {write(out0, Q), write(out1, R)};
}
std::tuple<Tensor, Tensor, Tensor> svd_out(const Tensor& out0, const Tensor& out1, const Tensor& out2,
                                           const Tensor& self, bool some, bool compute_uv) {
  auto [U, S, V] = native::svd(self, some, compute_uv);
  return {write(out0, U), write(out1, S), write(out2, V)};
}
const Tensor& lu_solve_out(const Tensor& out, const Tensor& self, const Tensor& LU_data, const Tensor& LU_pivots) {
  return write(out, native::lu_solve(self, LU_data, LU_pivots));
}
std::tuple<Tensor, Tensor> triangular_solve_out(const Tensor& out0, const Tensor& out1, const Tensor& self,
                                                const Tensor& A, bool upper, bool transpose, bool unitriangular) {
  auto [X, M] = native::triangular_solve(self, A, upper, transpose, unitriangular);
  return {write(out0, X), write(out1, M)};
}

}  // namespace ember::native
