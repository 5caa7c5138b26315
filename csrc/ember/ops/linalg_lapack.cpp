// torch.linalg decompositions: argument checks and shapes here; every batch matrix is copied to
// column-major double precision, factorized by the linalg stubs (kernels/linalg.h; LAPACK on the
// CPU, kernels/cpu/linalg.cpp), and copied back.
#include <algorithm>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/linalg.h"

EMBER_DEFINE_STUB(linalg_det_stub)
EMBER_DEFINE_STUB(linalg_solve_stub)
EMBER_DEFINE_STUB(linalg_cholesky_stub)
EMBER_DEFINE_STUB(linalg_qr_stub)
EMBER_DEFINE_STUB(linalg_eigh_stub)
EMBER_DEFINE_STUB(linalg_svd_stub)

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
  Tensor c = empty_tensor(t.sizes(), kDouble, A.device());
  if (c.numel()) c.copy_(t);
  return c;
}
Tensor from_colmajor(const Tensor& C, ScalarType dt) { return C.mT().to(dt).contiguous(); }

DimVector batch_shape(const Tensor& A) { return DimVector(IntArrayRef(A.sizes().data(), size_t(A.dim() - 2))); }

}  // namespace

Tensor linalg_det(const Tensor& A) {
  check_matrix(A, "linalg.det", true);
  auto kernel = linalg_det_stub(A.device(), "linalg.det");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n});
  Tensor out = empty_tensor({nb}, kDouble, A.device());
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

Tensor linalg_inv(const Tensor& A) {
  check_matrix(A, "linalg.inv", true);
  int64_t n = A.sizes().back();
  try {
    return native::linalg_solve(A, ember::eye(n, std::nullopt, TensorOptions(A.dtype()).device(A.device())).expand(A.sizes()));
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
  auto kernel = linalg_cholesky_stub(A.device(), "linalg.cholesky");
  int64_t n = A.sizes().back();
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, n}).contiguous();
  kernel(C);
  Tensor L = from_colmajor(C.reshape(A.sizes()), A.dtype()).tril(0);
  return upper ? L.mT().contiguous() : L;
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
  Tensor Q = empty_tensor({nb, std::max(qcols, n), m}, kDouble, A.device());  // column-major work space
  Tensor R = ember::zeros({nb, n, rrows}, TensorOptions(kDouble).device(A.device()));
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
  return {W.reshape(ws).to(A.dtype()), V};
}

std::tuple<Tensor, Tensor, Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  check_matrix(A, "linalg.svd", false);
  auto kernel = linalg_svd_stub(A.device(), "linalg.svd");
  int m = int(A.sizes()[A.dim() - 2]), n = int(A.sizes().back()), k = std::min(m, n);
  int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  int64_t nb = batch_count(A);
  Tensor C = to_colmajor(A).reshape({nb, n, m}).contiguous();
  Tensor U = empty_tensor({nb, ucols, m}, kDouble, A.device()), S = empty_tensor({nb, k}, kDouble, A.device()),
         VT = empty_tensor({nb, n, vrows}, kDouble, A.device());
  kernel(C, U, S, VT, full_matrices);
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
