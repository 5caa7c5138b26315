#pragma once
// torch.linalg's decompositions on batches of column-major double matrices ([batch, cols, rows]
// row-major), factorised in place. The ops (ops/linalg_lapack.cpp) check arguments and convert to
// and from that layout; the CPU's entries call LAPACK (kernels/cpu/linalg.cpp). Failures (singular,
// not positive-definite, no convergence) raise naming the op and the batch element.
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// det [batch] = the determinant of each a [batch, n, n] (overwritten by its LU factors).
EMBER_DECLARE_STUB(linalg_det_stub, void, (const Tensor& det, const Tensor& a))
// a [batch, n, n] x = rhs [batch, k, n]: a is overwritten by its LU factors, rhs by x.
EMBER_DECLARE_STUB(linalg_solve_stub, void, (const Tensor& a, const Tensor& rhs))
// The Cholesky factor of each a [batch, n, n] from its lower triangle, in place (the upper triangle
// keeps what a had).
EMBER_DECLARE_STUB(linalg_cholesky_stub, void, (const Tensor& a))
// Householder QR of each a [batch, n, m] (m rows): r [batch, n, rrows] (zeros on entry) gets the
// upper triangle; with compute_q, the first q_cols columns of q [batch, >= q_cols, m] get Q.
EMBER_DECLARE_STUB(linalg_qr_stub, void, (const Tensor& a, const Tensor& q, const Tensor& r, int64_t q_cols, bool compute_q))
// Eigenvalues w [batch, n] (ascending) of each symmetric a [batch, n, n] read from its lower or
// upper triangle; a is overwritten by the eigenvectors (columns).
EMBER_DECLARE_STUB(linalg_eigh_stub, void, (const Tensor& a, const Tensor& w, bool lower))
// SVD of each a [batch, n, m] (m rows, destroyed): u [batch, u_cols, m], s [batch, min(m, n)],
// vt [batch, n, vt_rows]; full_matrices picks u_cols = m and vt_rows = n, else min(m, n).
EMBER_DECLARE_STUB(linalg_svd_stub, void, (const Tensor& a, const Tensor& u, const Tensor& s, const Tensor& vt, bool full_matrices))
