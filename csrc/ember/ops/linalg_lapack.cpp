// torch.linalg decompositions: argument checks and shapes here; every batch matrix is copied to
// column-major double (complex128 for complex input), factorized by the linalg stubs (kernels/linalg.h; LAPACK on the
// CPU, kernels/cpu/linalg.cpp), and copied back.
#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/linalg.h"

EMBER_DEFINE_STUB(linalg_det_stub)
EMBER_DEFINE_STUB(linalg_solve_stub)
EMBER_DEFINE_STUB(linalg_qr_stub)
EMBER_DEFINE_STUB(linalg_eigh_stub)
EMBER_DEFINE_STUB(linalg_svd_stub)
EMBER_DEFINE_STUB(linalg_lu_factor_stub)
EMBER_DEFINE_STUB(linalg_lu_solve_stub)
EMBER_DEFINE_STUB(linalg_triangular_solve_stub)
EMBER_DEFINE_STUB(linalg_cholesky_info_stub)
EMBER_DEFINE_STUB(linalg_ldl_factor_stub)
EMBER_DEFINE_STUB(linalg_ldl_solve_stub)
EMBER_DEFINE_STUB(linalg_geqrf_stub)
EMBER_DEFINE_STUB(linalg_eig_stub)

namespace ember::native {

namespace {

void check_matrix(const Tensor& A, const char* name, bool square) {
  EMBER_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(!square || A.sizes()[A.dim() - 1] == A.sizes()[A.dim() - 2], name,
              ": A must be batches of square matrices, but they are ", A.sizes()[A.dim() - 2], " by ",
              A.sizes()[A.dim() - 1], " matrices");
  EMBER_CHECK(is_differentiable_dtype(A.dtype()), name, ": Expected a floating point or complex tensor as input. Got ",
              A.dtype());
}

// the dtype LAPACK works in: double for real input, complex128 for complex
ScalarType work_dtype(const Tensor& A) { return is_complex(A.dtype()) ? kComplexDouble : kDouble; }

DimVector batch_shape(const Tensor& A) { return DimVector(IntArrayRef(A.sizes().data(), size_t(A.dim() - 2))); }

// the number of matrices (one for a 0 x 0 A without batch dimensions); checked, as an empty A's batch
// dimensions may multiply past int64
int64_t batch_count(const Tensor& A) {
  int64_t count = 1;
  for (int64_t i = 0; i + 2 < A.dim(); i++) count = checked_mul(count, A.sizes()[i], "numel");
  return count;
}

// Column-major work-dtype copy of every matrix: [batch, n_cols, n_rows] row-major == column-major
// matrices. Always a fresh buffer: LAPACK overwrites it.
Tensor to_colmajor(const Tensor& A) {
  Tensor t = A.mT();
  Tensor c = empty_tensor(t.sizes(), work_dtype(A), A.device());
  if (c.numel()) c.copy_(t);
  return c;
}
Tensor from_colmajor(const Tensor& C, ScalarType dt) { return C.mT().to(dt).contiguous(); }

DimVector with_dims(DimVector shape, std::initializer_list<int64_t> dims) {
  for (int64_t d : dims) shape.push_back(d);
  return shape;
}

// The LAPACK kernels PyTorch calls exist for float32/float64 and complex64/128 only (torch:
// NotImplementedError naming them).
void check_lapack_dtype(const Tensor& A, const char* kernel) {
  EMBER_CHECK_KIND(A.dtype() == kFloat || A.dtype() == kDouble || is_complex(A.dtype()), NotImplemented, "\"", kernel,
                   "\" not implemented for '", A.dtype(), "'");
}

std::string batch_prefix(const Tensor& A, int64_t b) {
  return A.dim() > 2 ? "(Batch element " + std::to_string(b) + "): " : std::string();
}

// The first batch element whose LAPACK info is positive, or -1.
int64_t first_failure(const Tensor& info, int* value) {
  const int* p = static_cast<const int*>(info.data_ptr());
  for (int64_t b = 0; b < info.numel(); b++)
    if (p[b] > 0) {
      *value = p[b];
      return b;
    }
  return -1;
}

// B [..., n, k] (checked against the square A [..., n, n]) and A, expanded to their common batch shape:
// the column-major double copies of both, and that batch shape.
struct SolveOperands {
  Tensor a, rhs;
  DimVector batch;
  int64_t n, k;
};
SolveOperands solve_operands(const Tensor& A, const Tensor& B, const char* name, bool left) {
  EMBER_CHECK(B.dim() >= 2, name, ": The input tensor B must have at least 2 dimensions.");
  int64_t n = A.sizes().back();
  int64_t brow = B.sizes()[B.dim() - 2], bcol = B.sizes().back();
  EMBER_CHECK((left ? brow : bcol) == n, name, ": Incompatible shapes of A and B for the equation ",
              left ? "AX = B (" : "XA = B (", n, "x", n, " and ", brow, "x", bcol, ")");
  SolveOperands r;
  r.batch = broadcast_shapes(batch_shape(A), batch_shape(B));
  r.n = n;
  Tensor Bl = left ? B : B.mT();  // X A = B  <=>  A^T X^T = B^T
  r.k = Bl.sizes().back();
  int64_t nb = prod(r.batch);
  r.a = to_colmajor(A.expand(with_dims(r.batch, {n, n}))).reshape({nb, n, n}).contiguous();
  r.rhs = to_colmajor(Bl.expand(with_dims(r.batch, {n, r.k}))).reshape({nb, r.k, n}).contiguous();
  return r;
}
Tensor solve_result(const SolveOperands& s, ScalarType dt, bool left) {
  Tensor X = from_colmajor(s.rhs.reshape(with_dims(s.batch, {s.k, s.n})), dt);
  return left ? X : X.mT().contiguous();
}

// LAPACK's int32 pivots of pivots [..., n], expanded to batch.
Tensor pivots_for(const Tensor& pivots, const DimVector& batch, int64_t n, const char* name) {
  EMBER_CHECK(pivots.dtype() == kInt, name, ": Expected pivots to be int32 (the output of linalg.lu_factor or "
              "linalg.ldl_factor), got ", pivots.dtype());
  EMBER_CHECK(pivots.dim() >= 1 && pivots.sizes().back() == n, name, ": Expected pivots of shape [..., ", n, "]");
  return pivots.expand(with_dims(batch, {n})).contiguous().reshape({prod(batch), n}).clone();
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  EMBER_CHECK(A.dim() >= 2, "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: ",
              A.sizes(), " instead");
  check_lapack_dtype(A, "lu_cpu");
  EMBER_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  auto kernel = linalg_lu_factor_stub(A.device(), "linalg.lu_factor");
  int64_t m = A.sizes()[A.dim() - 2], n = A.sizes().back(), k = std::min(m, n);
  int64_t nb = batch_count(A);
  DimVector bs = batch_shape(A);
  Tensor C = to_colmajor(A).reshape({nb, n, m}).contiguous();
  Tensor piv = ember::zeros({nb, k}, TensorOptions(kInt).device(A.device()));
  Tensor info = ember::zeros({nb}, TensorOptions(kInt).device(A.device()));
  kernel(C, piv, info);
  int bad = 0;
  int64_t b = check_errors ? first_failure(info, &bad) : -1;
  EMBER_CHECK(b < 0, "torch.linalg.lu_factor_ex: ", batch_prefix(A, b), "U[", bad, ",", bad, "] is zero and using it "
              "on lu_solve would result in a division by zero. If you still want to perform the factorization, "
              "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
  Tensor LU = from_colmajor(C.reshape(with_dims(bs, {n, m})), A.dtype());
  return {LU, piv.reshape(with_dims(bs, {k})), info.reshape(bs)};
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  check_lapack_dtype(LU, "linalg.lu_solve_cpu");
  check_matrix(LU, "linalg.lu_solve", true);
  EMBER_CHECK(LU.dtype() == B.dtype(), "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of "
              "type ", LU.dtype(), " and B of type ", B.dtype(), " instead");
  auto kernel = linalg_lu_solve_stub(LU.device(), "linalg.lu_solve");
  SolveOperands s = solve_operands(LU, B, "linalg.lu_solve", left);
  EMBER_CHECK(pivots.dim() == LU.dim() - 1, "linalg.lu_solve: Expected pivots to have one dimension less than LU");
  DimVector batch = broadcast_shapes(s.batch, DimVector(IntArrayRef(pivots.sizes().data(), size_t(pivots.dim() - 1))));
  EMBER_CHECK(batch == s.batch, "linalg.lu_solve: the batch dimensions of pivots do not broadcast with LU's and B's");
  Tensor piv = pivots_for(pivots, s.batch, s.n, "linalg.lu_solve");
  // X A = B is A^T X^T = B^T; X A^H = B is A X^H = B^H, so a complex right adjoint solve conjugates
  // the transposed right-hand side before and after solving with A
  const bool cplx = is_complex(LU.dtype());
  char trans = left ? (adjoint ? (cplx ? 'C' : 'T') : 'N') : (adjoint ? 'N' : 'T');
  const bool conj_rhs = cplx && !left && adjoint;
  if (conj_rhs) s.rhs = s.rhs.conj_physical();
  kernel(s.a, piv, s.rhs, trans);
  if (conj_rhs) s.rhs = s.rhs.conj_physical();
  return solve_result(s, LU.dtype(), left);
}

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  check_lapack_dtype(A, "triangular_solve_cpu");
  check_matrix(A, "linalg.solve_triangular", true);
  EMBER_CHECK(A.dtype() == B.dtype(), "linalg.solve_triangular: Expected A and B to have the same dtype, but found A "
              "of type ", A.dtype(), " and B of type ", B.dtype(), " instead");
  auto kernel = linalg_triangular_solve_stub(A.device(), "linalg.solve_triangular");
  SolveOperands s = solve_operands(A, B, "linalg.solve_triangular", left);
  kernel(s.a, s.rhs, upper, !left, unitriangular);
  return solve_result(s, A.dtype(), left);
}

std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  check_matrix(A, "linalg.cholesky", true);
  check_lapack_dtype(A, "cholesky_cpu");
  auto kernel = linalg_cholesky_info_stub(A.device(), "linalg.cholesky");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  // upper reads A's upper triangle, as torch's: the lower triangle of A^H, whose L gives U = L^H
  Tensor C = to_colmajor(upper ? A.mH() : A).reshape({nb, n, n}).contiguous();
  Tensor info = ember::zeros({nb}, TensorOptions(kInt).device(A.device()));
  kernel(C, info);
  int bad = 0;
  int64_t b = check_errors ? first_failure(info, &bad) : -1;
  EMBER_CHECK(b < 0, "linalg.cholesky_ex: ", batch_prefix(A, b), "The factorization could not be completed because "
              "the input is not positive-definite (the leading minor of order ", bad, " is not positive-definite).");
  Tensor L = from_colmajor(C.reshape(A.sizes()), A.dtype()).tril(0);
  return {upper ? L.mH().contiguous() : L, info.reshape(batch_shape(A))};
}

// sign and log|det| from the LU factors: U's diagonal and the parity of the row swaps.
std::tuple<Tensor, Tensor> linalg_slogdet(const Tensor& A) {
  check_matrix(A, "linalg.slogdet", true);
  EMBER_CHECK(!is_reduced_float(A.dtype()), "linalg.slogdet: Low precision dtypes not supported. Got ", A.dtype());
  auto kernel = linalg_lu_factor_stub(A.device(), "linalg.slogdet");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  Tensor piv = ember::zeros({nb, n}, TensorOptions(kInt).device(A.device()));
  Tensor info = ember::zeros({nb}, TensorOptions(kInt).device(A.device()));
  kernel(C, piv, info);
  // sign: the product of U's diagonal over its modulus (a unit complex number, or +-1), flipped per swap
  using zd = std::complex<double>;
  const bool cplx = is_complex(A.dtype());
  Tensor sign = empty_tensor({nb}, C.dtype(), A.device()), logabs = empty_tensor({nb}, kDouble, A.device());
  const int* p = static_cast<const int*>(piv.data_ptr());
  double* lo = static_cast<double*>(logabs.data_ptr());
  for (int64_t b = 0; b < nb; b++) {
    zd sg = 1;
    double la = 0;
    for (int64_t i = 0; i < n; i++) {
      const int64_t at = b * n * n + i * n + i;
      zd d = cplx ? static_cast<const zd*>(C.data_ptr())[at] : zd(static_cast<const double*>(C.data_ptr())[at]);
      if (p[b * n + i] != i + 1) sg = -sg;
      double mod = std::abs(d);
      if (mod != 0) sg *= d / mod;
      la += std::log(mod);
    }
    if (la == -INFINITY) sg = 0;
    if (cplx) static_cast<zd*>(sign.data_ptr())[b] = sg;
    else static_cast<double*>(sign.data_ptr())[b] = sg.real() < 0 ? -1.0 : sg.real() > 0 ? 1.0 : 0.0;
    lo[b] = la;
  }
  DimVector bs = batch_shape(A);
  return {sign.reshape(bs).to(A.dtype()), logabs.reshape(bs).to(to_real_dtype(A.dtype()))};
}

std::tuple<Tensor, Tensor, Tensor> linalg_ldl_factor_ex(const Tensor& A, bool hermitian, bool check_errors) {
  check_matrix(A, "torch.linalg.ldl_factor_ex", true);
  check_lapack_dtype(A, "ldl_factor_kernel_cpu");
  auto kernel = linalg_ldl_factor_stub(A.device(), "linalg.ldl_factor_ex");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  DimVector bs = batch_shape(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  Tensor piv = ember::zeros({nb, n}, TensorOptions(kInt).device(A.device()));
  Tensor info = ember::zeros({nb}, TensorOptions(kInt).device(A.device()));
  kernel(C, piv, info, hermitian && is_complex(A.dtype()));
  int bad = 0;
  int64_t b = check_errors ? first_failure(info, &bad) : -1;
  EMBER_CHECK(b < 0, "torch.linalg.ldl_factor_ex: ", batch_prefix(A, b), "The factorization could not be completed "
              "because the block diagonal matrix D is singular (D[", bad, ",", bad, "] is zero).");
  Tensor LD = from_colmajor(C.reshape(A.sizes()), A.dtype()).tril(0);  // sytrf leaves the upper triangle as it was
  return {LD, piv.reshape(with_dims(bs, {n})), info.reshape(bs)};
}

Tensor linalg_ldl_solve(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  check_matrix(LD, "torch.linalg.ldl_solve", true);
  check_lapack_dtype(LD, "ldl_solve_kernel_cpu");
  EMBER_CHECK(LD.dtype() == B.dtype(), "torch.linalg.ldl_solve: Expected LD and B to have the same dtype, but found "
              "LD of type ", LD.dtype(), " and B of type ", B.dtype(), " instead");
  auto kernel = linalg_ldl_solve_stub(LD.device(), "linalg.ldl_solve");
  SolveOperands s = solve_operands(LD, B, "torch.linalg.ldl_solve", true);
  Tensor piv = pivots_for(pivots, s.batch, s.n, "torch.linalg.ldl_solve");
  kernel(s.a, piv, s.rhs, hermitian && is_complex(LD.dtype()));
  return solve_result(s, LD.dtype(), true);
}

std::tuple<Tensor, Tensor> geqrf(const Tensor& self) {
  EMBER_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  check_lapack_dtype(self, "geqrf_cpu");
  auto kernel = linalg_geqrf_stub(self.device(), "geqrf");
  int64_t m = self.sizes()[self.dim() - 2], n = self.sizes().back(), k = std::min(m, n);
  int64_t nb = batch_count(self);
  DimVector bs = batch_shape(self);
  Tensor C = to_colmajor(self).reshape({nb, n, m}).contiguous();
  Tensor tau = ember::zeros({nb, k}, TensorOptions(work_dtype(self)).device(self.device()));
  kernel(C, tau);
  return {from_colmajor(C.reshape(with_dims(bs, {n, m})), self.dtype()),
          tau.reshape(with_dims(bs, {k})).to(self.dtype()).contiguous()};
}

std::tuple<Tensor, Tensor> geqrf_out(const Tensor& out0, const Tensor& out1, const Tensor& self) {
  auto [a, tau] = native::geqrf(self);
  return {copy_to_out(out0, a, true), copy_to_out(out1, tau, true)};
}

namespace {

// exp(A) by Higham's (2005) scaling and squaring: a Pade approximant of degree 3, 5, 7, 9 or 13, the
// lowest whose backward-error bound holds for the matrix's 1-norm (13 after scaling by 2^-squarings).
struct ExpmPlan {
  int degree_index;  // 0..3: degree 3..9 unscaled; 4: degree 13
  int squarings;
  bool operator<(const ExpmPlan& o) const {
    return degree_index != o.degree_index ? degree_index < o.degree_index : squarings < o.squarings;
  }
};
constexpr double kExpmTheta[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                 2.097847961257068e0, 5.371920351148152e0};

ExpmPlan expm_plan(double norm1) {
  ExpmPlan p{0, 0};
  while (p.degree_index < 4 && norm1 > kExpmTheta[p.degree_index]) p.degree_index++;
  if (p.degree_index == 4) p.squarings = std::max(0, int(std::ceil(std::log2(norm1 / kExpmTheta[4]))));
  return p;
}

// exp of a batch of double or complex128 matrices [b, n, n] that share one plan
Tensor expm_pade(const Tensor& A, ExpmPlan plan) {
  static const double b3[] = {120, 60, 12, 1};
  static const double b5[] = {30240, 15120, 3360, 420, 30, 1};
  static const double b7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
  static const double b9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                              2162160., 110880., 3960., 90., 1.};
  static const double b13[] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                               129060195264000., 10559470521600., 670442572800., 33522128640.,
                               1323241920., 40840800., 960960., 16380., 182., 1.};
  static const double* small[] = {b3, b5, b7, b9};
  int64_t n = A.sizes().back();
  Tensor I = ember::eye(n, std::nullopt, TensorOptions(A.dtype()).device(A.device()));
  Tensor U, V;
  if (plan.degree_index < 4) {  // degree d = 2 * index + 3: U = A sum_j b_(2j+1) A^2j, V = sum_j b_2j A^2j
    const double* b = small[plan.degree_index];
    int degree = 2 * plan.degree_index + 3;
    Tensor A2 = ember::matmul(A, A), P = I;
    Tensor usum = I * b[1], vsum = I * b[0];
    for (int j = 2; j <= degree; j += 2) {
      P = ember::matmul(P, A2);
      vsum = vsum + P * b[j];
      usum = usum + P * b[j + 1];
    }
    U = ember::matmul(A, usum);
    V = vsum;
  } else {
    const double* b = b13;
    Tensor As = A * std::ldexp(1.0, -plan.squarings);
    Tensor A2 = ember::matmul(As, As), A4 = ember::matmul(A2, A2), A6 = ember::matmul(A4, A2);
    U = ember::matmul(As, ember::matmul(A6, A6 * b[13] + A4 * b[11] + A2 * b[9]) + A6 * b[7] + A4 * b[5] +
                              A2 * b[3] + I * b[1]);
    V = ember::matmul(A6, A6 * b[12] + A4 * b[10] + A2 * b[8]) + A6 * b[6] + A4 * b[4] + A2 * b[2] + I * b[0];
  }
  Tensor R = ember::linalg_solve(V - U, V + U);
  for (int i = 0; i < plan.squarings; i++) R = ember::matmul(R, R);
  return R;
}

}  // namespace

