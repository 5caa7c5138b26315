// Fused LSTM / GRU cell pointwise ops (the per-time-step part of nn.LSTM / nn.GRU), the whole-layer LSTM,
// their backward ops and their autograd formulas. The fused kernels (kernels/kernels.h) take raw
// pointers to the contiguous buffers each op has allocated on the input's device.
#include "ember/autograd/formulas.h"
#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/kernels.h"
#include "ember/ops/gemm.h"

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
  for (const Tensor* t : states) check_same_device(op, gates.device(), {t});
  for (const Tensor* t : same_gates) check_same_device(op, gates.device(), {t});
}

Tensor prep(const Tensor& t, ScalarType cd) { return t.defined() ? t.to(cd).contiguous() : t; }
const void* ptr(const Tensor& t) { return t.defined() ? t.kernel_data() : nullptr; }
void* mut_ptr(const Tensor& t) { return t.defined() ? t.kernel_data() : nullptr; }
Tensor back_to(const Tensor& t, ScalarType dt) { return t.defined() ? t.to(dt) : t; }

// _lstm_seq: xw [T, B, 4H], h0 / c0 [B, H], w_hh [4H, H], same floating dtype
void check_lstm_seq(const Tensor& xw, const Tensor& h0, const Tensor& c0, const Tensor& w_hh) {
  EMBER_CHECK(xw.dim() == 3 && xw.sizes()[2] % 4 == 0, "_lstm_seq: expected xw of shape (seq, batch, 4 * hidden_size), "
              "got ", xw.sizes());
  int64_t b = xw.sizes()[1], h = xw.sizes()[2] / 4;
  for (const Tensor* s : {&h0, &c0})
    EMBER_CHECK(s->dim() == 2 && s->sizes()[0] == b && s->sizes()[1] == h, "_lstm_seq: expected a state of shape [", b,
                ", ", h, "], got ", s->sizes());
  EMBER_CHECK(w_hh.dim() == 2 && w_hh.sizes()[0] == 4 * h && w_hh.sizes()[1] == h, "_lstm_seq: expected w_hh of shape [",
              4 * h, ", ", h, "], got ", w_hh.sizes());
  for (const Tensor* s : {&h0, &c0, &w_hh})
    EMBER_CHECK(s->dtype() == xw.dtype(), "_lstm_seq: expected all inputs to have dtype ", xw.dtype(), ", got ",
                s->dtype());
  check_same_device("_lstm_seq", xw.device(), {&h0, &c0, &w_hh});
}

// time index of processing step s (reverse layers run from the last time step down)
int64_t seq_t(int64_t s, int64_t T, bool reverse) { return reverse ? T - 1 - s : s; }
}  // namespace

