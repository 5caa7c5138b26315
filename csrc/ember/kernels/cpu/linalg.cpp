// The CPU's torch.linalg decompositions: LAPACK (OpenBLAS ships it) on each matrix of a batch, in
// the column-major double layout kernels/linalg.h describes.
#include <algorithm>
#include <complex>
#include <string>
#include <vector>

#include "ember/core/error.h"
#include "ember/kernels/linalg.h"

using zd = std::complex<double>;

extern "C" {
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void zgetrf_(const int* m, const int* n, zd* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info);
void zgetrs_(const char* trans, const int* n, const int* nrhs, const zd* a, const int* lda, const int* ipiv, zd* b,
             const int* ldb, int* info);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info);
void zpotrf_(const char* uplo, const int* n, zd* a, const int* lda, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work, const int* lwork,
             int* info);
void zgeqrf_(const int* m, const int* n, zd* a, const int* lda, zd* tau, zd* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau, double* work,
             const int* lwork, int* info);
void zungqr_(const int* m, const int* n, const int* k, zd* a, const int* lda, const zd* tau, zd* work,
             const int* lwork, int* info);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info);
void zheevd_(const char* jobz, const char* uplo, const int* n, zd* a, const int* lda, double* w, zd* work,
             const int* lwork, double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info);
void dsytrf_(const char* uplo, const int* n, double* a, const int* lda, int* ipiv, double* work, const int* lwork,
             int* info);
void zsytrf_(const char* uplo, const int* n, zd* a, const int* lda, int* ipiv, zd* work, const int* lwork, int* info);
void zhetrf_(const char* uplo, const int* n, zd* a, const int* lda, int* ipiv, zd* work, const int* lwork, int* info);
void dsytrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv,
             double* b, const int* ldb, int* info);
void zsytrs_(const char* uplo, const int* n, const int* nrhs, const zd* a, const int* lda, const int* ipiv, zd* b,
             const int* ldb, int* info);
void zhetrs_(const char* uplo, const int* n, const int* nrhs, const zd* a, const int* lda, const int* ipiv, zd* b,
             const int* ldb, int* info);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb);
void ztrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const zd* alpha, const zd* a, const int* lda, zd* b, const int* ldb);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda, double* wr, double* wi,
            double* vl, const int* ldvl, double* vr, const int* ldvr, double* work, const int* lwork, int* info);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, zd* a, const int* lda, zd* w, zd* vl, const int* ldvl,
            zd* vr, const int* ldvr, zd* work, const int* lwork, double* rwork, int* info);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info);
void zgesdd_(const char* jobz, const int* m, const int* n, zd* a, const int* lda, double* s, zd* u, const int* ldu,
             zd* vt, const int* ldvt, zd* work, const int* lwork, double* rwork, int* iwork, int* info);
}

