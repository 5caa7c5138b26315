// The convolution family behind the backend seam (ops/conv.cpp, pooling.cpp, padding.cpp, interp.cpp,
// nn_embedding.cpp): on a device without their kernels the ops raise NotImplementedError naming the
// op, mixed devices raise PyTorch's RuntimeError, composites of kernels the device has run there,
// and a device that registers the convolution/pooling entries gets its outputs allocated on it.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "ember/autograd/formulas.h"
#include "ember/autograd/grad_mode.h"
#include "ember/generated/ops.h"
#include "ember/kernels/conv.h"
#include "ember/kernels/pooling.h"
#include "error_kind.h"
#include "device_checks.h"
#include "host_device.h"

using namespace ember;
using test_util::error_kind;
using test_util::host_device;
using namespace test_util;

namespace {

// The host device's convolution entries: the CPU's, run on CPU copies, their results moved to the
// device (the CPU entry's im2col + GEMM path calls ops such as matmul, which this test device has no
// kernels for).
Tensor on_cpu(const Tensor& t) { return t.defined() ? t.to(Device()) : Tensor(); }
Tensor on_host_device(const Tensor& t) { return t.defined() ? t.to(host_device()) : Tensor(); }
Tensor host_convolution(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                        IntArrayRef out_spatial) {
  return on_host_device(convolution_stub(Device())(on_cpu(input), on_cpu(weight), on_cpu(bias), p, out_spatial));
}
ConvGrads host_convolution_backward(const Tensor& grad, const Tensor& input, const Tensor& weight, bool has_bias,
                                    const ConvParams& p, ConvMask mask) {
  auto [gi, gw, gb] = convolution_backward_stub(Device())(on_cpu(grad), on_cpu(input), on_cpu(weight), has_bias, p, mask);
  return {on_host_device(gi), on_host_device(gw), on_host_device(gb)};
}

const std::vector<int64_t> kOne = {1}, kZero = {0}, kTwo = {2};
// conv2d(x, w, b) with default stride/padding (spelled out: the string-padding overload competes)
Tensor plain_conv2d(const Tensor& x, const Tensor& w, const Tensor& b = Tensor()) {
  return ember::conv2d(x, w, b, IntArrayRef(kOne), IntArrayRef(kZero));
}

}  // namespace

TEST(SeamConv, NoKernelOnDeviceNamesTheOp) {
  test_util::HostDevice dev;
  Device d = host_device();
  Tensor x = ember::randn({2, 3, 8, 8}).to(d), w = ember::randn({4, 3, 3, 3}).to(d);
  expect_no_kernel([&] { plain_conv2d(x, w); }, "convolution");
  expect_no_kernel([&] { ember::conv_transpose2d(x, ember::randn({3, 2, 3, 3}).to(d)); }, "convolution");
  expect_no_kernel([&] { ember::im2col(x, {3, 3}, {1}, {0}, {1}); }, "im2col");
  expect_no_kernel([&] { ember::col2im(ember::randn({2, 27, 36}).to(d), {8, 8}, {3, 3}, {1}, {0}, {1}); }, "col2im");
  expect_no_kernel([&] { ember::max_pool2d(x, {2, 2}); }, "max_pool");
  expect_no_kernel([&] { ember::adaptive_max_pool_with_indices(x, {3, 3}); }, "adaptive_max_pool");
  expect_no_kernel([&] { ember::adaptive_avg_pool_nd(x, {3, 3}); }, "adaptive_avg_pool");
  expect_no_kernel([&] { ember::avg_pool_nd(x, {2, 2}, {}, {0}, false, true, std::nullopt); }, "avg_pool");
  Tensor idx = ember::zeros({2, 3, 4, 4}, TensorOptions(kLong)).to(d);
  expect_no_kernel([&] { ember::max_pool_with_indices_backward(ember::ones({2, 3, 4, 4}).to(d), x, idx); },
                   "max_pool_with_indices_backward");
  expect_no_kernel([&] { ember::pad(x, {1, 1, 1, 1}, "reflect"); }, "pad");
  expect_no_kernel([&] { ember::pad(x, {1, 2, 0, 1}, "circular"); }, "pad");
  expect_no_kernel([&] { ember::upsample(x, {16, 16}, "bilinear"); }, "upsample");
  Tensor weight = ember::randn({10, 4}).to(d), ids = ember::randint(0, 10, {6}).to(d);
  expect_no_kernel([&] { ember::embedding(weight, ids); }, "embedding");
  expect_no_kernel([&] { ember::one_hot(ids, 10); }, "one_hot");
  Tensor offsets = ember::zeros({2}, TensorOptions(kLong)).to(d);
  expect_no_kernel([&] { ember::embedding_bag(weight, ids, offsets); }, "embedding_bag");
  // the backward formula's no-grad path is the backward op's body
  {
    autograd::AutoGradMode no_grad(false);
    expect_no_kernel([&] {
      autograd::convolution_backward(ember::ones({2, 4, 6, 6}).to(d), x, w, Tensor(), {1}, {0}, {1}, false, {0}, 1,
                                     {true, true, false});
    }, "convolution_backward");
  }
}

