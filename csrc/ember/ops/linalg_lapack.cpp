// torch.linalg decompositions through LAPACK (OpenBLAS ships it). Every batch matrix is copied to
// column-major double precision, factorized, and copied back; failures (singular, not positive-
// definite, no convergence) raise naming the op and the batch element.
#include <cmath>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info);
}

namespace ember::native {

namespace {

void check_matrix(const Tensor& A, const char* name, bool square) {
  EMBER_CHECK(A.dim() >= 2, name, ": The input tensor A must have at least 2 dimensions.");
  EMBER_CHECK(!square || A.sizes()[A.dim() - 1] == A.sizes()[A.dim() - 2], name,
              ": A must be batches of square matrices, but they are ", A.sizes()[A.dim() - 2], " by ",
              A.sizes()[A.dim() - 1], " matrices");
  EMBER_CHECK(is_floating(A.dtype()), name, ": Expected a floating point or complex tensor as input. Got ", A.dtype());
}

// the matrix size is checked: an empty batch's matrices can be [2**31, 2**32]
int64_t batch_count(const Tensor& A) {
  return A.numel() / std::max<int64_t>(checked_mul(A.sizes()[A.dim() - 1], A.sizes()[A.dim() - 2], "numel"), 1);
}

// Column-major double copy of every matrix: [batch, n_cols, n_rows] row-major == column-major matrices.
// Always a fresh buffer: LAPACK overwrites it.
Tensor to_colmajor(const Tensor& A) {
  Tensor t = A.mT();
  Tensor c = empty_tensor(t.sizes(), kDouble);
  if (c.numel()) c.copy_(t);
  return c;
}
Tensor from_colmajor(const Tensor& C, ScalarType dt) { return C.mT().to(dt).contiguous(); }

DimVector batch_shape(const Tensor& A) { return DimVector(IntArrayRef(A.sizes().data(), size_t(A.dim() - 2))); }

std::string batch_msg(int64_t b, int64_t nb) {
  return nb > 1 ? " (batch element " + std::to_string(b) + ")" : std::string();
}

}  // namespace

Tensor linalg_det(const Tensor& A) {
  check_matrix(A, "linalg.det", true);
  int n = int(A.sizes().back());
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A);
  Tensor out = empty_tensor({nb}, kDouble);
  double* c = static_cast<double*>(C.data_ptr());
  double* o = static_cast<double*>(out.data_ptr());
  std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < nb; b++) {
    double* a = c + b * n * n;
    int info = 0;
    if (n) dgetrf_(&n, &n, a, &n, piv.data(), &info);
    double d = 1;
    for (int i = 0; i < n; i++) d *= a[i * n + i] * (piv[i] != i + 1 ? -1.0 : 1.0);
    o[b] = info > 0 ? 0.0 : d;
  }
  return out.reshape(batch_shape(A)).to(A.dtype());
}

// Solves A X = B (B a matrix or, if it has one dim less than A, a batch of vectors).
Tensor linalg_solve(const Tensor& A, const Tensor& B) {
  check_matrix(A, "linalg.solve", true);
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
  double* ca = static_cast<double*>(CA.data_ptr());
  double* cb = static_cast<double*>(CB.data_ptr());
  std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < nb; b++) {
    int info = 0;
    if (n) dgetrf_(&n, &n, ca + b * n * n, &n, piv.data(), &info);
    EMBER_CHECK(info == 0, "linalg.solve: The solver failed because the input matrix is singular", batch_msg(b, nb), ".");
    const char t = 'N';
    if (n && k) dgetrs_(&t, &n, &k, ca + b * n * n, &n, piv.data(), cb + b * n * k, &n, &info);
  }
  DimVector xshape(batch);
  xshape.push_back(k); xshape.push_back(n);
  Tensor X = from_colmajor(CB.reshape(xshape), A.dtype());
  return vector ? X.squeeze(IntArrayRef({int64_t(-1)})) : X;
}