// The matrices of a batch are grouped by plan, so a batch of similar matrices is a few batched products.
Tensor matrix_exp(const Tensor& self) {
  check_matrix(self, "linalg.matrix_exp", true);
  int64_t n = self.sizes().back();
  if (self.numel() == 0) return self.clone();
  int64_t nb = batch_count(self);
  Tensor Ad = self.to(work_dtype(self)).reshape({nb, n, n});
  Tensor norms = Ad.abs().sum(IntArrayRef({int64_t(-2)})).amax(IntArrayRef({int64_t(-1)})).contiguous();
  const double* norm1 = static_cast<const double*>(norms.data_ptr());
  std::map<ExpmPlan, std::vector<int64_t>> groups;
  std::vector<int64_t> non_finite;  // NaN or inf anywhere: no meaningful result, NaN as torch
  for (int64_t b = 0; b < nb; b++) {
    if (std::isfinite(norm1[b])) groups[expm_plan(norm1[b])].push_back(b);
    else non_finite.push_back(b);
  }
  Tensor out = groups.size() == 1 && non_finite.empty() ? Tensor() : ember::full_like(Ad, NAN);
  for (auto& [plan, members] : groups) {
    if (!out.defined()) {
      out = expm_pade(Ad, plan);
      break;
    }
    Tensor idx = empty_tensor({int64_t(members.size())}, kLong, Ad.device());
    std::copy(members.begin(), members.end(), static_cast<int64_t*>(idx.data_ptr()));
    out = out.index_copy(0, idx, expm_pade(Ad.index_select(0, idx), plan));
  }
  return out.reshape(self.sizes()).to(self.dtype()).contiguous();
}

