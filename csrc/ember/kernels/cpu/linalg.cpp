// The CPU's torch.linalg decompositions: LAPACK (OpenBLAS ships it) on each matrix of a batch, in
// the column-major double layout kernels/linalg.h describes.
#include <algorithm>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/kernels/linalg.h"

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

namespace ember::cpu {

namespace {

std::string batch_msg(int64_t b, int64_t nb) {
  return nb > 1 ? " (batch element " + std::to_string(b) + ")" : std::string();
}
double* doubles(const Tensor& t) { return static_cast<double*>(t.data_ptr()); }

void det_cpu(const Tensor& det, const Tensor& C) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  double* c = doubles(C);
  double* o = doubles(det);
  std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < nb; b++) {
    double* a = c + b * n * n;
    int info = 0;
    if (n) dgetrf_(&n, &n, a, &n, piv.data(), &info);
    double d = 1;
    for (int i = 0; i < n; i++) d *= a[i * n + i] * (piv[i] != i + 1 ? -1.0 : 1.0);
    o[b] = info > 0 ? 0.0 : d;
  }
}

void solve_cpu(const Tensor& CA, const Tensor& CB) {
  int64_t nb = CA.sizes()[0];
  int n = int(CA.sizes()[1]), k = int(CB.sizes()[1]);
  double* ca = doubles(CA);
  double* cb = doubles(CB);
  std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < nb; b++) {
    int info = 0;
    if (n) dgetrf_(&n, &n, ca + b * n * n, &n, piv.data(), &info);
    EMBER_CHECK(info == 0, "linalg.solve: The solver failed because the input matrix is singular", batch_msg(b, nb), ".");
    const char t = 'N';
    if (n && k) dgetrs_(&t, &n, &k, ca + b * n * n, &n, piv.data(), cb + b * n * k, &n, &info);
  }
}

void cholesky_cpu(const Tensor& C) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  double* c = doubles(C);
  for (int64_t b = 0; b < nb; b++) {
    int info = 0;
    const char uplo = 'L';  // reads the lower triangle of (column-major) A
    if (n) dpotrf_(&uplo, &n, c + b * n * n, &n, &info);
    EMBER_CHECK(info == 0, "linalg.cholesky: The factorization could not be completed because the input is not "
                "positive-definite (the leading minor of order ", info, " is not positive-definite)", batch_msg(b, nb), ".");
  }
}

void qr_cpu(const Tensor& C, const Tensor& Q, const Tensor& R, int64_t q_cols, bool compute_q) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  int qcols = int(q_cols), rrows = int(R.sizes()[2]);
  double* c = doubles(C);
  double* q = doubles(Q);
  double* r = doubles(R);
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
    if (!compute_q || !m) continue;
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
}

void eigh_cpu(const Tensor& C, const Tensor& W, bool lower) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  double* c = doubles(C);
  double* w = doubles(W);
  const char jobz = 'V', uplo = lower ? 'L' : 'U';
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
}

void svd_cpu(const Tensor& C, const Tensor& U, const Tensor& S, const Tensor& VT, bool full_matrices) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  double* c = doubles(C);
  double* u = doubles(U);
  double* s = doubles(S);
  double* vt = doubles(VT);
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
}

}  // namespace

}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(linalg_det_stub, CPU, &ember::cpu::det_cpu);
EMBER_REGISTER_KERNEL(linalg_solve_stub, CPU, &ember::cpu::solve_cpu);
EMBER_REGISTER_KERNEL(linalg_cholesky_stub, CPU, &ember::cpu::cholesky_cpu);
EMBER_REGISTER_KERNEL(linalg_qr_stub, CPU, &ember::cpu::qr_cpu);
EMBER_REGISTER_KERNEL(linalg_eigh_stub, CPU, &ember::cpu::eigh_cpu);
EMBER_REGISTER_KERNEL(linalg_svd_stub, CPU, &ember::cpu::svd_cpu);