Tensor linalg_inv(const Tensor& A) {
  check_matrix(A, "linalg.inv", true);
  int64_t n = A.sizes().back();
  try {
    return native::linalg_solve(A, ember::eye(n, std::nullopt, TensorOptions(A.dtype())).expand(A.sizes()));
  } catch (const Error& e) {
    std::string msg = e.what();
    auto p = msg.find("linalg.solve: The solver failed because the input matrix is singular");
    if (p != std::string::npos) EMBER_FAIL(Runtime, "linalg.inv: The diagonal element ", "1 is zero, the inversion "
                                           "could not be completed because the input matrix is singular.");
    throw;
  }
}

Tensor linalg_cholesky(const Tensor& A, bool upper) {
  check_matrix(A, "linalg.cholesky", true);
  int n = int(A.sizes().back());
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  double* c = static_cast<double*>(C.data_ptr());
  for (int64_t b = 0; b < nb; b++) {
    int info = 0;
    const char uplo = 'L';  // reads the lower triangle of (column-major) A
    if (n) dpotrf_(&uplo, &n, c + b * n * n, &n, &info);
    EMBER_CHECK(info == 0, "linalg.cholesky: The factorization could not be completed because the input is not "
                "positive-definite (the leading minor of order ", info, " is not positive-definite)", batch_msg(b, nb), ".");
  }
  Tensor L = from_colmajor(C.reshape(A.sizes()), A.dtype()).tril(0);
  return upper ? L.mT().contiguous() : L;
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, std::string_view mode) {
  check_matrix(A, "linalg.qr", false);
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
  Tensor Q = empty_tensor({nb, std::max(qcols, n), m}, kDouble);  // column-major work space
  Tensor R = ember::zeros({nb, n, mode == "complete" ? m : k}, TensorOptions(kDouble));
  double* c = static_cast<double*>(C.data_ptr());
  double* q = static_cast<double*>(Q.data_ptr());
  double* r = static_cast<double*>(R.data_ptr());
  int rrows = mode == "complete" ? m : k;
  std::vector<double> tau(static_cast<size_t>(std::max(k, 1)));
  for (int64_t b = 0; b < nb; b++) {
    double* a = c + b * n * m;
    int info = 0, lwork = -1;
    double wq = 0;
    if (m && n) {
      dgeqrf_(&m, &n, a, &m, tau.data(), &wq, &lwork, &info);
      lwork = std::max(1, int(wq));
      std::vector<double> work(static_cast<size_t>(lwork));
      dgeqrf_(&m, &n, a, &m, tau.data(), work.data(), &lwork, &info);
    }
    // R: the upper triangle (rows < rrows) of the factored matrix
    for (int j = 0; j < n; j++)
      for (int i = 0; i <= std::min(j, rrows - 1); i++) r[b * n * rrows + j * rrows + i] = a[j * m + i];
    if (mode == "r" || !m) continue;
    double* qb = q + b * std::max(qcols, n) * m;
    for (int j = 0; j < std::min(n, qcols); j++)
      for (int i = 0; i < m; i++) qb[j * m + i] = a[j * m + i];
    lwork = -1;
    if (k || qcols) {
      dorgqr_(&m, &qcols, &k, qb, &m, tau.data(), &wq, &lwork, &info);
      lwork = std::max(1, int(wq));
      std::vector<double> work(static_cast<size_t>(lwork));
      dorgqr_(&m, &qcols, &k, qb, &m, tau.data(), work.data(), &lwork, &info);
    }
  }
  Tensor Rt = R.reshape({nb, n, rrows}).mT().to(A.dtype()).reshape(rs).contiguous();
  if (mode == "r") return {empty_tensor({0}, A.dtype()), Rt};
  Tensor Qt = Q.narrow(1, 0, qcols).mT().to(A.dtype()).reshape(qs).contiguous();
  return {Qt, Rt};
}