Tensor linalg_det(const Tensor& A) {
  check_matrix(A, "linalg.det", true);
  auto kernel = linalg_det_stub(A.device(), "linalg.det");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n});
  Tensor out = empty_tensor({nb}, C.dtype(), A.device());
  kernel(out, C);
  return out.reshape(batch_shape(A)).to(A.dtype());
}

// Solves A X = B (B a matrix or, if it has one dim less than A, a batch of vectors).
Tensor linalg_solve(const Tensor& A, const Tensor& B) {
  check_matrix(A, "linalg.solve", true);
  if (A.device() != B.device()) fail_device_mismatch("linalg.solve", A.device(), B.device());
  auto kernel = linalg_solve_stub(A.device(), "linalg.solve");
  EMBER_CHECK(A.dtype() == B.dtype(), "linalg.solve: Expected A and B to have the same dtype, but found A of type ",
              A.dtype(), " and B of type ", B.dtype(), " instead");
  bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == IntArrayRef(A.sizes().data(), size_t(A.dim() - 1)));
  Tensor Bm = vector ? B.unsqueeze(-1) : B;
  EMBER_CHECK(Bm.dim() >= 2, "linalg.solve: The input tensor B must have at least 2 dimensions.");
  EMBER_CHECK(Bm.sizes()[Bm.dim() - 2] == A.sizes().back(), "linalg.solve: Incompatible shapes of A and B for the "
              "equation AX = B (", A.sizes()[A.dim() - 2], "x", A.sizes().back(), " and ", Bm.sizes()[Bm.dim() - 2],
              "x", Bm.sizes().back(), ")");
  DimVector bA = batch_shape(A), bB = batch_shape(Bm);
  DimVector batch = broadcast_shapes(bA, bB);
  int n = int(A.sizes().back()), k = int(Bm.sizes().back());
  DimVector ea(batch), eb(batch);
  ea.push_back(n); ea.push_back(n);
  eb.push_back(n); eb.push_back(k);
  Tensor Ae = A.expand(ea), Be = Bm.expand(eb);
  int64_t nb = prod(batch);
  Tensor CA = to_colmajor(Ae).reshape({nb, n, n}).contiguous(), CB = to_colmajor(Be).reshape({nb, k, n}).contiguous();
  kernel(CA, CB);
  DimVector xshape(batch);
  xshape.push_back(k); xshape.push_back(n);
  Tensor X = from_colmajor(CB.reshape(xshape), A.dtype());
  return vector ? X.squeeze(IntArrayRef({int64_t(-1)})) : X;
}

