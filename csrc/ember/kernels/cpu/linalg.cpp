// The CPU's torch.linalg decompositions: LAPACK (OpenBLAS ships it) on each matrix of a batch, in
// the column-major double layout kernels/linalg.h describes.
#include <algorithm>
#include <complex>
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
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work, const int* lwork,
             int* info);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a, const int* lda,
            std::complex<double>* w, std::complex<double>* vl, const int* ldvl, std::complex<double>* vr,
            const int* ldvr, std::complex<double>* work, const int* lwork, double* rwork, int* info);
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
    EMBER_CHECK(info == 0, "torch.linalg.solve: ", nb > 1 ? "(Batch element " + std::to_string(b) + "): " : "",
                "The solver failed because the input matrix is singular.");
    const char t = 'N';
    if (n && k) dgetrs_(&t, &n, &k, ca + b * n * n, &n, piv.data(), cb + b * n * k, &n, &info);
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

int* ints(const Tensor& t) { return static_cast<int*>(t.data_ptr()); }

void lu_factor_cpu(const Tensor& C, const Tensor& piv, const Tensor& info) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (m && n) dgetrf_(&m, &n, doubles(C) + b * n * m, &m, ints(piv) + b * k, &status);
    ints(info)[b] = status;
  }
}

void lu_solve_cpu(const Tensor& LU, const Tensor& piv, const Tensor& rhs, bool trans) {
  int64_t nb = LU.sizes()[0];
  int n = int(LU.sizes()[1]), k = int(rhs.sizes()[1]);
  const char t = trans ? 'T' : 'N';
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (n && k) dgetrs_(&t, &n, &k, doubles(LU) + b * n * n, &n, ints(piv) + b * n, doubles(rhs) + b * n * k, &n, &status);
  }
}

void triangular_solve_cpu(const Tensor& A, const Tensor& rhs, bool upper, bool trans, bool unit) {
  int64_t nb = A.sizes()[0];
  int n = int(A.sizes()[1]), k = int(rhs.sizes()[1]);
  const char side = 'L', uplo = upper ? 'U' : 'L', t = trans ? 'T' : 'N', diag = unit ? 'U' : 'N';
  const double one = 1.0;
  for (int64_t b = 0; b < nb; b++)
    if (n && k) dtrsm_(&side, &uplo, &t, &diag, &n, &k, &one, doubles(A) + b * n * n, &n, doubles(rhs) + b * n * k, &n);
}

void cholesky_info_cpu(const Tensor& C, const Tensor& info) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  const char uplo = 'L';
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (n) dpotrf_(&uplo, &n, doubles(C) + b * n * n, &n, &status);
    ints(info)[b] = status;
  }
}

void ldl_factor_cpu(const Tensor& C, const Tensor& piv, const Tensor& info) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  const char uplo = 'L';
  for (int64_t b = 0; b < nb; b++) {
    int status = 0, lwork = -1;
    double wq = 0;
    if (n) {
      dsytrf_(&uplo, &n, doubles(C) + b * n * n, &n, ints(piv) + b * n, &wq, &lwork, &status);
      lwork = std::max(1, int(wq));
      std::vector<double> work(static_cast<size_t>(lwork));
      dsytrf_(&uplo, &n, doubles(C) + b * n * n, &n, ints(piv) + b * n, work.data(), &lwork, &status);
    }
    ints(info)[b] = status;
  }
}

void ldl_solve_cpu(const Tensor& LD, const Tensor& piv, const Tensor& rhs) {
  int64_t nb = LD.sizes()[0];
  int n = int(LD.sizes()[1]), k = int(rhs.sizes()[1]);
  const char uplo = 'L';
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (n && k) dsytrs_(&uplo, &n, &k, doubles(LD) + b * n * n, &n, ints(piv) + b * n, doubles(rhs) + b * n * k, &n, &status);
  }
}

void geqrf_cpu(const Tensor& C, const Tensor& tau) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  for (int64_t b = 0; b < nb; b++) {
    if (!m || !n) continue;
    int status = 0, lwork = -1;
    double wq = 0;
    double* a = doubles(C) + b * n * m;
    dgeqrf_(&m, &n, a, &m, doubles(tau) + b * k, &wq, &lwork, &status);
    lwork = std::max(1, int(wq));
    std::vector<double> work(static_cast<size_t>(lwork));
    dgeqrf_(&m, &n, a, &m, doubles(tau) + b * k, work.data(), &lwork, &status);
  }
}

}  // namespace

