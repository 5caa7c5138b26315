// The NN ops through the backend seam (issue #19), on the test-only host device (host_device.h),
// which registers only elementwise, reduction and copy kernels: the fused NN ops (softmax, norms,
// RNN cells, nll_loss, the fused optimizers) and their backward ops raise NotImplementedError naming
// the op without touching their inputs; the NN ops written with elementwise and reduction ops run
// there and match the CPU; tensors on two devices raise PyTorch's RuntimeError.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "error_kind.h"
#include "device_checks.h"
#include "host_device.h"

using namespace ember;
using test_util::error_kind;
using test_util::host_device;
using namespace test_util;

namespace {
// |a - b| <= atol + rtol |b| everywhere
bool close(const Tensor& a, const Tensor& b, double rtol, double atol) {
  return a.sizes() == b.sizes() && ((a - b).abs() - b.abs() * rtol).max().item().to_double() <= atol;
}
bool same(const Tensor& a, const Tensor& b) { return a.sizes() == b.sizes() && ember::eq(a, b).all().item().to_bool(); }
void expect_close(const Tensor& on_device, const Tensor& on_cpu) {
  ASSERT_EQ(on_device.device(), host_device());
  Tensor back = on_device.to(Device());
  EXPECT_EQ(back.dtype(), on_cpu.dtype());
  ASSERT_EQ(back.sizes(), on_cpu.sizes());
  EXPECT_TRUE(close(back, on_cpu, 1e-6, 1e-6));
}
}  // namespace

TEST(SeamNN, FusedOpsWithoutKernelRaise) {
  test_util::HostDevice dev;
  const Device d = host_device();
  Tensor x = ember::randn({4, 6}).to(d), w = ember::ones({6}).to(d), b = ember::zeros({6}).to(d);
  expect_no_kernel([&] { ember::softmax(x, 1); }, "softmax");
  expect_no_kernel([&] { ember::log_softmax(x, 0); }, "log_softmax");
  expect_no_kernel([&] { ember::_softmax_backward_data(x, x, 1, kFloat); }, "_softmax_backward_data");
  expect_no_kernel([&] { ember::native_layer_norm(x, {6}, w, b, 1e-5); }, "layer_norm");
  expect_no_kernel([&] { ember::layer_norm(x, {6}, w, b); }, "layer_norm");
  Tensor stat = ember::zeros({4, 1}).to(d);
  expect_no_kernel([&] { ember::native_layer_norm_backward(x, x, {6}, stat, stat, w, b, true, true, true); },
                   "layer_norm_backward");
  Tensor rm = ember::zeros({6}).to(d), rv = ember::ones({6}).to(d);
  expect_no_kernel([&] { ember::native_batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5); }, "batch_norm");
  expect_no_kernel([&] { ember::native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5); }, "batch_norm");
  expect_no_kernel([&] { ember::native_batch_norm_backward(x, x, w, rm, rv, rm, rv, true, 1e-5, true, true, true); },
                   "batch_norm_backward");
  // training batch norm must not have touched the running statistics
  EXPECT_TRUE(same(rm.to(Device()), ember::zeros({6})));
  expect_no_kernel([&] { ember::nll_pick(x, longs({0, 5, 2, 1}).to(d), Tensor(), -100); }, "nll_loss");
  expect_no_kernel([&] { ember::nll_loss(ember::log_softmax(ember::randn({4, 6}), 1).to(d), longs({0, 5, 2, 1}).to(d)); },
                   "nll_loss");
  Tensor gates = ember::randn({3, 8}).to(d), cx = ember::randn({3, 2}).to(d);
  expect_no_kernel([&] { ember::_lstm_cell(gates, cx); }, "lstm_cell");
  expect_no_kernel([&] { ember::_lstm_cell_backward(cx, cx, gates, cx, cx, true); }, "lstm_cell_backward");
  Tensor gi = ember::randn({3, 6}).to(d);
  expect_no_kernel([&] { ember::_gru_cell(gi, gi, cx); }, "gru_cell");
  expect_no_kernel([&] { ember::_gru_cell_backward(cx, gi, gi, cx, true); }, "gru_cell_backward");
  Tensor xw = ember::randn({5, 3, 8}).to(d), w_hh = ember::randn({8, 2}).to(d);
  expect_no_kernel([&] { ember::_lstm_seq(xw, cx, cx, w_hh); }, "lstm");
}

TEST(SeamNN, FusedOptimizersWithoutKernelRaiseBeforeUpdating) {
  test_util::HostDevice dev;
  const Device d = host_device();
  std::vector<Tensor> p{ember::randn({10}).to(d)}, g{ember::randn({10}).to(d)}, m{ember::zeros({10}).to(d)},
      v{ember::zeros({10}).to(d)}, steps{ember::zeros({})};
  Tensor p0 = p[0].to(Device());
  expect_no_kernel([&] { ember::_fused_adam_(p, g, m, v, {}, steps, 1e-3, 0.9, 0.999, 0, 1e-8, false, false, false); },
                   "_fused_adam_");
  EXPECT_EQ(steps[0].item().to_double(), 0.0);  // the step counter was not bumped
  EXPECT_TRUE(same(p[0].to(Device()), p0));
  expect_no_kernel([&] { ember::_fused_sgd_(p, g, m, 0.1, 0.9, 0, 0, false, false, true); }, "_fused_sgd_");
  expect_no_kernel([&] { ember::_fused_adagrad_(p, g, m, steps, 0.1, 0, 0, 1e-10, false); }, "_fused_adagrad_");
  expect_no_kernel([&] { ember::_fused_radam_(p, g, m, v, steps, 1e-3, 0.9, 0.999, 0, 1e-8, false, false); },
                   "_fused_radam_");
  EXPECT_EQ(steps[0].item().to_double(), 0.0);
}

