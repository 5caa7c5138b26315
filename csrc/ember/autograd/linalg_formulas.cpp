// Backward formulas of the LAPACK decompositions, written with differentiable ops for real and complex
// matrices alike (PyTorch's convention: the gradient of a real loss is dL/d conj(z), so transposes are
// conjugate transposes and a holomorphic op's derivative is conjugated). References: Murray 2016 (Cholesky), Walter & Lehmann 2018 (QR), the standard
// eigenvector/singular-vector perturbation results (Giles 2008; Townsend 2016).
#include <algorithm>

#include "ember/autograd/engine.h"
#include "ember/autograd/formulas.h"

namespace ember::autograd {

namespace {
Tensor diag_embed_last(const Tensor& v) {  // [..., n] -> [..., n, n]
  int64_t n = v.sizes().back();
  return v.unsqueeze(-1) * ember::eye(n, std::nullopt, TensorOptions(v.dtype()).device(v.device()));
}
Tensor diagonal_last(const Tensor& m) { return m.diagonal(0, -2, -1); }
Tensor eye_mask(int64_t n, Device device) { return ember::eye(n, std::nullopt, TensorOptions(kBool).device(device)); }
Tensor eye_like(const Tensor& m) {
  return ember::eye(m.sizes().back(), std::nullopt, TensorOptions(m.dtype()).device(m.device()));
}
}  // namespace

Tensor det_backward(const Tensor& grad, const Tensor& A, const Tensor& det) {
  Tensor g = (grad * det.conj_physical()).unsqueeze(-1).unsqueeze(-1);
  return g * ember::linalg_inv(A).mH();
}

std::tuple<Tensor, Tensor> solve_backward(const Tensor& grad, const Tensor& A, const Tensor& B, const Tensor& X,
                                          std::array<bool, 2> mask) {
  bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == IntArrayRef(A.sizes().data(), size_t(A.dim() - 1)));
  Tensor gB = ember::linalg_solve(A.mH(), grad);
  Tensor gA;
  if (mask[0]) {
    Tensor gBm = vector ? gB.unsqueeze(-1) : gB, Xm = vector ? X.unsqueeze(-1) : X;
    gA = -ember::matmul(gBm, Xm.mH());
  }
  return {gA, mask[1] ? gB : Tensor()};
}

Tensor cholesky_backward(const Tensor& grad, const Tensor& L_in, bool upper) {
  Tensor L = upper ? L_in.mH() : L_in;
  Tensor gL = upper ? grad.mH() : grad;
  // Phi(X): lower triangle with the diagonal halved
  Tensor P = ember::matmul(L.mH(), gL);
  P = P.tril(0) - diag_embed_last(diagonal_last(P)) * 0.5;
  Tensor Linv = ember::linalg_inv(L);
  Tensor gA = ember::matmul(ember::matmul(Linv.mH(), P), Linv);
  return (gA + gA.mH()) * 0.5;
}

