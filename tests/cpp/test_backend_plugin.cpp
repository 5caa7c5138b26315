// A second device type plugged in from outside the library (host_device.h): factories, copies,
// elementwise ops and reductions run on it through ops/ unchanged; mixing devices and ops without a
// kernel for it raise PyTorch's errors; streams reach the kernels; memory goes back to its allocator.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/core/operators.h"
#include "ember/core/stream.h"
#include "ember/cuda/cuda.h"
#include "ember/generated/ops.h"
#include "error_kind.h"
#include "device_checks.h"
#include "host_device.h"

using namespace ember;
using test_util::error_kind;
using test_util::host_device;
using namespace test_util;


TEST(BackendPlugin, UnregisteredDeviceRaises) {
  Tensor x = ember::ones({2});
  EXPECT_EQ(error_kind([&] { x.to(host_device()); }), ErrorKind::Runtime);
  // as PyTorch: its CPU-only build raises AssertionError, its CUDA build without a GPU RuntimeError
  if (!cuda::is_available()) {
    EXPECT_EQ(error_kind([&] { x.to(Device("cuda")); }), cuda::is_compiled() ? ErrorKind::Runtime : ErrorKind::Assertion);
  }
  EXPECT_EQ(Device("privateuseone:0"), host_device());
  EXPECT_EQ(host_device().str(), "privateuseone:0");
}

TEST(BackendPlugin, CopiesAndFactories) {
  test_util::HostDevice dev;
  Tensor x = ember::randn({3, 5});
  Tensor d = x.to(host_device());
  EXPECT_EQ(d.device(), host_device());
  EXPECT_EQ(dev.allocator.copies_in.load(), 1);
  EXPECT_EQ(dev.allocator.live_bytes.load(), 3 * 5 * 4);
  expect_same(d, x);
  EXPECT_EQ(dev.allocator.copies_out.load(), 1);
  // strided and casting copies on the device, and across devices into a strided CPU destination
  expect_same(d.t().contiguous(), x.t().contiguous());
  expect_same(d.to(kDouble), x.to(kDouble));
  Tensor cpu_dst = ember::zeros({5, 3}).t();
  cpu_dst.copy_(d);
  EXPECT_TRUE(same_values(cpu_dst, x));
  Tensor dev_dst = ember::zeros({5, 3}, TensorOptions().device(host_device())).t();
  dev_dst.copy_(x);  // CPU -> strided device destination
  expect_same(dev_dst, x);
  expect_same(ember::full({2, 2}, 7, TensorOptions(kLong).device(host_device())), ember::full({2, 2}, 7, TensorOptions(kLong)));
  expect_same(ember::zeros_like(d), ember::zeros_like(x));
  expect_same(d.clone(), x);
  EXPECT_DOUBLE_EQ(d[1][2].item().to_double(), x[1][2].item().to_double());
}

TEST(BackendPlugin, ElementwiseAndReductions) {
  test_util::HostDevice dev;
  Tensor a = ember::randn({4, 6}), b = ember::randn({6}), i = ember::randint(-5, 5, {4, 6});
  Tensor da = a.to(host_device()), db = b.to(host_device()), di = i.to(host_device());
  expect_same(da + db, a + b);                  // broadcast
  expect_same(da * 2.5, a * 2.5);               // wrapped scalar
  expect_same(di + da, i + a);                  // type promotion
  expect_same(da.exp(), a.exp());
  expect_same(da.gt(db), a.gt(b));
  expect_same(ember::where(da.gt(0), da, db), ember::where(a.gt(0), a, b));
  expect_same(da.clamp(ember::full({}, -0.5), ember::full({}, 0.5)), a.clamp(ember::full({}, -0.5), ember::full({}, 0.5)));
  expect_same(da + ember::full({}, 3.0), a + ember::full({}, 3.0));  // a CPU 0-d tensor joins
  Tensor acc = da.clone();
  acc.mul_(db).add_(1);
  expect_same(acc, (a * b) + 1);
  expect_same(da.sum(), a.sum());
  expect_same(da.sum(IntArrayRef{1}, true), a.sum(IntArrayRef{1}, true));
  expect_same(da.t().sum(IntArrayRef{0}), a.t().sum(IntArrayRef{0}));  // non-contiguous input
  expect_same(da.amax(IntArrayRef{0}), a.amax(IntArrayRef{0}));
  expect_same(da.argmax(1), a.argmax(1));
  expect_same(di.prod(), i.prod());
  expect_same(da.mean(), a.mean());
  expect_same(da.gt(0).any(), a.gt(0).any());
}