std::tuple<Tensor, Tensor> linalg_eigh(const Tensor& A, std::string_view UPLO) {
  check_matrix(A, "linalg.eigh", true);
  EMBER_CHECK(UPLO == "L" || UPLO == "U", "Expected UPLO argument to be 'L' or 'U', but got ", UPLO);
  int n = int(A.sizes().back());
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  Tensor W = empty_tensor({nb, n}, kDouble);
  double* c = static_cast<double*>(C.data_ptr());
  double* w = static_cast<double*>(W.data_ptr());
  // row-major lower == column-major upper
  const char jobz = 'V', uplo = UPLO == "L" ? 'L' : 'U';
  for (int64_t b = 0; b < nb; b++) {
    if (!n) continue;
    int info = 0, lwork = -1, liwork = -1, iwq = 0;
    double wq = 0;
    dsyevd_(&jobz, &uplo, &n, c + b * n * n, &n, w + b * n, &wq, &lwork, &iwq, &liwork, &info);
    lwork = std::max(1, int(wq));
    liwork = std::max(1, iwq);
    std::vector<double> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    dsyevd_(&jobz, &uplo, &n, c + b * n * n, &n, w + b * n, work.data(), &lwork, iwork.data(), &liwork, &info);
    EMBER_CHECK(info == 0, "linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned "
                "or has too many repeated eigenvalues (error code: ", info, ")", batch_msg(b, nb), ".");
  }
  DimVector ws = batch_shape(A);
  ws.push_back(n);
  // column-major eigenvector columns -> row-major matrix whose columns are the eigenvectors
  Tensor V = from_colmajor(C.reshape(A.sizes()), A.dtype());
  return {W.reshape(ws).to(A.dtype()), V};
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  check_matrix(A, "linalg.svd", false);
  int m = int(A.sizes()[A.dim() - 2]), n = int(A.sizes().back()), k = std::min(m, n);
  int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, m}).contiguous();
  Tensor U = empty_tensor({nb, ucols, m}, kDouble), S = empty_tensor({nb, k}, kDouble), VT = empty_tensor({nb, n, vrows}, kDouble);
  double* c = static_cast<double*>(C.data_ptr());
  double* u = static_cast<double*>(U.data_ptr());
  double* s = static_cast<double*>(S.data_ptr());
  double* vt = static_cast<double*>(VT.data_ptr());
  const char jobz = full_matrices ? 'A' : 'S';
  std::vector<int> iwork(static_cast<size_t>(std::max(8 * k, 1)));
  for (int64_t b = 0; b < nb; b++) {
    if (!m || !n) continue;
    int info = 0, lwork = -1, ldvt = std::max(vrows, 1);
    double wq = 0;
    dgesdd_(&jobz, &m, &n, c + b * n * m, &m, s + b * k, u + b * ucols * m, &m, vt + b * n * vrows, &ldvt, &wq, &lwork,
            iwork.data(), &info);
    lwork = std::max(1, int(wq));
    std::vector<double> work(static_cast<size_t>(lwork));
    dgesdd_(&jobz, &m, &n, c + b * n * m, &m, s + b * k, u + b * ucols * m, &m, vt + b * n * vrows, &ldvt, work.data(),
            &lwork, iwork.data(), &info);
    EMBER_CHECK(info == 0, "linalg.svd: The algorithm failed to converge because the input matrix is ill-conditioned "
                "or has too many repeated singular values (error code: ", info, ")", batch_msg(b, nb), ".");
  }
  DimVector bs = batch_shape(A);
  DimVector us(bs), ss(bs), vs(bs);
  us.push_back(m); us.push_back(ucols);
  ss.push_back(k);
  vs.push_back(vrows); vs.push_back(n);
  Tensor Ur = U.mT().to(A.dtype()).reshape(us).contiguous();
  Tensor Vr = VT.mT().to(A.dtype()).reshape(vs).contiguous();
  return {Ur, S.reshape(ss).to(A.dtype()), Vr};
}

}  // namespace ember::native