namespace ember::cpu {

namespace {

// One spelling per LAPACK routine for both element types (double: d*, complex<double>: z*), so each
// kernel below is written once as a template.
void getrf(int m, int n, double* a, int* piv, int* info) { dgetrf_(&m, &n, a, &m, piv, info); }
void getrf(int m, int n, zd* a, int* piv, int* info) { zgetrf_(&m, &n, a, &m, piv, info); }
void getrs(char t, int n, int k, const double* a, const int* piv, double* b, int* info) {
  dgetrs_(&t, &n, &k, a, &n, piv, b, &n, info);
}
void getrs(char t, int n, int k, const zd* a, const int* piv, zd* b, int* info) {
  zgetrs_(&t, &n, &k, a, &n, piv, b, &n, info);
}
void potrf(int n, double* a, int* info) { dpotrf_("L", &n, a, &n, info); }
void potrf(int n, zd* a, int* info) { zpotrf_("L", &n, a, &n, info); }
void geqrf(int m, int n, double* a, double* tau, double* w, int lw, int* info) { dgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void geqrf(int m, int n, zd* a, zd* tau, zd* w, int lw, int* info) { zgeqrf_(&m, &n, a, &m, tau, w, &lw, info); }
void orgqr(int m, int n, int k, double* a, const double* tau, double* w, int lw, int* info) {
  dorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info);
}
void orgqr(int m, int n, int k, zd* a, const zd* tau, zd* w, int lw, int* info) {
  zungqr_(&m, &n, &k, a, &m, tau, w, &lw, info);
}
// Bunch-Kaufman: symmetric (sytrf) or, for complex Hermitian matrices, hetrf; real ones are both
void sytrf(bool herm, int n, double* a, int* piv, double* w, int lw, int* info) {
  (void)herm;
  dsytrf_("L", &n, a, &n, piv, w, &lw, info);
}
void sytrf(bool herm, int n, zd* a, int* piv, zd* w, int lw, int* info) {
  (herm ? zhetrf_ : zsytrf_)("L", &n, a, &n, piv, w, &lw, info);
}
void sytrs(bool herm, int n, int k, const double* a, const int* piv, double* b, int* info) {
  (void)herm;
  dsytrs_("L", &n, &k, a, &n, piv, b, &n, info);
}
void sytrs(bool herm, int n, int k, const zd* a, const int* piv, zd* b, int* info) {
  (herm ? zhetrs_ : zsytrs_)("L", &n, &k, a, &n, piv, b, &n, info);
}
void trsm(char uplo, char t, char diag, int n, int k, const double* a, double* b) {
  const double one = 1.0;
  dtrsm_("L", &uplo, &t, &diag, &n, &k, &one, a, &n, b, &n);
}
void trsm(char uplo, char t, char diag, int n, int k, const zd* a, zd* b) {
  const zd one = 1.0;
  ztrsm_("L", &uplo, &t, &diag, &n, &k, &one, a, &n, b, &n);
}

// the optimal workspace a query (lwork = -1) reported
int work_size(double q) { return std::max(1, int(q)); }
int work_size(zd q) { return std::max(1, int(q.real())); }

std::string batch_msg(int64_t b, int64_t nb) {
  return nb > 1 ? " (batch element " + std::to_string(b) + ")" : std::string();
}
double* doubles(const Tensor& t) { return static_cast<double*>(t.data_ptr()); }
int* ints(const Tensor& t) { return static_cast<int*>(t.data_ptr()); }
template <typename T>
T* elems(const Tensor& t) { return static_cast<T*>(t.data_ptr()); }

// Calls body<double> or body<complex<double>> by the work tensor's dtype (kDouble or kComplexDouble).
#define EMBER_LAPACK_TYPES(work, fn, ...) \
  ((work).dtype() == kComplexDouble ? fn<zd>(__VA_ARGS__) : fn<double>(__VA_ARGS__))

template <typename T>
void det_impl(const Tensor& det, const Tensor& C) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < nb; b++) {
    T* a = elems<T>(C) + b * n * n;
    int info = 0;
    if (n) getrf(n, n, a, piv.data(), &info);
    T d = 1;
    for (int i = 0; i < n; i++) d *= a[i * n + i] * (piv[i] != i + 1 ? -1.0 : 1.0);
    elems<T>(det)[b] = info > 0 ? T(0) : d;
  }
}
void det_cpu(const Tensor& det, const Tensor& C) { EMBER_LAPACK_TYPES(C, det_impl, det, C); }

template <typename T>
void solve_impl(const Tensor& CA, const Tensor& CB) {
  int64_t nb = CA.sizes()[0];
  int n = int(CA.sizes()[1]), k = int(CB.sizes()[1]);
  std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
  for (int64_t b = 0; b < nb; b++) {
    int info = 0;
    T* a = elems<T>(CA) + b * n * n;
    if (n) getrf(n, n, a, piv.data(), &info);
    EMBER_CHECK(info == 0, "torch.linalg.solve: ", nb > 1 ? "(Batch element " + std::to_string(b) + "): " : "",
                "The solver failed because the input matrix is singular.");
    if (n && k) getrs('N', n, k, a, piv.data(), elems<T>(CB) + b * n * k, &info);
  }
}
void solve_cpu(const Tensor& CA, const Tensor& CB) { EMBER_LAPACK_TYPES(CA, solve_impl, CA, CB); }

