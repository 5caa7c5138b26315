// Backward formulas of the LAPACK decompositions (real matrices), written with differentiable
// ops. References: Murray 2016 (Cholesky), Walter & Lehmann 2018 (QR), the standard
// eigenvector/singular-vector perturbation results (Giles 2008; Townsend 2016).
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
  Tensor g = (grad * det).unsqueeze(-1).unsqueeze(-1);
  return g * ember::linalg_inv(A).mT();
}

std::tuple<Tensor, Tensor> solve_backward(const Tensor& grad, const Tensor& A, const Tensor& B, const Tensor& X,
                                          std::array<bool, 2> mask) {
  bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && B.sizes() == IntArrayRef(A.sizes().data(), size_t(A.dim() - 1)));
  Tensor gB = ember::linalg_solve(A.mT(), grad);
  Tensor gA;
  if (mask[0]) {
    Tensor gBm = vector ? gB.unsqueeze(-1) : gB, Xm = vector ? X.unsqueeze(-1) : X;
    gA = -ember::matmul(gBm, Xm.mT());
  }
  return {gA, mask[1] ? gB : Tensor()};
}

Tensor cholesky_backward(const Tensor& grad, const Tensor& L_in, bool upper) {
  Tensor L = upper ? L_in.mT() : L_in;
  Tensor gL = upper ? grad.mT() : grad;
  // Phi(X): lower triangle with the diagonal halved
  Tensor P = ember::matmul(L.mT(), gL);
  P = P.tril(0) - diag_embed_last(diagonal_last(P)) * 0.5;
  Tensor Linv = ember::linalg_inv(L);
  Tensor gA = ember::matmul(ember::matmul(Linv.mT(), P), Linv);
  return (gA + gA.mT()) * 0.5;
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
  // M = R gR^T - gQ^T Q; b = gQ + Q copyltu(M); gA = b R^{-T}
  Tensor M = ember::matmul(R, gR.mT()) - ember::matmul(gQ.mT(), Q);
  Tensor copyltu = M.tril(-1) + M.tril(-1).mT() + diag_embed_last(diagonal_last(M));
  Tensor b = gQ + ember::matmul(Q, copyltu);
  return ember::linalg_solve(R, b.mT()).mT();
}

Tensor eigh_backward(const variable_list& grads, const Tensor& L, const Tensor& V) {
  const Tensor& gL = grads[0];
  Tensor inner;
  if (grads.size() > 1 && grads[1].defined()) {
    // E_ij = L_j - L_i, with +inf on the diagonal so those quotients vanish
    Tensor E = L.unsqueeze(-2) - L.unsqueeze(-1);
    E = E.masked_fill(eye_mask(L.sizes().back(), L.device()), INFINITY);
    inner = ember::matmul(V.mT(), grads[1]) / E;
    if (gL.defined()) inner = inner + diag_embed_last(gL);
  } else {
    inner = diag_embed_last(gL);
  }
  return ember::matmul(ember::matmul(V, inner), V.mT());
}

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
  Tensor gUv = gU.defined() ? gU : ember::zeros_like(U);
  Tensor gV = gVh.defined() ? gVh.mT() : ember::zeros_like(Vh.mT());
  Tensor V = Vh.mT();
  Tensor skewU = ember::matmul(U.mT(), gUv);
  skewU = skewU - skewU.mT();
  Tensor skewV = ember::matmul(V.mT(), gV);
  skewV = skewV - skewV.mT();
  Tensor S2 = S * S;
  Tensor E = S2.unsqueeze(-2) - S2.unsqueeze(-1);
  E = E.masked_fill(eye_mask(S.sizes().back(), S.device()), INFINITY);  // F = 1/E with zeros on the diagonal
  Tensor inner = (skewU / E) * S.unsqueeze(-2) + S.unsqueeze(-1) * (skewV / E);
  if (gS.defined()) inner = inner + diag_embed_last(gS);
  Tensor gA = ember::matmul(ember::matmul(U, inner), Vh);
  Tensor Sinv = ember::reciprocal(S);
  if (m > k) {  // component of gU outside span(U)
    Tensor proj = eye_like(ember::matmul(U, U.mT())) - ember::matmul(U, U.mT());
    gA = gA + ember::matmul(ember::matmul(proj, gUv) * Sinv.unsqueeze(-2), Vh);
  }
  if (n > k) {  // component of gV outside span(V)
    Tensor proj = eye_like(ember::matmul(V, V.mT())) - ember::matmul(V, V.mT());
    gA = gA + ember::matmul(U * Sinv.unsqueeze(-2), ember::matmul(proj, gV).mT());
  }
  return gA;
}

}  // namespace ember::autograd