namespace native {

std::tuple<Tensor, Tensor> _lstm_cell(const Tensor& gates, const Tensor& cx) {
  check_cell("_lstm_cell", gates, 4, {&cx});
  ScalarType dt = gates.dtype(), cd = cell_dtype("_lstm_cell", gates);
  const Device dev = gates.device();
  auto kernel = lstm_cell_kernel_stub(dev, "lstm_cell");
  Tensor g = prep(gates, cd), c = prep(cx, cd);
  int64_t rows = g.sizes()[0], h = g.sizes()[1] / 4;
  Tensor hy = empty_tensor({rows, h}, cd, dev), cy = empty_tensor({rows, h}, cd, dev);
  if (rows && h) kernel(cd, g.kernel_data(), c.kernel_data(), hy.kernel_data(), cy.kernel_data(), rows, h);
  return {hy.to(dt), cy.to(dt)};
}

// A whole LSTM layer direction in one op: per step gates_t = xw_t + h_{t-1} W_hh^T and the cell, no per-step
// dispatch or autograd nodes. Returns h and c of every step and the gate activations (sigmoid i, f, o,
// tanh g), which the backward reads instead of recomputing.
std::tuple<Tensor, Tensor, Tensor> _lstm_seq(const Tensor& xw, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                             bool reverse) {
  check_lstm_seq(xw, h0, c0, w_hh);
  ScalarType dt = xw.dtype(), cd = cell_dtype("_lstm_seq", xw);
  if (cd != dt) {
    auto [hs, cs, a] = native::_lstm_seq(xw.to(cd), h0.to(cd), c0.to(cd), w_hh.to(cd), reverse);
    return {hs.to(dt), cs.to(dt), a.to(dt)};
  }
  int64_t T = xw.sizes()[0], B = xw.sizes()[1], H = xw.sizes()[2] / 4;
  const Device dev = xw.device();
  auto kernel = lstm_seq_kernel_stub(dev, "lstm");
  Tensor acts = empty_tensor(xw.sizes(), cd, dev), hs = empty_tensor({T, B, H}, cd, dev),
         cs = empty_tensor({T, B, H}, cd, dev);
  if (T == 0 || B == 0 || H == 0) return {hs, cs, acts};
  Tensor gates = empty_tensor(xw.sizes(), cd, dev);  // scratch: the step GEMMs accumulate into a copy of xw
  gates.copy_(xw);
  // a contiguous W_hh^T: GEMMs with a transposed B run at about half speed at these sizes
  Tensor w_t = w_hh.t().contiguous(), h = h0.contiguous(), c = c0.contiguous();
  kernel(cd, gates.kernel_data(), w_t.kernel_data(), h.kernel_data(), c.kernel_data(), acts.kernel_data(), hs.kernel_data(),
         cs.kernel_data(), T, B, H, reverse);
  return {hs, cs, acts};
}

Tensor _gru_cell(const Tensor& gi, const Tensor& gh, const Tensor& hx) {
  check_cell("_gru_cell", gi, 3, {&hx}, {&gh});
  EMBER_CHECK(gh.dtype() == gi.dtype(), "_gru_cell: expected all inputs to have dtype ", gi.dtype());
  ScalarType dt = gi.dtype(), cd = cell_dtype("_gru_cell", gi);
  const Device dev = gi.device();
  auto kernel = gru_cell_kernel_stub(dev, "gru_cell");
  Tensor a = prep(gi, cd), b = prep(gh, cd), h0 = prep(hx, cd);
  int64_t rows = a.sizes()[0], h = a.sizes()[1] / 3;
  Tensor hy = empty_tensor({rows, h}, cd, dev);
  if (rows && h) kernel(cd, a.kernel_data(), b.kernel_data(), h0.kernel_data(), hy.kernel_data(), rows, h);
  return hy.to(dt);
}

// The backward ops run the fused kernels; the autograd formulas below call them unless recording.
std::tuple<Tensor, Tensor> _lstm_cell_backward(const Tensor& dhy, const Tensor& dcy, const Tensor& gates,
                                               const Tensor& cx, const Tensor& cy, bool grad_cx) {
  const char* op = "_lstm_cell_backward";
  check_cell(op, gates, 4, {&cx, &cy});
  for (const Tensor* d : {&dhy, &dcy})
    EMBER_CHECK(!d->defined() || d->sizes() == cx.sizes(), op, ": expected state gradients of shape ", cx.sizes(),
                ", got ", d->sizes());
  check_same_device(op, gates.device(), {&dhy, &dcy});
  ScalarType dt = gates.dtype(), cd = cell_dtype(op, gates);
  const Device dev = gates.device();
  auto kernel = lstm_cell_backward_kernel_stub(dev, "lstm_cell_backward");
  Tensor g = prep(gates, cd), c0 = prep(cx, cd), c1 = prep(cy, cd), dh = prep(dhy, cd), dc = prep(dcy, cd);
  int64_t rows = g.sizes()[0], h = g.sizes()[1] / 4;
  Tensor dgates = empty_tensor(g.sizes(), cd, dev);
  Tensor dcx = grad_cx ? empty_tensor({rows, h}, cd, dev) : Tensor();
  if (rows && h)
    kernel(cd, ptr(dh), ptr(dc), g.kernel_data(), c0.kernel_data(), c1.kernel_data(), dgates.kernel_data(), mut_ptr(dcx), rows, h);
  return {dgates.to(dt), back_to(dcx, dt)};
}

// Backward of _lstm_seq in float32 / float64: back through time computing d gates per step (fused
// kernel, dh_{t-1} = dgates_t W_hh), then d W_hh = sum_t dgates_t^T h_{t-1} as two GEMMs over all steps.
std::tuple<Tensor, Tensor, Tensor, Tensor> _lstm_seq_backward(const Tensor& dhs, const Tensor& dcs,
                                                              const Tensor& dacts, const Tensor& h0,
                                                              const Tensor& c0, const Tensor& w_hh, const Tensor& hs,
                                                              const Tensor& cs, const Tensor& acts, bool reverse,
                                                              bool grad_w_hh) {
  const char* op = "_lstm_seq_backward";
  check_lstm_seq(acts, h0, c0, w_hh);
  int64_t T = acts.sizes()[0], B = acts.sizes()[1], H = acts.sizes()[2] / 4;
  const int64_t state_shape[] = {T, B, H};
  for (const Tensor* t : {&hs, &cs, &dhs, &dcs})
    EMBER_CHECK(!t->defined() || t->sizes() == IntArrayRef(state_shape, 3), op, ": expected per-step states of shape [",
                T, ", ", B, ", ", H, "], got ", t->sizes());
  EMBER_CHECK(!dacts.defined() || dacts.sizes() == acts.sizes(), op, ": expected dacts of shape ", acts.sizes(),
              ", got ", dacts.sizes());
  EMBER_CHECK(acts.dtype() == kFloat || acts.dtype() == kDouble, op, ": expected float32 or float64, got ",
              acts.dtype());
  const Device dev = acts.device();
  check_same_device(op, dev, {&dhs, &dcs, &dacts, &hs, &cs});
  auto kernel = lstm_seq_backward_kernel_stub(dev, "lstm_backward");
  ScalarType cd = acts.dtype();
  Tensor dhs_c = prep(dhs, cd), dcs_c = prep(dcs, cd), da_in = prep(dacts, cd), c0c = c0.contiguous();
  Tensor dxw = empty_tensor(acts.sizes(), cd, dev), dh = empty_tensor({B, H}, cd, dev),
         dc = empty_tensor({B, H}, cd, dev);
  dh.zero_();
  dc.zero_();
  if (T && B && H)
    kernel(cd, ptr(dhs_c), ptr(dcs_c), ptr(da_in), acts.contiguous().kernel_data(), w_hh.contiguous().kernel_data(),
           c0c.kernel_data(), cs.contiguous().kernel_data(), dxw.kernel_data(), dh.kernel_data(), dc.kernel_data(), T, B, H, reverse);
  else
    dxw.zero_();
  Tensor dw;
  if (grad_w_hh) {
    // d W_hh = dG^T Hprev: the steps whose h_{t-1} is in hs, then the first step's h0
    dw = empty_tensor(w_hh.sizes(), cd, dev);
    if (T == 0) return {dxw, dh, dc, dw.zero_()};
    int64_t t0 = seq_t(0, T, reverse), lo = reverse ? 0 : 1;
    native::gemm_into(dxw.select(0, t0).t(), h0, dw, 1.0, 0.0);
    if (T > 1)
      native::gemm_into(dxw.narrow(0, lo, T - 1).reshape({(T - 1) * B, 4 * H}).t(),
                        hs.narrow(0, 1 - lo, T - 1).reshape({(T - 1) * B, H}), dw, 1.0, 1.0);
  }
  return {dxw, dh, dc, dw};
}

std::tuple<Tensor, Tensor, Tensor> _gru_cell_backward(const Tensor& dhy, const Tensor& gi, const Tensor& gh,
                                                      const Tensor& hx, bool grad_hx) {
  const char* op = "_gru_cell_backward";
  check_cell(op, gi, 3, {&hx}, {&gh});
  EMBER_CHECK(dhy.sizes() == hx.sizes(), op, ": expected dhy of shape ", hx.sizes(), ", got ", dhy.sizes());
  check_same_device(op, gi.device(), {&dhy});
  ScalarType dt = gi.dtype(), cd = cell_dtype(op, gi);
  const Device dev = gi.device();
  auto kernel = gru_cell_backward_kernel_stub(dev, "gru_cell_backward");
  Tensor a = prep(gi, cd), b = prep(gh, cd), h0 = prep(hx, cd), d = prep(dhy, cd);
  int64_t rows = a.sizes()[0], h = a.sizes()[1] / 3;
  Tensor dgi = empty_tensor(a.sizes(), cd, dev), dgh = empty_tensor(a.sizes(), cd, dev);
  Tensor dhx = grad_hx ? empty_tensor({rows, h}, cd, dev) : Tensor();
  if (rows && h)
    kernel(cd, d.kernel_data(), a.kernel_data(), b.kernel_data(), h0.kernel_data(), dgi.kernel_data(), dgh.kernel_data(), mut_ptr(dhx),
           rows, h);
  return {dgi.to(dt), dgh.to(dt), back_to(dhx, dt)};
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
  auto [dgates, dcx] = ember::_lstm_cell_backward(dhy, dcy, gates, cx, cy, mask[1]);
  return {mask[0] ? dgates : Tensor(), dcx};
}

// Backward of _lstm_seq: the fused _lstm_seq_backward op. Under create_graph (or for half / bfloat16) the
// same recursion runs on differentiable ops (the saved hs / cs / acts are outputs of this node, so double backward
// reaches them through grads[0..2]).
std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_seq_backward(const Tensor& dhs, const Tensor& dcs, const Tensor& dacts,
                                                             const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                                             const Tensor& hs, const Tensor& cs, const Tensor& acts,
                                                             bool reverse, std::array<bool, 4> mask) {
  if (!dhs.defined() && !dcs.defined() && !dacts.defined()) return {};
  int64_t T = acts.sizes()[0], B = acts.sizes()[1], H = acts.sizes()[2] / 4;
  if (T == 0) return {ember::zeros_like(acts), ember::zeros_like(h0), ember::zeros_like(c0), ember::zeros_like(w_hh)};
  if (grad_enabled() || is_reduced_float(acts.dtype())) {
    Tensor dh = ember::zeros_like(h0), dc = ember::zeros_like(c0);
    std::vector<Tensor> dg(static_cast<size_t>(T));
    for (int64_t s = T - 1; s >= 0; s--) {
      int64_t t = seq_t(s, T, reverse);
      if (dhs.defined()) dh = dh + dhs.select(0, t);
      if (dcs.defined()) dc = dc + dcs.select(0, t);
      auto a = ember::chunk(acts.select(0, t), 4, 1);
      const Tensor &i = a[0], &f = a[1], &g = a[2], &o = a[3];
      Tensor c_prev = s == 0 ? c0 : cs.select(0, seq_t(s - 1, T, reverse)), tc = cs.select(0, t).tanh();
      dc = dc + dh * o * (-(tc * tc) + 1);
      // d activation -> d pre-activation: sigmoid' = a (1 - a), tanh' = 1 - a^2
      Tensor di = dc * g, df = dc * c_prev, dgg = dc * i, d_o = dh * tc;
      if (dacts.defined()) {
        auto da = ember::chunk(dacts.select(0, t), 4, 1);
        di = di + da[0], df = df + da[1], dgg = dgg + da[2], d_o = d_o + da[3];
      }
      Tensor dpre = ember::cat({di * i * (-i + 1), df * f * (-f + 1), dgg * (-(g * g) + 1), d_o * o * (-o + 1)}, 1);
      dh = dpre.mm(w_hh);
      dc = dc * f;
      dg[static_cast<size_t>(t)] = dpre;
    }
    Tensor dxw = ember::stack(dg, 0);
    Tensor dw;
    if (mask[3]) {
      Tensor hprev = reverse ? ember::cat({hs.narrow(0, 1, T - 1), h0.unsqueeze(0)}, 0)
                             : ember::cat({h0.unsqueeze(0), hs.narrow(0, 0, T - 1)}, 0);
      dw = dxw.reshape({T * B, 4 * H}).t().mm(hprev.reshape({T * B, H}));
    }
    return {dxw, dh, dc, dw};
  }
  return ember::_lstm_seq_backward(dhs, dcs, dacts, h0, c0, w_hh, hs, cs, acts, reverse, mask[3]);
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
  auto [dgi, dgh, dhx] = ember::_gru_cell_backward(dhy, gi, gh, hx, mask[2]);
  return {mask[0] ? dgi : Tensor(), mask[1] ? dgh : Tensor(), dhx};
}

}  // namespace autograd
}  // namespace ember