template <typename T>
void qr_impl(const Tensor& C, const Tensor& Q, const Tensor& R, int64_t q_cols, bool compute_q) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  int qcols = int(q_cols), rrows = int(R.sizes()[2]);
  T* c = elems<T>(C);
  T* q = elems<T>(Q);
  T* r = elems<T>(R);
  std::vector<T> tau(static_cast<size_t>(std::max(k, 1)));
  for (int64_t b = 0; b < nb; b++) {
    T* a = c + b * n * m;
    int info = 0;
    T wq = 0;
    if (m && n) {
      geqrf(m, n, a, tau.data(), &wq, -1, &info);
      std::vector<T> work(static_cast<size_t>(work_size(wq)));
      geqrf(m, n, a, tau.data(), work.data(), work_size(wq), &info);
    }
    // R: the upper triangle (rows < rrows) of the factored matrix
    for (int j = 0; j < n; j++)
      for (int i = 0; i <= std::min(j, rrows - 1); i++) r[b * n * rrows + j * rrows + i] = a[j * m + i];
    if (!compute_q || !m) continue;
    T* qb = q + b * std::max(qcols, n) * m;
    for (int j = 0; j < std::min(n, qcols); j++)
      for (int i = 0; i < m; i++) qb[j * m + i] = a[j * m + i];
    if (k || qcols) {
      orgqr(m, qcols, k, qb, tau.data(), &wq, -1, &info);
      std::vector<T> work(static_cast<size_t>(work_size(wq)));
      orgqr(m, qcols, k, qb, tau.data(), work.data(), work_size(wq), &info);
    }
  }
}
void qr_cpu(const Tensor& C, const Tensor& Q, const Tensor& R, int64_t q_cols, bool compute_q) {
  EMBER_LAPACK_TYPES(C, qr_impl, C, Q, R, q_cols, compute_q);
}

// syevd (real symmetric) or heevd (complex Hermitian, with its real workspace); eigenvalues are real
int eigh_one(int n, double* a, double* w, char uplo) {
  int info = 0, lwork = -1, liwork = -1, iwq = 0;
  double wq = 0;
  dsyevd_("V", &uplo, &n, a, &n, w, &wq, &lwork, &iwq, &liwork, &info);
  lwork = work_size(wq);
  liwork = std::max(1, iwq);
  std::vector<double> work(static_cast<size_t>(lwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  dsyevd_("V", &uplo, &n, a, &n, w, work.data(), &lwork, iwork.data(), &liwork, &info);
  return info;
}
int eigh_one(int n, zd* a, double* w, char uplo) {
  int info = 0, lwork = -1, lrwork = -1, liwork = -1, iwq = 0;
  zd wq = 0;
  double rwq = 0;
  zheevd_("V", &uplo, &n, a, &n, w, &wq, &lwork, &rwq, &lrwork, &iwq, &liwork, &info);
  lwork = work_size(wq);
  lrwork = work_size(rwq);
  liwork = std::max(1, iwq);
  std::vector<zd> work(static_cast<size_t>(lwork));
  std::vector<double> rwork(static_cast<size_t>(lrwork));
  std::vector<int> iwork(static_cast<size_t>(liwork));
  zheevd_("V", &uplo, &n, a, &n, w, work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork, &info);
  return info;
}

template <typename T>
void eigh_impl(const Tensor& C, const Tensor& W, bool lower) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  for (int64_t b = 0; b < nb; b++) {
    if (!n) continue;
    int info = eigh_one(n, elems<T>(C) + b * n * n, doubles(W) + b * n, lower ? 'L' : 'U');
    EMBER_CHECK(info == 0, "linalg.eigh: The algorithm failed to converge because the input matrix is ill-conditioned "
                "or has too many repeated eigenvalues (error code: ", info, ")", batch_msg(b, nb), ".");
  }
}
void eigh_cpu(const Tensor& C, const Tensor& W, bool lower) { EMBER_LAPACK_TYPES(C, eigh_impl, C, W, lower); }

int gesdd(char jobz, int m, int n, double* a, double* s, double* u, double* vt, int ldvt, int* iwork) {
  int info = 0, lwork = -1;
  double wq = 0;
  dgesdd_(&jobz, &m, &n, a, &m, s, u, &m, vt, &ldvt, &wq, &lwork, iwork, &info);
  lwork = work_size(wq);
  std::vector<double> work(static_cast<size_t>(lwork));
  dgesdd_(&jobz, &m, &n, a, &m, s, u, &m, vt, &ldvt, work.data(), &lwork, iwork, &info);
  return info;
}
int gesdd(char jobz, int m, int n, zd* a, double* s, zd* u, zd* vt, int ldvt, int* iwork) {
  int info = 0, lwork = -1;
  zd wq = 0;
  // the real workspace zgesdd documents for jobz 'A'/'S'
  const size_t mn = size_t(std::min(m, n)), mx = size_t(std::max(m, n));
  std::vector<double> rwork(std::max<size_t>(1, std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn)));
  zgesdd_(&jobz, &m, &n, a, &m, s, u, &m, vt, &ldvt, &wq, &lwork, rwork.data(), iwork, &info);
  lwork = work_size(wq);
  std::vector<zd> work(static_cast<size_t>(lwork));
  zgesdd_(&jobz, &m, &n, a, &m, s, u, &m, vt, &ldvt, work.data(), &lwork, rwork.data(), iwork, &info);
  return info;
}