TEST(BackendPlugin, DevicesDoNotMix) {
  test_util::HostDevice dev;
  Tensor d = ember::ones({3}).to(host_device()), c = ember::ones({3});
  EXPECT_EQ(error_kind([&] { (void)(d + c); }), ErrorKind::Runtime);
  EXPECT_NE(message_of([&] { (void)(d + c); })
                .find("Expected all tensors to be on the same device, but found at least two devices, privateuseone:0 and cpu!"),
            std::string::npos);
  EXPECT_NE(message_of([&] { (void)(c + d); }).find("cpu and privateuseone:0"), std::string::npos);
  EXPECT_EQ(error_kind([&] { c.add_(d); }), ErrorKind::Runtime);  // a CPU output, a device input
  EXPECT_EQ(error_kind([&] { ember::add_out(c, d, d); }), ErrorKind::Runtime);  // out= on another device
  EXPECT_EQ(error_kind([&] { ember::sum_out(ember::zeros({}), d, std::nullopt); }), ErrorKind::Runtime);
}

TEST(BackendPlugin, OpWithoutKernelRaisesNotImplemented) {
  test_util::HostDevice dev;
  Tensor d = ember::ones({2, 3}).to(host_device());
  EXPECT_EQ(error_kind([&] { ember::softmax(d, 1); }), ErrorKind::NotImplemented);
  std::string msg = message_of([&] { ember::softmax(d, 1); });
  EXPECT_NE(msg.find("softmax"), std::string::npos) << msg;
  EXPECT_NE(msg.find("privateuseone"), std::string::npos) << msg;
  EXPECT_EQ(error_kind([&] { d.cumsum(1); }), ErrorKind::NotImplemented);
}

TEST(BackendPlugin, MemoryReturnsToItsAllocator) {
  test_util::HostDevice dev;
  {
    Tensor d = ember::randn({64, 64}).to(host_device());
    Tensor e = (d * d).sum(IntArrayRef{0});
    EXPECT_GT(dev.allocator.live_bytes.load(), 0);
  }
  EXPECT_EQ(dev.allocator.live_bytes.load(), 0);
}

TEST(BackendPlugin, StreamsReachTheKernels) {
  test_util::HostDevice dev;
  Tensor d = ember::ones({4}).to(host_device());
  Stream side = stream_backend(DeviceType::PrivateUse1).new_stream(host_device(), 0);
  {
    StreamGuard guard(side);
    EXPECT_EQ(current_stream(host_device()), side);
    (void)(d + d);
    EXPECT_EQ(test_util::last_binary_stream().load(), side.id);
  }
  EXPECT_EQ(current_stream(host_device()).id, 0);
  (void)(d + d);
  EXPECT_EQ(test_util::last_binary_stream().load(), 0);
}

TEST(Streams, CpuEventsTime) {
  Event start(Device(), true), end(Device(), true);
  EXPECT_TRUE(start.query());  // never recorded
  start.record();
  Tensor x = ember::randn({256, 256});
  (void)ember::mm(x, x);
  end.record();
  end.synchronize();
  EXPECT_GE(start.elapsed_time(end), 0.0);
  Event untimed;
  untimed.record();
  EXPECT_EQ(error_kind([&] { untimed.elapsed_time(end); }), ErrorKind::Runtime);
  EXPECT_EQ(current_stream(Device()).id, 0);
  EXPECT_EQ(error_kind([&] { stream_backend(DeviceType::CPU).set_current_stream({Device(), 3}); }), ErrorKind::Runtime);
}