Tensor qr_backward(const variable_list& grads, const Tensor& A, const Tensor& Q, const Tensor& R, std::string_view mode) {
  EMBER_CHECK(mode != "r", "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
              "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
  int64_t m = A.sizes()[A.dim() - 2], n = A.sizes().back();
  EMBER_CHECK_KIND(!(mode == "complete" && m > n), NotImplemented, "The QR decomposition is not differentiable when "
                   "mode='complete' and nrows > ncols.");
  EMBER_CHECK_KIND(m >= n, NotImplemented, "linalg.qr backward is only implemented for matrices with nrows >= ncols");
  Tensor gQ = grads[0].defined() ? grads[0] : ember::zeros_like(Q);
  Tensor gR = grads.size() > 1 && grads[1].defined() ? grads[1] : ember::zeros_like(R);
  // M = R gR^H - gQ^H Q; b = gQ + Q copyltu(M); gA = b R^-H, where copyltu mirrors M's strict lower
  // triangle (conjugated) above the diagonal and keeps the real part of the diagonal: R's diagonal is
  // real, so the imaginary part has no direction to move in
  Tensor M = ember::matmul(R, gR.mH()) - ember::matmul(gQ.mH(), Q);
  Tensor diag = diagonal_last(M);
  if (is_complex(diag.dtype())) diag = real_part(diag).to(M.dtype());
  Tensor copyltu = M.tril(-1) + M.tril(-1).mH() + diag_embed_last(diag);
  Tensor b = gQ + ember::matmul(Q, copyltu);
  return ember::linalg_solve(R, b.mH()).mH();
}

Tensor eigh_backward(const variable_list& grads, const Tensor& L, const Tensor& V) {
  const Tensor& gL = grads[0];
  Tensor inner;
  if (grads.size() > 1 && grads[1].defined()) {
    // F_ij = 1 / (L_j - L_i), zero on the diagonal (real: a complex quotient by inf would be NaN)
    Tensor E = L.unsqueeze(-2) - L.unsqueeze(-1);
    Tensor F = E.masked_fill(eye_mask(L.sizes().back(), L.device()), INFINITY).reciprocal();
    inner = ember::matmul(V.mH(), grads[1]) * F;
    if (gL.defined()) inner = inner + diag_embed_last(gL.to(V.dtype()));
  } else {
    inner = diag_embed_last(gL.to(V.dtype()));
  }
  return ember::matmul(ember::matmul(V, inner), V.mH());
}

// PyTorch's gradient of A = V diag(L) V^-1 (V's columns of unit norm, so V^H gV's real diagonal is
// projected out): gA = V^-H (diag(gL) + (V^H gV - V^H V Re diag(V^H gV)) / conj(E)) V^H, with
// E_ij = L_j - L_i off the diagonal; a real A gets the real part
Tensor linalg_eig_backward(const variable_list& grads, const Tensor& self, const Tensor& L, const Tensor& V) {
  const Tensor& gL = grads[0];
  const Tensor& gV = grads.size() > 1 ? grads[1] : Tensor();
  Tensor Vh = V.conj_physical().mT();
  Tensor inner;
  if (gV.defined()) {
    Tensor VhgV = ember::matmul(Vh, gV);
    Tensor re_diag = real_part(diagonal_last(VhgV)).to(V.dtype());
    VhgV = VhgV - ember::matmul(Vh, V * re_diag.unsqueeze(-2));
    Tensor Lc = L.conj_physical();
    Tensor E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1);
    Tensor diag = eye_mask(L.sizes().back(), L.device());
    E = ember::where(diag, ember::ones_like(E), E);
    inner = ember::where(diag, ember::zeros_like(E), VhgV / E);
    if (gL.defined()) inner = inner + diag_embed_last(gL.to(V.dtype()));
  } else {
    inner = diag_embed_last(gL.to(V.dtype()));
  }
  Tensor gA = ember::linalg_solve(Vh, ember::matmul(inner, Vh));
  return is_complex(self.dtype()) ? gA : real_part(gA).contiguous();
}

// A = U diag(S) Vh: with F_ij = 1 / (S_j^2 - S_i^2) (zero on the diagonal) and skew(X) = X - X^H,
// gA = U [skew(U^H gU) F S + S skew(V^H gV) F + diag(gS)] Vh, plus the parts of gU and gV outside the
// spans of U and V for non-square A. For complex A the singular vectors are defined up to a common
// phase per pair, so only Im diag(U^H gU) - Im diag(V^H gV) is seen: i (that) / (2 S) on the diagonal.
Tensor svd_backward(const variable_list& grads, const Tensor& U, const Tensor& S, const Tensor& Vh, bool full_matrices) {
  const Tensor& gU = grads[0];
  const Tensor& gS = grads.size() > 1 ? grads[1] : Tensor();
  const Tensor& gVh = grads.size() > 2 ? grads[2] : Tensor();
  int64_t m = U.sizes()[U.dim() - 2], n = Vh.sizes().back(), k = S.sizes().back();
  if (!gU.defined() && !gVh.defined()) {
    Tensor Uk = U.narrow(-1, 0, k), Vhk = Vh.narrow(-2, 0, k);
    return ember::matmul(Uk * gS.unsqueeze(-2), Vhk);
  }
  EMBER_CHECK_KIND(!full_matrices || (m == k && n == k), NotImplemented, "The derivative of linalg.svd with respect to "
                   "U or Vh is not well-defined when full_matrices=True; use full_matrices=False.");
  Tensor V = Vh.mH();
  Tensor gUv = gU.defined() ? gU : ember::zeros_like(U);
  Tensor gV = gVh.defined() ? gVh.mH() : ember::zeros_like(V);
  Tensor UhgU = ember::matmul(U.mH(), gUv), VhgV = ember::matmul(V.mH(), gV);
  Tensor skewU = UhgU - UhgU.mH(), skewV = VhgV - VhgV.mH();
  Tensor S2 = S * S;
  Tensor E = S2.unsqueeze(-2) - S2.unsqueeze(-1);
  Tensor F = E.masked_fill(eye_mask(k, S.device()), INFINITY).reciprocal();
  Tensor inner = (skewU * F) * S.unsqueeze(-2) + S.unsqueeze(-1) * (skewV * F);
  if (gS.defined()) inner = inner + diag_embed_last(gS.to(inner.dtype()));
  Tensor Sinv = ember::reciprocal(S);
  if (is_complex(U.dtype())) {
    Tensor phase = (imag_part(diagonal_last(UhgU)) - imag_part(diagonal_last(VhgV))) * Sinv * 0.5;
    inner = inner + diag_embed_last(ember::complex(ember::zeros_like(phase), phase));
  }
  Tensor gA = ember::matmul(ember::matmul(U, inner), Vh);
  if (m > k) {  // component of gU outside span(U)
    Tensor UUh = ember::matmul(U, U.mH());
    gA = gA + ember::matmul(ember::matmul(eye_like(UUh) - UUh, gUv) * Sinv.unsqueeze(-2), Vh);
  }
  if (n > k) {  // component of gV outside span(V)
    Tensor VVh = ember::matmul(V, V.mH());
    gA = gA + ember::matmul(U * Sinv.unsqueeze(-2), ember::matmul(eye_like(VVh) - VVh, gV).mH());
  }
  return gA;
}