template <typename T>
void svd_impl(const Tensor& C, const Tensor& U, const Tensor& S, const Tensor& VT, bool full_matrices) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  std::vector<int> iwork(static_cast<size_t>(std::max(8 * k, 1)));
  for (int64_t b = 0; b < nb; b++) {
    if (!m || !n) continue;
    int info = gesdd(full_matrices ? 'A' : 'S', m, n, elems<T>(C) + b * n * m, doubles(S) + b * k,
                     elems<T>(U) + b * ucols * m, elems<T>(VT) + b * n * vrows, std::max(vrows, 1), iwork.data());
    EMBER_CHECK(info == 0, "linalg.svd: The algorithm failed to converge because the input matrix is ill-conditioned "
                "or has too many repeated singular values (error code: ", info, ")", batch_msg(b, nb), ".");
  }
}
void svd_cpu(const Tensor& C, const Tensor& U, const Tensor& S, const Tensor& VT, bool full_matrices) {
  EMBER_LAPACK_TYPES(C, svd_impl, C, U, S, VT, full_matrices);
}

template <typename T>
void lu_factor_impl(const Tensor& C, const Tensor& piv, const Tensor& info) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (m && n) getrf(m, n, elems<T>(C) + b * n * m, ints(piv) + b * k, &status);
    ints(info)[b] = status;
  }
}
void lu_factor_cpu(const Tensor& C, const Tensor& piv, const Tensor& info) {
  EMBER_LAPACK_TYPES(C, lu_factor_impl, C, piv, info);
}

template <typename T>
void lu_solve_impl(const Tensor& LU, const Tensor& piv, const Tensor& rhs, char trans) {
  int64_t nb = LU.sizes()[0];
  int n = int(LU.sizes()[1]), k = int(rhs.sizes()[1]);
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (n && k) getrs(trans, n, k, elems<T>(LU) + b * n * n, ints(piv) + b * n, elems<T>(rhs) + b * n * k, &status);
  }
}
void lu_solve_cpu(const Tensor& LU, const Tensor& piv, const Tensor& rhs, char trans) {
  EMBER_LAPACK_TYPES(LU, lu_solve_impl, LU, piv, rhs, trans);
}

template <typename T>
void triangular_solve_impl(const Tensor& A, const Tensor& rhs, bool upper, bool trans, bool unit) {
  int64_t nb = A.sizes()[0];
  int n = int(A.sizes()[1]), k = int(rhs.sizes()[1]);
  for (int64_t b = 0; b < nb; b++)
    if (n && k)
      trsm(upper ? 'U' : 'L', trans ? 'T' : 'N', unit ? 'U' : 'N', n, k, elems<T>(A) + b * n * n,
           elems<T>(rhs) + b * n * k);
}
void triangular_solve_cpu(const Tensor& A, const Tensor& rhs, bool upper, bool trans, bool unit) {
  EMBER_LAPACK_TYPES(A, triangular_solve_impl, A, rhs, upper, trans, unit);
}

template <typename T>
void cholesky_info_impl(const Tensor& C, const Tensor& info) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (n) potrf(n, elems<T>(C) + b * n * n, &status);
    ints(info)[b] = status;
  }
}
void cholesky_info_cpu(const Tensor& C, const Tensor& info) { EMBER_LAPACK_TYPES(C, cholesky_info_impl, C, info); }

template <typename T>
void ldl_factor_impl(const Tensor& C, const Tensor& piv, const Tensor& info, bool hermitian) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]);
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    T wq = 0;
    if (n) {
      T* a = elems<T>(C) + b * n * n;
      sytrf(hermitian, n, a, ints(piv) + b * n, &wq, -1, &status);
      std::vector<T> work(static_cast<size_t>(work_size(wq)));
      sytrf(hermitian, n, a, ints(piv) + b * n, work.data(), work_size(wq), &status);
    }
    ints(info)[b] = status;
  }
}
void ldl_factor_cpu(const Tensor& C, const Tensor& piv, const Tensor& info, bool hermitian) {
  EMBER_LAPACK_TYPES(C, ldl_factor_impl, C, piv, info, hermitian);
}

template <typename T>
void ldl_solve_impl(const Tensor& LD, const Tensor& piv, const Tensor& rhs, bool hermitian) {
  int64_t nb = LD.sizes()[0];
  int n = int(LD.sizes()[1]), k = int(rhs.sizes()[1]);
  for (int64_t b = 0; b < nb; b++) {
    int status = 0;
    if (n && k)
      sytrs(hermitian, n, k, elems<T>(LD) + b * n * n, ints(piv) + b * n, elems<T>(rhs) + b * n * k, &status);
  }
}
void ldl_solve_cpu(const Tensor& LD, const Tensor& piv, const Tensor& rhs, bool hermitian) {
  EMBER_LAPACK_TYPES(LD, ldl_solve_impl, LD, piv, rhs, hermitian);
}