// A^-1 from A's LU factors; a zero pivot raises naming it (as torch: the diagonal element of U).
Tensor linalg_inv(const Tensor& A) {
  check_matrix(A, "linalg.inv", true);
  EMBER_CHECK(!is_reduced_float(A.dtype()), "linalg.inv: Low precision dtypes not supported. Got ", A.dtype());
  auto factor = linalg_lu_factor_stub(A.device(), "linalg.inv");
  auto solve = linalg_lu_solve_stub(A.device(), "linalg.inv");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  Tensor piv = ember::zeros({nb, n}, TensorOptions(kInt).device(A.device()));
  Tensor info = ember::zeros({nb}, TensorOptions(kInt).device(A.device()));
  factor(C, piv, info);
  int bad = 0;
  int64_t b = first_failure(info, &bad);
  EMBER_CHECK(b < 0, "linalg.inv: ", batch_prefix(A, b), "The diagonal element ", bad, " is zero, the inversion could "
              "not be completed because the input matrix is singular.");
  Tensor X = ember::eye(n, std::nullopt, TensorOptions(C.dtype()).device(A.device())).expand({nb, n, n}).contiguous();
  solve(C, piv, X, 'N');  // the identity is symmetric: its column-major copy is itself
  return from_colmajor(X.reshape(A.sizes()), A.dtype());
}

