#pragma once
// torch.linalg's decompositions on batches of column-major matrices ([batch, cols, rows] row-major)
// of double or complex128 (the work dtype: every real input is factorised in double, every complex
// one in complex128), in place; real outputs (eigenvalues, singular values, det of a real matrix) are double. The ops (ops/linalg_lapack.cpp) check arguments and convert to
// and from that layout; the CPU's entries call LAPACK (kernels/cpu/linalg.cpp). Failures (singular,
// not positive-definite, no convergence) raise naming the op and the batch element.
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// det [batch] = the determinant of each a [batch, n, n] (overwritten by its LU factors).
EMBER_DECLARE_STUB(linalg_det_stub, void, (const Tensor& det, const Tensor& a))
// a [batch, n, n] x = rhs [batch, k, n]: a is overwritten by its LU factors, rhs by x.
EMBER_DECLARE_STUB(linalg_solve_stub, void, (const Tensor& a, const Tensor& rhs))
// Householder QR of each a [batch, n, m] (m rows): r [batch, n, rrows] (zeros on entry) gets the
// upper triangle; with compute_q, the first q_cols columns of q [batch, >= q_cols, m] get Q.
EMBER_DECLARE_STUB(linalg_qr_stub, void, (const Tensor& a, const Tensor& q, const Tensor& r, int64_t q_cols, bool compute_q))
// Eigenvalues w [batch, n] (double, ascending) of each symmetric (Hermitian) a [batch, n, n] read from
// its lower or upper triangle; a is overwritten by the eigenvectors (columns).
EMBER_DECLARE_STUB(linalg_eigh_stub, void, (const Tensor& a, const Tensor& w, bool lower))
// SVD of each a [batch, n, m] (m rows, destroyed): u [batch, u_cols, m], s [batch, min(m, n)] (double),
// vt [batch, n, vt_rows]; full_matrices picks u_cols = m and vt_rows = n, else min(m, n).
EMBER_DECLARE_STUB(linalg_svd_stub, void, (const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vt, bool full_matrices))
// LU with partial pivoting of each a [batch, n, m] (m rows), in place (L below the unit diagonal, U on
// and above it); piv [batch, min(m, n)] and info [batch] (int32) get LAPACK's 1-based pivots and info.
EMBER_DECLARE_STUB(linalg_lu_factor_stub, void, (const Tensor& a, const Tensor& piv, const Tensor& info))
// Solves op(A) x = rhs from LU factors lu [batch, n, n] and piv [batch, n], op by LAPACK's trans: 'N'
// (A), 'T' (A^T) or 'C' (A^H); rhs [batch, k, n] becomes x.
EMBER_DECLARE_STUB(linalg_lu_solve_stub, void, (const Tensor& lu, const Tensor& piv, const Tensor& rhs, char trans))
// Solves op(A) x = rhs for triangular a [batch, n, n] (only its upper or lower triangle is read; unit:
// the diagonal is taken as ones); rhs [batch, k, n] becomes x. A zero pivot gives inf/nan, no error.
EMBER_DECLARE_STUB(linalg_triangular_solve_stub, void,
                   (const Tensor& a, const Tensor& rhs, bool upper, bool trans, bool unit))
// The Cholesky factor of each a [batch, n, n] from its lower triangle, in place; info [batch] (int32)
// gets potrf's info (0, or the order of the first minor that is not positive-definite).
EMBER_DECLARE_STUB(linalg_cholesky_info_stub, void, (const Tensor& a, const Tensor& info))
// Bunch-Kaufman L D L^T (L D L^H for a complex hermitian a) of each a [batch, n, n] from its lower
// triangle, in place, with sytrf's (hetrf's) pivots piv [batch, n] and info [batch] (int32).
EMBER_DECLARE_STUB(linalg_ldl_factor_stub, void, (const Tensor& a, const Tensor& piv, const Tensor& info, bool hermitian))
// Solves A x = rhs from ldl factors ld [batch, n, n] and piv [batch, n]; rhs [batch, k, n] becomes x.
EMBER_DECLARE_STUB(linalg_ldl_solve_stub, void, (const Tensor& ld, const Tensor& piv, const Tensor& rhs, bool hermitian))
// Eigen-decomposition of each general a [batch, n, n] (double or complex128, destroyed): eigenvalues
// w [batch, n] and, with compute_v, the unit-norm right eigenvectors v [batch, n, n] (columns), both
// complex128. Raises if the QR algorithm does not converge.
EMBER_DECLARE_STUB(linalg_eig_stub, void, (const Tensor& a, const Tensor& w, const Tensor& v, bool compute_v))
// Householder QR of each a [batch, n, m] (m rows) in LAPACK's compact form, in place; tau [batch, min(m, n)].
EMBER_DECLARE_STUB(linalg_geqrf_stub, void, (const Tensor& a, const Tensor& tau))