TEST(SeamNN, CompositesRunOnTheDevice) {
  test_util::HostDevice dev;
  const Device d = host_device();
  Tensor x = ember::randn({5, 7}), y = ember::randn({5, 7});
  Tensor xd = x.to(d), yd = y.to(d);
  expect_close(ember::silu(xd), ember::silu(x));
  expect_close(ember::gelu(xd, "tanh"), ember::gelu(x, "tanh"));
  expect_close(ember::softplus(xd, 2, 10), ember::softplus(x, 2, 10));
  expect_close(ember::hardswish(xd), ember::hardswish(x));
  expect_close(ember::leaky_relu(xd, 0.2), ember::leaky_relu(x, 0.2));
  expect_close(ember::elu(xd), ember::elu(x));
  expect_close(ember::mse_loss(xd, yd), ember::mse_loss(x, y));
  expect_close(ember::l1_loss(xd, yd, 2), ember::l1_loss(x, y, 2));
  expect_close(ember::smooth_l1_loss(xd, yd, 0, 0.5), ember::smooth_l1_loss(x, y, 0, 0.5));
  expect_close(ember::huber_loss(xd, yd), ember::huber_loss(x, y));
  expect_close(ember::rms_norm(xd, {7}, ember::ones({7}).to(d), 1e-6), ember::rms_norm(x, {7}, ember::ones({7}), 1e-6));
  // dropout in evaluation returns its input on any device
  Tensor e = ember::dropout(xd, 0.5, false);
  expect_close(e, x);
}

TEST(SeamNN, MixedDevicesRaise) {
  test_util::HostDevice dev;
  const Device d = host_device();
  Tensor x = ember::randn({4, 6}), w = ember::ones({6}), b = ember::zeros({6});
  expect_mixed_devices([&] { ember::native_layer_norm(x, {6}, w.to(d), b, 1e-5); });
  expect_mixed_devices([&] { ember::native_batch_norm(x, w, b, ember::zeros({6}).to(d), ember::ones({6}), true, 0.1, 1e-5); });
  Tensor y = ember::softmax(x, 1);
  expect_mixed_devices([&] { ember::_softmax_backward_data(x.to(d), y, 1, kFloat); });
  expect_mixed_devices([&] { ember::nll_pick(x, longs({0, 5, 2, 1}).to(d), Tensor(), -100); });
  expect_mixed_devices([&] { ember::nll_pick(x, longs({0, 5, 2, 1}), w.to(d), -100); });
  expect_mixed_devices([&] { ember::_lstm_cell(ember::randn({3, 8}), ember::randn({3, 2}).to(d)); });
  expect_mixed_devices([&] { ember::_gru_cell(ember::randn({3, 6}), ember::randn({3, 6}).to(d), ember::randn({3, 2})); });
  expect_mixed_devices([&] { ember::mse_loss(x, x.to(d)); });
  std::vector<Tensor> p{ember::randn({10})}, g{ember::randn({10}).to(d)}, m{ember::zeros({10})},
      v{ember::zeros({10})}, steps{ember::zeros({})};
  expect_mixed_devices([&] { ember::_fused_adam_(p, g, m, v, {}, steps, 1e-3, 0.9, 0.999, 0, 1e-8, false, false, false); });
  EXPECT_EQ(steps[0].item().to_double(), 0.0);
  expect_mixed_devices([&] { ember::_fused_sgd_(p, p, {m[0].to(d)}, 0.1, 0.9, 0, 0, false, false, true); });
}

// The backward ops the autograd formulas call give what the formulas gave on the CPU
TEST(SeamNN, BackwardOpsMatchRecordedFormulas) {
  Tensor x = ember::randn({3, 5, 4}), g = ember::randn({3, 5, 4});
  Tensor y = ember::softmax(x, 1);
  Tensor expect = y * (g - (g * y).sum(IntArrayRef({1}), true));
  EXPECT_TRUE(close(ember::_softmax_backward_data(g, y, 1, kFloat), expect, 1e-5, 1e-6));
  Tensor ly = ember::log_softmax(x, -1);
  Tensor lexpect = g - ly.exp() * g.sum(IntArrayRef({-1}), true);
  EXPECT_TRUE(close(ember::_log_softmax_backward_data(g, ly, -1, kFloat), lexpect, 1e-5, 1e-6));
  // batch norm in evaluation: dx = g * w * invstd, dw = sum(g * xhat), db = sum(g)
  Tensor w = ember::randn({5}), rm = ember::randn({5}), rv = ember::rand({5}) + 0.5;
  auto [dx, dw, db] = ember::native_batch_norm_backward(g, x, w, rm, rv, Tensor(), Tensor(), false, 1e-5, true, true, true);
  Tensor invstd = (rv + 1e-5).rsqrt().reshape({1, 5, 1});
  EXPECT_TRUE(close(dx, g * w.reshape({1, 5, 1}) * invstd, 1e-5, 1e-6));
  Tensor xhat = (x - rm.reshape({1, 5, 1})) * invstd;
  EXPECT_TRUE(close(dw, (g * xhat).sum(IntArrayRef({0, 2})), 1e-4, 1e-5));
  EXPECT_TRUE(close(db, g.sum(IntArrayRef({0, 2})), 1e-4, 1e-5));
  EXPECT_EQ(error_kind([&] { ember::_softmax_backward_data(g, y.narrow(1, 0, 2), 1, kFloat); }), ErrorKind::Runtime);
}