// geev: real matrices through dgeev (as PyTorch, so real eigenvectors come out as LAPACK makes them:
// a conjugate pair's vectors are vr[:, j] +- i vr[:, j + 1]), complex ones through zgeev
void eig_cpu(const Tensor& A, const Tensor& W, const Tensor& V, bool compute_v) {
  using cd = std::complex<double>;
  const int64_t nb = A.sizes()[0];
  const int n = int(A.sizes()[1]);
  if (n == 0) return;
  const char jl = 'N', jr = compute_v ? 'V' : 'N';
  const int ldv = compute_v ? n : 1;
  cd* w = static_cast<cd*>(W.data_ptr());
  cd* v = compute_v ? static_cast<cd*>(V.data_ptr()) : nullptr;
  const bool real = A.dtype() == kDouble;
  const size_t nn = compute_v ? size_t(n) * size_t(n) : 1;
  std::vector<double> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), vr(nn), rwork(2 * static_cast<size_t>(n));
  std::vector<cd> zv(nn);
  for (int64_t b = 0; b < nb; b++) {
    int info = 0, lwork = -1;
    if (real) {
      double* a = doubles(A) + b * n * n;
      double q = 0;
      dgeev_(&jl, &jr, &n, a, &n, wr.data(), wi.data(), nullptr, &ldv, vr.data(), &ldv, &q, &lwork, &info);
      lwork = std::max(1, int(q));
      std::vector<double> work(static_cast<size_t>(lwork));
      dgeev_(&jl, &jr, &n, a, &n, wr.data(), wi.data(), nullptr, &ldv, vr.data(), &ldv, work.data(), &lwork, &info);
    } else {
      cd* a = static_cast<cd*>(A.data_ptr()) + b * n * n;
      cd q = 0;
      zgeev_(&jl, &jr, &n, a, &n, w + b * n, nullptr, &ldv, compute_v ? v + b * n * n : zv.data(), &ldv, &q, &lwork,
             rwork.data(), &info);
      lwork = std::max(1, int(q.real()));
      std::vector<cd> work(static_cast<size_t>(lwork));
      zgeev_(&jl, &jr, &n, a, &n, w + b * n, nullptr, &ldv, compute_v ? v + b * n * n : zv.data(), &ldv,
             work.data(), &lwork, rwork.data(), &info);
    }
    EMBER_CHECK(info <= 0, "linalg.eig", batch_msg(b, nb), ": The algorithm failed to converge because the input "
                "matrix is ill-conditioned or has too many repeated eigenvalues (error code: ", info, ").");
    if (!real) continue;
    for (int j = 0; j < n; j++) w[b * n + j] = cd(wr[size_t(j)], wi[size_t(j)]);
    if (!compute_v) continue;
    cd* vb = v + b * n * n;  // column j of the column-major result is vb[j * n .. j * n + n)
    for (int j = 0; j < n; j++) {
      const double* c = vr.data() + size_t(j) * n;
      if (wi[size_t(j)] != 0 && j + 1 < n) {
        const double* c2 = c + n;
        for (int i = 0; i < n; i++) {
          vb[size_t(j) * n + i] = cd(c[i], c2[i]);
          vb[size_t(j + 1) * n + i] = cd(c[i], -c2[i]);
        }
        j++;
      } else {
        for (int i = 0; i < n; i++) vb[size_t(j) * n + i] = cd(c[i], 0.0);
      }
    }
  }
}

}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(linalg_det_stub, CPU, &ember::cpu::det_cpu);
EMBER_REGISTER_KERNEL(linalg_solve_stub, CPU, &ember::cpu::solve_cpu);
EMBER_REGISTER_KERNEL(linalg_qr_stub, CPU, &ember::cpu::qr_cpu);
EMBER_REGISTER_KERNEL(linalg_eigh_stub, CPU, &ember::cpu::eigh_cpu);
EMBER_REGISTER_KERNEL(linalg_svd_stub, CPU, &ember::cpu::svd_cpu);
EMBER_REGISTER_KERNEL(linalg_lu_factor_stub, CPU, &ember::cpu::lu_factor_cpu);
EMBER_REGISTER_KERNEL(linalg_lu_solve_stub, CPU, &ember::cpu::lu_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_triangular_solve_stub, CPU, &ember::cpu::triangular_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_cholesky_info_stub, CPU, &ember::cpu::cholesky_info_cpu);
EMBER_REGISTER_KERNEL(linalg_ldl_factor_stub, CPU, &ember::cpu::ldl_factor_cpu);
EMBER_REGISTER_KERNEL(linalg_ldl_solve_stub, CPU, &ember::cpu::ldl_solve_cpu);
EMBER_REGISTER_KERNEL(linalg_geqrf_stub, CPU, &ember::cpu::geqrf_cpu);
EMBER_REGISTER_KERNEL(linalg_eig_stub, CPU, &ember::cpu::eig_cpu);