namespace {

Tensor solve_tri(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit = false) {
  return ember::linalg_solve_triangular(A, B, upper, left, unit);
}

// A = P L U with dL, dU given through gL (m x k, strictly lower) and gU (k x n, upper). For the square
// part, L^-1 P^T dA U^-1 = L^-1 dL + dU U^-1 splits into a strictly lower and an upper triangle, so
// gA = P L^-T M U^-T with M = tril_-1(L^T gL) + triu(gU U^T); the rows of a tall L below the square
// block and the columns of a wide U right of it add their own terms.
Tensor lu_backward(const Tensor& gL_in, const Tensor& gU_in, const Tensor& P, const Tensor& L, const Tensor& U) {
  int64_t m = L.sizes()[L.dim() - 2], n = U.sizes().back(), k = L.sizes().back();
  Tensor gL = gL_in.defined() ? gL_in.tril(-1) : ember::zeros_like(L);
  Tensor gU = gU_in.defined() ? gU_in.triu(0) : ember::zeros_like(U);
  Tensor gA;
  if (m >= n) {  // L = [L1; L2], L1 k x k
    Tensor L1 = L.narrow(-2, 0, k), gL1 = gL.narrow(-2, 0, k);
    Tensor M = ember::matmul(L1.mH(), gL1).tril(-1) + ember::matmul(gU, U.mH()).triu(0);
    if (m > n) M = M - ember::matmul(L.narrow(-2, k, m - k).mH(), gL.narrow(-2, k, m - k)).triu(0);
    gA = solve_tri(U.mH(), solve_tri(L1.mH(), M, true, true, true), false, false);
    if (m > n) gA = ember::cat({gA, solve_tri(U.mH(), gL.narrow(-2, k, m - k), false, false)}, -2);
  } else {  // U = [U1 U2], U1 k x k
    Tensor U1 = U.narrow(-1, 0, k), U2 = U.narrow(-1, k, n - k);
    Tensor gU1 = gU.narrow(-1, 0, k), gU2 = gU.narrow(-1, k, n - k);
    Tensor M = ember::matmul(L.mH(), gL).tril(-1) - ember::matmul(gU2, U2.mH()).tril(-1) +
               ember::matmul(gU1, U1.mH()).triu(0);
    gA = solve_tri(L.mH(), ember::cat({solve_tri(U1.mH(), M, false, false), gU2}, -1), true, true, true);
  }
  return ember::matmul(P, gA);
}

}  // namespace

// LU packs L (strictly lower, m x k) and U (upper, k x n).
Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots) {
  int64_t m = LU.sizes()[LU.dim() - 2], n = LU.sizes().back(), k = std::min(m, n);
  auto [P, L, U] = ember::lu_unpack(LU, pivots);
  return lu_backward(grad.narrow(-1, 0, k), grad.narrow(-2, 0, k), P, L, U);
}