template <typename T>
void geqrf_impl(const Tensor& C, const Tensor& tau) {
  int64_t nb = C.sizes()[0];
  int n = int(C.sizes()[1]), m = int(C.sizes()[2]), k = std::min(m, n);
  for (int64_t b = 0; b < nb; b++) {
    if (!m || !n) continue;
    int status = 0;
    T wq = 0;
    T* a = elems<T>(C) + b * n * m;
    geqrf(m, n, a, elems<T>(tau) + b * k, &wq, -1, &status);
    std::vector<T> work(static_cast<size_t>(work_size(wq)));
    geqrf(m, n, a, elems<T>(tau) + b * k, work.data(), work_size(wq), &status);
  }
}
void geqrf_cpu(const Tensor& C, const Tensor& tau) { EMBER_LAPACK_TYPES(C, geqrf_impl, C, tau); }

}  // namespace

// geev: real matrices through dgeev (as PyTorch, so real eigenvectors come out as LAPACK makes them:
// a conjugate pair's vectors are vr[:, j] +- i vr[:, j + 1]), complex ones through zgeev
void eig_cpu(const Tensor& A, const Tensor& W, const Tensor& V, bool compute_v) {
  const int64_t nb = A.sizes()[0];
  const int n = int(A.sizes()[1]);
  if (n == 0) return;
  const char jl = 'N', jr = compute_v ? 'V' : 'N';
  const int ldv = compute_v ? n : 1;
  zd* w = static_cast<zd*>(W.data_ptr());
  zd* v = compute_v ? static_cast<zd*>(V.data_ptr()) : nullptr;
  const bool real = A.dtype() == kDouble;
  const size_t nn = compute_v ? size_t(n) * size_t(n) : 1;
  std::vector<double> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), vr(nn), rwork(2 * static_cast<size_t>(n));
  std::vector<zd> zv(nn);
  for (int64_t b = 0; b < nb; b++) {
    int info = 0, lwork = -1;
    if (real) {
      double* a = doubles(A) + b * n * n;
      double q = 0;
      dgeev_(&jl, &jr, &n, a, &n, wr.data(), wi.data(), nullptr, &ldv, vr.data(), &ldv, &q, &lwork, &info);
      lwork = work_size(q);
      std::vector<double> work(static_cast<size_t>(lwork));
      dgeev_(&jl, &jr, &n, a, &n, wr.data(), wi.data(), nullptr, &ldv, vr.data(), &ldv, work.data(), &lwork, &info);
    } else {
      zd* a = static_cast<zd*>(A.data_ptr()) + b * n * n;
      zd q = 0;
      zgeev_(&jl, &jr, &n, a, &n, w + b * n, nullptr, &ldv, compute_v ? v + b * n * n : zv.data(), &ldv, &q, &lwork,
             rwork.data(), &info);
      lwork = work_size(q);
      std::vector<zd> work(static_cast<size_t>(lwork));
      zgeev_(&jl, &jr, &n, a, &n, w + b * n, nullptr, &ldv, compute_v ? v + b * n * n : zv.data(), &ldv,
             work.data(), &lwork, rwork.data(), &info);
    }
    EMBER_CHECK(info <= 0, "linalg.eig", batch_msg(b, nb), ": The algorithm failed to converge because the input "
                "matrix is ill-conditioned or has too many repeated eigenvalues (error code: ", info, ").");
    if (!real) continue;
    for (int j = 0; j < n; j++) w[b * n + j] = zd(wr[size_t(j)], wi[size_t(j)]);
    if (!compute_v) continue;
    zd* vb = v + b * n * n;  // column j of the column-major result is vb[j * n .. j * n + n)
    for (int j = 0; j < n; j++) {
      const double* c = vr.data() + size_t(j) * n;
      if (wi[size_t(j)] != 0 && j + 1 < n) {
        const double* c2 = c + n;
        for (int i = 0; i < n; i++) {
          vb[size_t(j) * n + i] = zd(c[i], c2[i]);
          vb[size_t(j + 1) * n + i] = zd(c[i], -c2[i]);
        }
        j++;
      } else {
        for (int i = 0; i < n; i++) vb[size_t(j) * n + i] = zd(c[i], 0.0);
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