// linalg.cholesky is cholesky_ex raising for the first failing matrix (its gradient is cholesky_ex's)
Tensor linalg_cholesky(const Tensor& A, bool upper) {
  auto [L, info] = ember::linalg_cholesky_ex(A, upper, false);
  int bad = 0;
  int64_t b = first_failure(info, &bad);
  EMBER_CHECK(b < 0, "linalg.cholesky: ", batch_prefix(A, b), "The factorization could not be completed because the "
              "input is not positive-definite (the leading minor of order ", bad, " is not positive-definite).");
  return L;
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode) {
  check_matrix(A, "linalg.qr", false);
  auto kernel = linalg_qr_stub(A.device(), "linalg.qr");
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r", "qr received unrecognized mode '", mode,
              "' but expected one of 'reduced' (default), 'r', or 'complete'");
  int m = int(A.sizes()[A.dim() - 2]), n = int(A.sizes().back()), k = std::min(m, n);
  int qcols = mode == "complete" ? m : k;
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, m}).contiguous();
  DimVector bs = batch_shape(A);
  DimVector qs(bs), rs(bs);
  qs.push_back(m); qs.push_back(qcols);
  rs.push_back(mode == "complete" ? m : k); rs.push_back(n);
  int rrows = mode == "complete" ? m : k;
  Tensor Q = empty_tensor({nb, std::max(qcols, n), m}, C.dtype(), A.device());  // column-major work space
  Tensor R = ember::zeros({nb, n, rrows}, TensorOptions(C.dtype()).device(A.device()));
  kernel(C, Q, R, qcols, mode != "r");
  Tensor Rt = R.reshape({nb, n, rrows}).mT().to(A.dtype()).reshape(rs).contiguous();
  if (mode == "r") return {empty_tensor({0}, A.dtype(), A.device()), Rt};
  Tensor Qt = Q.narrow(1, 0, qcols).mT().to(A.dtype()).reshape(qs).contiguous();
  return {Qt, Rt};
}

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, std::string_view UPLO) {
  check_matrix(A, "linalg.eigh", true);
  auto kernel = linalg_eigh_stub(A.device(), "linalg.eigh");
  EMBER_CHECK(UPLO == "L" || UPLO == "U", "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  int n = int(A.sizes().back());
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  Tensor W = empty_tensor({nb, n}, kDouble, A.device());
  kernel(C, W, UPLO == "L");
  DimVector ws = batch_shape(A);
  ws.push_back(n);
  // column-major eigenvector columns -> row-major matrix whose columns are the eigenvectors
  Tensor V = from_colmajor(C.reshape(A.sizes()), A.dtype());
  return {W.reshape(ws).to(to_real_dtype(A.dtype())), V};
}

// General eigen-decomposition: complex eigenvalues and unit-norm eigenvectors, complex64 for float32
// and complex64 input, complex128 for double precision (computed in double precision)
std::tuple<Tensor, Tensor> linalg_eig(const Tensor& A) {
  EMBER_CHECK(A.dim() >= 2, "linalg.eig: The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(A.sizes()[A.dim() - 1] == A.sizes()[A.dim() - 2], "linalg.eig: A must be batches of square matrices, "
              "but they are ", A.sizes()[A.dim() - 2], " by ", A.sizes()[A.dim() - 1], " matrices");
  const ScalarType dt = A.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble || is_complex(dt), "linalg.eig: Expected a floating point or complex "
              "tensor as input. Got ", dt);
  EMBER_CHECK(A.numel() == 0 || ember::isfinite(A).all().item().to_bool(),
              "linalg.eig: input tensor should not contain infs or NaNs.");
  auto kernel = linalg_eig_stub(A.device(), "linalg.eig");
  const int64_t n = A.sizes().back(), nb = batch_count(A);
  Tensor C = empty_tensor({nb, n, n}, work_dtype(A), A.device());
  if (C.numel()) C.copy_(A.mT().reshape({nb, n, n}));  // column-major copies
  Tensor W = empty_tensor({nb, n}, kComplexDouble, A.device());
  Tensor V = empty_tensor({nb, n, n}, kComplexDouble, A.device());
  kernel(C, W, V, true);
  const ScalarType out = to_complex_dtype(to_real_dtype(dt));
  DimVector ws = batch_shape(A);
  ws.push_back(n);
  return {W.reshape(ws).to(out), V.mT().reshape(A.sizes()).to(out).contiguous()};
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  check_matrix(A, "linalg.svd", false);
  check_lapack_dtype(A, "linalg_svd_cpu");
  auto kernel = linalg_svd_stub(A.device(), "linalg.svd");
  int m = int(A.sizes()[A.dim() - 2]), n = int(A.sizes().back()), k = std::min(m, n);
  int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, m}).contiguous();
  Tensor U = empty_tensor({nb, ucols, m}, C.dtype(), A.device()), S = empty_tensor({nb, k}, kDouble, A.device()),
         VT = empty_tensor({nb, n, vrows}, C.dtype(), A.device());
  if (k == 0) {  // no singular values: LAPACK writes nothing, and the full bases are identities, as PyTorch's
    TensorOptions o = TensorOptions(C.dtype()).device(A.device());
    if (U.numel()) U.copy_(ember::eye(m, std::nullopt, o).expand({nb, m, m}));
    if (VT.numel()) VT.copy_(ember::eye(n, std::nullopt, o).expand({nb, n, n}));
  } else {
    // gesdd may never return on a matrix holding inf or NaN, so those are answered here, as PyTorch's
    // are: NaN raises (no convergence), inf gives NaN factors
    Tensor bad = ember::logical_not(ember::isfinite(C)).reshape({nb, int64_t(n) * m}).any(1).contiguous();
    const bool* badp = static_cast<const bool*>(bad.data_ptr());
    Tensor nan = ember::isnan(C).reshape({nb, int64_t(n) * m}).any(1).contiguous();
    const bool* nanp = static_cast<const bool*>(nan.data_ptr());
    bool any_bad = false;
    for (int64_t b = 0; b < nb; b++) {
      EMBER_CHECK(!nanp[b], "linalg.svd: ", batch_prefix(A, b), "The algorithm failed to converge because the "
                  "input matrix contained non-finite values.");
      if (badp[b]) {
        C.select(0, b).zero_();
        any_bad = true;
      }
    }
    kernel(C, U, S, VT, full_matrices);
    for (int64_t b = 0; any_bad && b < nb; b++)
      if (badp[b])
        for (Tensor* t : {&U, &S, &VT}) t->select(0, b).fill_(Scalar(NAN));
  }
  DimVector bs = batch_shape(A);
  DimVector us(bs), ss(bs), vs(bs);
  us.push_back(m); us.push_back(ucols);
  ss.push_back(k);
  vs.push_back(vrows); vs.push_back(n);
  Tensor Ur = U.mT().to(A.dtype()).reshape(us).contiguous();
  Tensor Vr = VT.mT().to(A.dtype()).reshape(vs).contiguous();
  return {Ur, S.reshape(ss).to(to_real_dtype(A.dtype())), Vr};
}

}  // namespace ember::native