// X = op(A)^-1 B (left) or B op(A)^-1 with A = P L U and op the identity or the transpose: the usual
// gradients of a solve, then gA pulled back onto the packed factors (dA = P (dL U + L dU)).
std::tuple<Tensor, Tensor> lu_solve_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots,
                                             const Tensor& B, const Tensor& X, bool left, bool adjoint,
                                             std::array<bool, 2> mask) {
  Tensor gB = ember::linalg_lu_solve(LU, pivots, grad, left, !adjoint);
  Tensor gLU;
  if (mask[0]) {
    Tensor gA = left ? (adjoint ? -ember::matmul(X, gB.mH()) : -ember::matmul(gB, X.mH()))
                     : (adjoint ? -ember::matmul(gB.mH(), X) : -ember::matmul(X.mH(), gB));
    auto [P, L, U] = ember::lu_unpack(LU, pivots);
    Tensor PtgA = ember::matmul(P.mH(), gA);
    gLU = ember::matmul(PtgA, U.mH()).tril(-1) + ember::matmul(L.mH(), PtgA).triu(0);
    gLU = sum_to(gLU, LU.sizes());
  }
  return {gLU, mask[1] ? sum_to(gB, B.sizes()) : Tensor()};
}

// Only A's triangle (without its diagonal when unitriangular) is read, so only it gets a gradient.
std::tuple<Tensor, Tensor> solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& B,
                                                     const Tensor& X, bool upper, bool left, bool unitriangular,
                                                     std::array<bool, 2> mask) {
  Tensor gB = solve_tri(A.mH(), grad, !upper, left, unitriangular);
  Tensor gA;
  if (mask[0]) {
    gA = left ? -ember::matmul(gB, X.mH()) : -ember::matmul(X.mH(), gB);
    gA = upper ? gA.triu(unitriangular ? 1 : 0) : gA.tril(unitriangular ? -1 : 0);
    gA = sum_to(gA, A.sizes());
  }
  return {gA, mask[1] ? sum_to(gB, B.sizes()) : Tensor()};
}

// d log det A = tr(A^-1 dA) = d log|det A| + i d arg(det A): a real A's sign is piecewise constant; a
// complex A's sign s moves by ds = i s Im tr(A^-1 dA), so gA = (g_logabs - i Im(conj(g_s) s)) A^-H.
Tensor slogdet_backward(const variable_list& grads, const Tensor& A, const Tensor& sign) {
  const bool g_abs = grads.size() > 1 && grads[1].defined();
  const bool g_sign = is_complex(A.dtype()) && grads[0].defined();
  if (!g_abs && !g_sign) return ember::zeros_like(A);
  Tensor g = g_abs ? grads[1].to(A.dtype()) : ember::zeros_like(sign);
  if (g_sign) {
    Tensor im = imag_part(grads[0].conj_physical() * sign);
    g = g - ember::complex(ember::zeros_like(im), im);
  }
  return g.unsqueeze(-1).unsqueeze(-1) * ember::linalg_inv(A).mH();
}

// The Frechet derivative of exp at A in the direction E: the upper-right block of exp([[A, E], [0, A]])
// (Mathias 1996); its adjoint is the derivative at A^T.
Tensor matrix_exp_frechet(const Tensor& A, const Tensor& E) {
  int64_t n = A.sizes().back();
  if (A.numel() == 0) return ember::zeros_like(E);
  Tensor top = ember::cat({A, E}, -1), bottom = ember::cat({ember::zeros_like(A), A}, -1);  // E: A's shape
  Tensor M = ember::matrix_exp(ember::cat({top, bottom}, -2));
  return M.narrow(-2, 0, n).narrow(-1, n, n);
}

Tensor matrix_exp_backward(const Tensor& self, const Tensor& grad) { return matrix_exp_frechet(self.mH(), grad); }

// dX = -A^-1 dA X (X A^-1 dA ... from the right), dA restricted to the triangle that is read
Tensor solve_triangular_jvp_A(const Tensor& A, const Tensor& A_t, const Tensor& X, bool upper, bool left,
                              bool unitriangular) {
  Tensor dA = upper ? A_t.triu(unitriangular ? 1 : 0) : A_t.tril(unitriangular ? -1 : 0);
  return -solve_tri(A, left ? ember::matmul(dA, X) : ember::matmul(X, dA), upper, left, unitriangular);
}

}  // namespace ember::autograd
