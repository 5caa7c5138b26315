// Fused LSTM / GRU cell pointwise ops (the per-time-step part of nn.LSTM / nn.GRU) and their backward.
#include "ember/autograd/formulas.h"
#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/kernels/kernels.h"

namespace ember {

namespace {
// the dtype the kernels compute in (float for half / bfloat16)
ScalarType cell_dtype(const char* op, const Tensor& a) {
  EMBER_CHECK_KIND(is_floating(a.dtype()), NotImplemented, "\"", op, "\" not implemented for '", a.dtype(), "'");
  return is_reduced_float(a.dtype()) ? kFloat : a.dtype();
}

void check_cell(const char* op, const Tensor& gates, int64_t chunks, std::initializer_list<const Tensor*> states,
                std::initializer_list<const Tensor*> same_gates = {}) {
  EMBER_CHECK(gates.dim() == 2 && gates.sizes()[1] % chunks == 0, op, ": expected gates of shape (batch, ", chunks,
              " * hidden_size), got ", gates.sizes());
  int64_t b = gates.sizes()[0], h = gates.sizes()[1] / chunks;
  for (const Tensor* s : states)
    EMBER_CHECK(s->dim() == 2 && s->sizes()[0] == b && s->sizes()[1] == h, op, ": expected a state of shape [", b,
                ", ", h, "], got ", s->sizes());
  for (const Tensor* g : same_gates)
    EMBER_CHECK(g->sizes() == gates.sizes(), op, ": gate inputs differ in shape: ", gates.sizes(), " vs ",
                g->sizes());
  for (const Tensor* s : states)
    EMBER_CHECK(s->dtype() == gates.dtype(), op, ": expected all inputs to have dtype ", gates.dtype(), ", got ",
                s->dtype());
}

Tensor prep(const Tensor& t, ScalarType cd) { return t.defined() ? t.to(cd).contiguous() : t; }
const void* ptr(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }
Tensor back_to(const Tensor& t, ScalarType dt) { return t.defined() ? t.to(dt) : t; }
}  // namespace

namespace native {

std::tuple<Tensor, Tensor> _lstm_cell(const Tensor& gates, const Tensor& cx) {
  check_cell("_lstm_cell", gates, 4, {&cx});
  ScalarType dt = gates.dtype(), cd = cell_dtype("_lstm_cell", gates);
  Tensor g = prep(gates, cd), c = prep(cx, cd);
  int64_t rows = g.sizes()[0], h = g.sizes()[1] / 4;
  Tensor hy = empty_tensor({rows, h}, cd), cy = empty_tensor({rows, h}, cd);
  if (rows && h) EMBER_KERNEL(lstm_cell_kernel)(cd, g.data_ptr(), c.data_ptr(), hy.data_ptr(), cy.data_ptr(), rows, h);
  return {hy.to(dt), cy.to(dt)};
}

Tensor _gru_cell(const Tensor& gi, const Tensor& gh, const Tensor& hx) {
  check_cell("_gru_cell", gi, 3, {&hx}, {&gh});
  EMBER_CHECK(gh.dtype() == gi.dtype(), "_gru_cell: expected all inputs to have dtype ", gi.dtype());
  ScalarType dt = gi.dtype(), cd = cell_dtype("_gru_cell", gi);
  Tensor a = prep(gi, cd), b = prep(gh, cd), h0 = prep(hx, cd);
  int64_t rows = a.sizes()[0], h = a.sizes()[1] / 3;
  Tensor hy = empty_tensor({rows, h}, cd);
  if (rows && h) EMBER_KERNEL(gru_cell_kernel)(cd, a.data_ptr(), b.data_ptr(), h0.data_ptr(), hy.data_ptr(), rows, h);
  return hy.to(dt);
}

}  // namespace native

namespace autograd {

// With create_graph the backward is written with differentiable ops (double backward works);
// otherwise one fused kernel.
std::tuple<Tensor, Tensor> lstm_cell_backward(const Tensor& dhy, const Tensor& dcy, const Tensor& gates,
                                              const Tensor& cx, const Tensor& cy, std::array<bool, 2> mask) {
  if (!dhy.defined() && !dcy.defined()) return {};
  if (grad_enabled()) {
    auto ch = ember::chunk(gates, 4, 1);
    Tensor i = ch[0].sigmoid(), f = ch[1].sigmoid(), g = ch[2].tanh(), o = ch[3].sigmoid();
    Tensor tc = cy.tanh();
    Tensor dc = dhy.defined() ? dhy * o * (-(tc * tc) + 1) : ember::zeros_like(cy);
    if (dcy.defined()) dc = dc + dcy;
    Tensor d_o = dhy.defined() ? dhy * tc * o * (-o + 1) : ember::zeros_like(cy);
    Tensor dgates = ember::cat({dc * g * i * (-i + 1), dc * cx * f * (-f + 1), dc * i * (-(g * g) + 1), d_o}, 1);
    return {mask[0] ? dgates : Tensor(), mask[1] ? dc * f : Tensor()};
  }
  ScalarType dt = gates.dtype(), cd = is_reduced_float(dt) ? kFloat : dt;
  Tensor g = prep(gates, cd), c0 = prep(cx, cd), c1 = prep(cy, cd), dh = prep(dhy, cd), dc = prep(dcy, cd);
  int64_t rows = g.sizes()[0], h = g.sizes()[1] / 4;
  Tensor dgates = empty_tensor(g.sizes(), cd);
  Tensor dcx = mask[1] ? empty_tensor({rows, h}, cd) : Tensor();
  if (rows && h)
    EMBER_KERNEL(lstm_cell_backward_kernel)(cd, ptr(dh), ptr(dc), g.data_ptr(), c0.data_ptr(), c1.data_ptr(),
                                            dgates.data_ptr(), dcx.defined() ? dcx.data_ptr() : nullptr, rows, h);
  return {mask[0] ? dgates.to(dt) : Tensor(), back_to(dcx, dt)};
}

std::tuple<Tensor, Tensor, Tensor> gru_cell_backward(const Tensor& dhy, const Tensor& gi, const Tensor& gh,
                                                     const Tensor& hx, std::array<bool, 3> mask) {
  if (!dhy.defined()) return {};
  if (grad_enabled()) {
    auto a = ember::chunk(gi, 3, 1);
    auto b = ember::chunk(gh, 3, 1);
    Tensor r = (a[0] + b[0]).sigmoid(), z = (a[1] + b[1]).sigmoid(), n = (a[2] + r * b[2]).tanh();
    Tensor dn = dhy * (-z + 1) * (-(n * n) + 1);
    Tensor dz = dhy * (hx - n) * z * (-z + 1);
    Tensor dr = dn * b[2] * r * (-r + 1);
    return {mask[0] ? ember::cat({dr, dz, dn}, 1) : Tensor(), mask[1] ? ember::cat({dr, dz, dn * r}, 1) : Tensor(),
            mask[2] ? dhy * z : Tensor()};
  }
  ScalarType dt = gi.dtype(), cd = is_reduced_float(dt) ? kFloat : dt;
  Tensor a = prep(gi, cd), b = prep(gh, cd), h0 = prep(hx, cd), d = prep(dhy, cd);
  int64_t rows = a.sizes()[0], h = a.sizes()[1] / 3;
  Tensor dgi = empty_tensor(a.sizes(), cd), dgh = empty_tensor(a.sizes(), cd);
  Tensor dhx = mask[2] ? empty_tensor({rows, h}, cd) : Tensor();
  if (rows && h)
    EMBER_KERNEL(gru_cell_backward_kernel)(cd, d.data_ptr(), a.data_ptr(), b.data_ptr(), h0.data_ptr(),
                                           dgi.data_ptr(), dgh.data_ptr(), dhx.defined() ? dhx.data_ptr() : nullptr,
                                           rows, h);
  return {mask[0] ? dgi.to(dt) : Tensor(), mask[1] ? dgh.to(dt) : Tensor(), back_to(dhx, dt)};
}

}  // namespace autograd
}  // namespace ember