// As PyTorch's engine: backward from roots on a device other than the CPU runs on that device's own
// worker thread (the caller waits; errors come back to it); CPU graphs run on the calling thread.
TEST(BackendPlugin, BackwardRunsOnTheDevicesOwnThread) {
  test_util::HostDevice dev;
  std::thread::id seen;
  auto watch = [&](const Tensor& leaf) {
    autograd::materialize_meta(leaf).leaf_hooks.push_back(std::make_shared<autograd::TensorHook>([&](const Tensor&) {
      seen = std::this_thread::get_id();
      return Tensor();
    }));
  };
  Tensor x = ember::randn({3, 4}).to(host_device());
  x.requires_grad_(true);
  watch(x);
  (x * 2).sum().backward();
  EXPECT_NE(seen, std::this_thread::get_id());
  expect_same(x.grad(), ember::full({3, 4}, 2.0));
  const std::thread::id worker = seen;
  (x * 3).sum().backward();  // the same worker, gradients accumulate
  EXPECT_EQ(seen, worker);
  expect_same(x.grad(), ember::full({3, 4}, 5.0));
  Tensor c = ember::randn({2});
  c.requires_grad_(true);
  watch(c);
  (c * 2).sum().backward();
  EXPECT_EQ(seen, std::this_thread::get_id());
  autograd::set_multithreading_enabled(false);  // torch.autograd.set_multithreading_enabled(False)
  (x * 0).sum().backward();
  EXPECT_EQ(seen, std::this_thread::get_id());
  autograd::set_multithreading_enabled(true);
  // an error on the worker reaches the caller, and the worker goes on serving
  Tensor y = ember::randn({2}).to(host_device());
  y.requires_grad_(true);
  autograd::materialize_meta(y).leaf_hooks.push_back(
      std::make_shared<autograd::TensorHook>([](const Tensor&) -> Tensor { throw std::runtime_error("hook failed"); }));
  EXPECT_THROW((y * 2).sum().backward(), std::runtime_error);
  (x * 1).sum().backward();
  expect_same(x.grad(), ember::full({3, 4}, 6.0));
}

// Gradients stay on their tensor's device: the backward formulas that build zeros (views, unbind, a
// missing output's gradient) make them on the gradient's device, and the engine refuses a gradient on
// another device than its input's, with PyTorch's message.
TEST(BackendPlugin, GradientsStayOnTheDevice) {
  test_util::HostDevice dev;
  Tensor base = ember::randn({4, 5});
  Tensor x = base.to(host_device());
  x.requires_grad_(true);
  (x.select(0, 1) * 2 + x.narrow(1, 1, 3).sum() + x.diagonal().sum()).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), host_device());
  Tensor c = base.clone();
  c.requires_grad_(true);
  (c.select(0, 1) * 2 + c.narrow(1, 1, 3).sum() + c.diagonal().sum()).sum().backward();
  expect_same(x.grad(), c.grad());
  // unbind with only some outputs used: the others' gradients are zeros on the device
  Tensor y = base.to(host_device());
  y.requires_grad_(true);
  auto parts = y.unbind(0);
  (parts[0] + parts[2] * 3).sum().backward();
  EXPECT_EQ(y.grad().device(), host_device());
  expect_same(y.grad().select(0, 1), ember::zeros({5}));
  expect_same(y.grad().select(0, 2), ember::full({5}, 3.0));
  // a 0-d CPU tensor beside device tensors gets its gradient back on the CPU
  Tensor s = ember::full({}, 2.0);
  s.requires_grad_(true);
  Tensor z = base.to(host_device());
  z.requires_grad_(true);
  (z * s).sum().backward();
  EXPECT_EQ(s.grad().device(), Device());
  EXPECT_EQ(z.grad().device(), host_device());
  // copy_ across devices sends the gradient back to the source's device (PyTorch's CopyBackwards)
  Tensor src = ember::randn({3});
  src.requires_grad_(true);
  Tensor dst = ember::zeros({3}).to(host_device());
  dst.copy_(src);
  (dst * 2).sum().backward();
  ASSERT_TRUE(src.grad().defined());
  EXPECT_EQ(src.grad().device(), Device());
  EXPECT_TRUE(same_values(src.grad(), ember::full({3}, 2.0)));
}