TEST(SeamConv, MixedDevicesRaise) {
  test_util::HostDevice dev;
  Device d = host_device();
  Tensor x = ember::randn({2, 3, 8, 8}), w = ember::randn({4, 3, 3, 3}), b = ember::randn({4});
  expect_mixed_devices([&] { plain_conv2d(x.to(d), w); });
  expect_mixed_devices([&] { plain_conv2d(x, w.to(d)); });
  expect_mixed_devices([&] { plain_conv2d(x.to(d), w.to(d), b); });
  expect_mixed_devices([&] { ember::conv_transpose2d(x, ember::randn({3, 2, 3, 3}).to(d)); });
  auto [vals, idx] = ember::max_pool_with_indices(x, {2, 2}, {2, 2}, {0}, {1}, false);
  expect_mixed_devices([&] { ember::max_pool_with_indices_backward(ember::ones_like(vals), x, idx.to(d)); });
  expect_mixed_devices([&] { ember::max_pool_with_indices_backward(ember::ones_like(vals).to(d), x, idx); });
  Tensor weight = ember::randn({10, 4}), ids = ember::randint(0, 10, {6});
  expect_mixed_devices([&] { ember::embedding(weight, ids.to(d)); });
  expect_mixed_devices([&] { ember::embedding(weight.to(d), ids); });
  expect_mixed_devices([&] { ember::embedding_bag(weight, ids, ember::zeros({2}, TensorOptions(kLong)).to(d)); });
  expect_mixed_devices([&] { ember::grid_sampler(x, ember::zeros({2, 4, 4, 2}).to(d), 0, 0, false); });
  {
    autograd::AutoGradMode no_grad(false);
    expect_mixed_devices([&] {
      autograd::convolution_backward(ember::ones({2, 4, 6, 6}).to(d), x, w, Tensor(), {1}, {0}, {1}, false, {0}, 1,
                                     {true, true, false});
    });
  }
  // the CPU is unchanged: mixing raises only when a device differs
  const std::vector<int64_t> expected = {2, 4, 6, 6};
  EXPECT_EQ(plain_conv2d(x, w, b).sizes(), IntArrayRef(expected));
}

// constant padding is a composite (narrow, full, cat): cropping alone needs no kernel at all
TEST(SeamConv, ConstantCropIsACompositeThatRuns) {
  test_util::HostDevice dev;
  Tensor x = ember::randn({2, 3, 5});
  expect_same(ember::pad(x.to(host_device()), {-1, -2, 0, -1}), ember::pad(x, {-1, -2, 0, -1}));
  expect_same(ember::pad(x.to(host_device()), {0, 0}), ember::pad(x, {0, 0}));
}

// A device that registers the convolution entries runs conv2d / conv_transpose2d forward and
// backward through ops/ unchanged, its outputs allocated on it.
TEST(SeamConv, RegisteredEntriesRunOnTheDevice) {
  test_util::HostDevice dev;
  register_kernel(convolution_stub, DeviceType::PrivateUse1, &host_convolution);
  register_kernel(convolution_backward_stub, DeviceType::PrivateUse1, &host_convolution_backward);
  struct Unregister {
    ~Unregister() {
      register_kernel(convolution_stub, DeviceType::PrivateUse1, convolution_stub_fn(nullptr));
      register_kernel(convolution_backward_stub, DeviceType::PrivateUse1, convolution_backward_stub_fn(nullptr));
    }
  } unregister;
  Device d = host_device();
  for (ScalarType dt : {kFloat, kDouble}) {  // float32: oneDNN in the CPU entry; float64: im2col + GEMM
    Tensor x = ember::randn({2, 3, 7, 7}).to(dt), w = ember::randn({4, 3, 3, 3}).to(dt), b = ember::randn({4}).to(dt);
    expect_same(ember::conv2d(x.to(d), w.to(d), b.to(d), IntArrayRef(kTwo), IntArrayRef(kOne)),
                ember::conv2d(x, w, b, IntArrayRef(kTwo), IntArrayRef(kOne)));
    Tensor wt = ember::randn({3, 2, 3, 3}).to(dt);
    expect_same(ember::conv_transpose2d(x.to(d), wt.to(d), Tensor(), {2}, {1}, {1}),
                ember::conv_transpose2d(x, wt, Tensor(), {2}, {1}, {1}));
    autograd::AutoGradMode no_grad(false);
    Tensor g = ember::randn({2, 4, 4, 4}).to(dt);
    auto [gi, gw, gb] = autograd::convolution_backward(g.to(d), x.to(d), w.to(d), b.to(d), {2}, {1}, {1}, false, {0},
                                                       1, {true, true, true});
    auto [ci, cw, cb] = autograd::convolution_backward(g, x, w, b, {2}, {1}, {1}, false, {0}, 1, {true, true, true});
    expect_same(gi, ci);
    expect_same(gw, cw);
    expect_same(gb, cb);
  }
}

TEST(SeamConv, RegisteredPoolingEntriesRunOnTheDevice) {
  test_util::HostDevice dev;
  BorrowCpuEntry mp(max_pool_stub);
  BorrowCpuEntry mpb(max_pool_backward_stub);
  BorrowCpuEntry amp(adaptive_max_pool_stub);
  Device d = host_device();
  Tensor x = ember::randn({2, 3, 9, 9});
  auto [v, i] = ember::max_pool_with_indices(x.to(d), {3, 3}, {2, 2}, {1, 1}, {1}, false);
  auto [cv, ci] = ember::max_pool_with_indices(x, {3, 3}, {2, 2}, {1, 1}, {1}, false);
  expect_same(v, cv);
  expect_same(i, ci);
  Tensor g = ember::randn(cv.sizes());
  expect_same(ember::max_pool_with_indices_backward(g.to(d), x.to(d), i), ember::max_pool_with_indices_backward(g, x, ci));
  auto [av, ai] = ember::adaptive_max_pool_with_indices(x.to(d), {4, 5});
  auto [cav, cai] = ember::adaptive_max_pool_with_indices(x, {4, 5});
  expect_same(av, cav);
  expect_same(ai, cai);
  // the backward's index check is the kernel's, still an IndexError
  Tensor bad = ember::full(cv.sizes(), 1000, TensorOptions(kLong));
  EXPECT_EQ(error_kind([&] { ember::max_pool_with_indices_backward(g.to(d), x.to(d), bad.to(d)); }), ErrorKind::Index);
}
