// The seam for matrix products, linalg decompositions, random sampling and the range factories: on a
// device without their kernels (host_device.h registers only elementwise, reduction and copy ones)
// they raise NotImplementedError naming the op, composites of registered kernels run and match the
// CPU, mixed devices raise PyTorch's error, and registering an entry for the device is all it takes.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/kernels/blas.h"
#include "ember/kernels/creation.h"
#include "ember/kernels/linalg.h"
#include "ember/kernels/random.h"
#include "ember/random/generator.h"
#include "error_kind.h"
#include "device_checks.h"
#include "host_device.h"

using namespace ember;
using test_util::error_kind;
using test_util::host_device;
using namespace test_util;


TEST(SeamMisc, CpuEntriesRegistered) {
  EXPECT_TRUE(gemm_stub.has(DeviceType::CPU));
  EXPECT_TRUE(mm_stub.has(DeviceType::CPU));
  EXPECT_TRUE(bmm_stub.has(DeviceType::CPU));
  EXPECT_TRUE(linalg_svd_stub.has(DeviceType::CPU));
  EXPECT_TRUE(uniform_stub.has(DeviceType::CPU));
  EXPECT_TRUE(poisson_stub.has(DeviceType::CPU));
  EXPECT_TRUE(arange_stub.has(DeviceType::CPU));
  EXPECT_FALSE(mm_stub.has(DeviceType::PrivateUse1));
}

TEST(SeamMisc, MatrixProductsNeedAKernel) {
  test_util::HostDevice dev;
  Tensor a = ember::randn({3, 4}).to(host_device()), b = ember::randn({4, 5}).to(host_device());
  Tensor v = ember::randn({4}).to(host_device());
  Tensor a3 = ember::randn({2, 3, 4}).to(host_device()), b3 = ember::randn({2, 4, 5}).to(host_device());
  expect_no_kernel([&] { ember::mm(a, b); }, "mm");
  expect_no_kernel([&] { ember::matmul(a, b); }, "mm");
  expect_no_kernel([&] { ember::mv(a, v); }, "mm");
  expect_no_kernel([&] { ember::dot(v, v); }, "mm");
  expect_no_kernel([&] { ember::matmul(a3, b3); }, "matmul");
  expect_no_kernel([&] { ember::bmm(a3, b3); }, "matmul");
  expect_no_kernel([&] { ember::addmm(ember::zeros({5}).to(host_device()), a, b); }, "addmm");
  expect_no_kernel([&] { ember::einsum("ij,jk->ik", std::vector<Tensor>{a, b}); }, "matmul");
  // integer and half products reach the same stub
  expect_no_kernel([&] { ember::mm(a.to(kLong), b.to(kLong)); }, "mm");
  expect_no_kernel([&] { ember::mm(a.to(kHalf), b.to(kHalf)); }, "mm");
}

TEST(SeamMisc, MatrixProductsRunWithAnEntry) {
  test_util::HostDevice dev;
  BorrowCpuEntry<mm_stub_fn> mm(mm_stub);
  BorrowCpuEntry<bmm_stub_fn> bmm(bmm_stub);
  BorrowCpuEntry<gemm_stub_fn> gemm(gemm_stub);
  Tensor a = ember::randn({3, 4}), b = ember::randn({4, 5}), c = ember::randn({5});
  Tensor a3 = ember::randn({2, 3, 4}), b3 = ember::randn({2, 4, 5});
  Tensor da = a.to(host_device()), db = b.to(host_device()), dc = c.to(host_device());
  expect_same(ember::mm(da, db), ember::mm(a, b));
  expect_same(ember::matmul(da.t().contiguous().t(), db), ember::matmul(a, b));  // strided operand
  expect_same(ember::bmm(a3.to(host_device()), b3.to(host_device())), ember::bmm(a3, b3));
  expect_same(ember::addmm(dc, da, db, 0.5, 2.0), ember::addmm(c, a, b, 0.5, 2.0));
  expect_same(ember::mm(da.to(kLong), db.to(kLong)), ember::mm(a.to(kLong), b.to(kLong)));
  expect_same(ember::mm(da.narrow(1, 0, 0), db.narrow(0, 0, 0)), ember::zeros({3, 5}));  // an empty sum
}

TEST(SeamMisc, CompositesRunOnTheDevice) {
  test_util::HostDevice dev;
  Tensor v = ember::randn({4}), w = ember::randn({3});
  Tensor dv = v.to(host_device()), dw = w.to(host_device());
  expect_same(ember::outer(dv, dw), ember::outer(v, w));  // a broadcast multiplication
  expect_same(ember::kron(dv, dw), ember::kron(v, w));
  Tensor m = ember::randn({3, 3});
  Tensor dm = m.to(host_device());
  expect_same(ember::masked_fill(dm, dm.gt(0), 1.5), ember::masked_fill(m, m.gt(0), 1.5));
  TensorOptions on_dev = TensorOptions(kFloat).device(host_device());
  expect_same(ember::eye(3, 4, on_dev), ember::eye(3, 4, TensorOptions(kFloat)));
  expect_same(ember::zeros({2, 3}, on_dev), ember::zeros({2, 3}));
  expect_same(ember::new_zeros(dm, {2}), ember::zeros({2}));
}

TEST(SeamMisc, DevicesDoNotMix) {
  test_util::HostDevice dev;
  Tensor c = ember::randn({3, 3}), d = c.to(host_device());
  EXPECT_EQ(error_kind([&] { ember::mm(d, c); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::matmul(c, d); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::bmm(d.unsqueeze(0), c.unsqueeze(0)); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::addmm(c, d, d); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::addmm(d, d, c); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::linalg_solve(d, c); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::normal(d, c.abs()); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::bernoulli_(d, ember::full({3, 3}, 0.5)); }), ErrorKind::Runtime);
  std::string msg = message_of([&] { ember::mm(d, c); });
  EXPECT_NE(msg.find("Expected all tensors to be on the same device, but found at least two devices, "
                     "privateuseone:0 and cpu!"),
            std::string::npos)
      << msg;
  // a CPU number as bernoulli's probability joins any device (dropout passes one): no device error
  expect_no_kernel([&] { ember::bernoulli_(d, ember::full({}, 0.5)); }, "bernoulli_");
}

TEST(SeamMisc, LinalgNeedsAKernel) {
  test_util::HostDevice dev;
  Tensor a = (ember::randn({3, 3}) + ember::eye(3) * 3).to(host_device());
  expect_no_kernel([&] { ember::linalg_det(a); }, "linalg.det");
  expect_no_kernel([&] { ember::linalg_solve(a, a); }, "linalg.solve");
  expect_no_kernel([&] { ember::linalg_inv(a); }, "linalg.inv");
  expect_no_kernel([&] { ember::linalg_cholesky(a); }, "linalg.cholesky");
  expect_no_kernel([&] { ember::linalg_qr(a); }, "linalg.qr");
  expect_no_kernel([&] { ember::linalg_eigh(a); }, "linalg.eigh");
  expect_no_kernel([&] { ember::linalg_svd(a); }, "linalg.svd");
  expect_no_kernel([&] { ember::linalg_lu_factor_ex(a); }, "linalg.lu_factor");
  expect_no_kernel([&] { ember::linalg_slogdet(a); }, "linalg.slogdet");
  expect_no_kernel([&] { ember::linalg_solve_triangular(a, a, true); }, "linalg.solve_triangular");
  expect_no_kernel([&] { ember::linalg_ldl_factor_ex(a); }, "linalg.ldl_factor_ex");
  expect_no_kernel([&] { ember::geqrf(a); }, "geqrf");
  // argument checks come first, as on the CPU
  EXPECT_EQ(error_kind([&] { ember::linalg_det(ember::ones({3}).to(host_device())); }), ErrorKind::Runtime);
}

TEST(SeamMisc, LinalgRunsWithAnEntry) {
  test_util::HostDevice dev;
  BorrowCpuEntry<linalg_det_stub_fn> det(linalg_det_stub);
  BorrowCpuEntry<linalg_solve_stub_fn> solve(linalg_solve_stub);
  BorrowCpuEntry<linalg_qr_stub_fn> qr(linalg_qr_stub);
  Tensor a = ember::randn({2, 4, 4}, nullptr, TensorOptions(kDouble)) + ember::eye(4, std::nullopt, TensorOptions(kDouble)) * 4;
  Tensor b = ember::randn({2, 4, 3}, nullptr, TensorOptions(kDouble));
  Tensor da = a.to(host_device());
  expect_same(ember::linalg_det(da), ember::linalg_det(a));
  expect_same(ember::linalg_solve(da, b.to(host_device())), ember::linalg_solve(a, b));
  auto [q, r] = ember::linalg_qr(da, "complete");
  auto [q_cpu, r_cpu] = ember::linalg_qr(a, "complete");
  expect_same(q, q_cpu);
  expect_same(r, r_cpu);
  EXPECT_EQ(std::get<0>(ember::linalg_qr(da, "r")).device(), host_device());
}

TEST(SeamMisc, RandomNeedsAKernel) {
  test_util::HostDevice dev;
  Tensor d = ember::empty({8}).to(host_device());
  TensorOptions on_dev = TensorOptions().device(host_device());
  expect_no_kernel([&] { ember::uniform_(d); }, "uniform_");
  expect_no_kernel([&] { ember::normal_(d); }, "normal_");
  expect_no_kernel([&] { ember::exponential_(d); }, "exponential_");
  expect_no_kernel([&] { ember::bernoulli_(d, 0.5); }, "bernoulli_");
  expect_no_kernel([&] { ember::random_(d, 10); }, "random_");
  expect_no_kernel([&] { ember::rand({4}, nullptr, on_dev); }, "uniform_");
  expect_no_kernel([&] { ember::randn({4}, nullptr, on_dev); }, "normal_");
  expect_no_kernel([&] { ember::randint(0, 5, {4}, nullptr, on_dev); }, "random_");
  expect_no_kernel([&] { ember::rand_like(d); }, "uniform_");  // *_like keep the input's device
  expect_no_kernel([&] { ember::randperm(5, nullptr, on_dev); }, "randperm");
  expect_no_kernel([&] { ember::multinomial(ember::ones({4}).to(host_device()), 2); }, "multinomial");
  expect_no_kernel([&] { ember::poisson(ember::ones({4}).to(host_device())); }, "poisson");
  expect_no_kernel([&] { ember::normal(d, 2.0); }, "normal_");
  expect_no_kernel([&] { ember::normal(0.0, 1.0, {3}, nullptr, on_dev); }, "normal_");
  // a failed draw leaves the tensor's version and the generator's stream as they were
  uint32_t version = d.impl()->version();
  default_generator().manual_seed(3);
  EXPECT_EQ(error_kind([&] { ember::uniform_(d); }), ErrorKind::NotImplemented);
  EXPECT_EQ(d.impl()->version(), version);
  Tensor after = ember::rand({4});
  default_generator().manual_seed(3);
  EXPECT_TRUE(ember::eq(after, ember::rand({4})).all().item().to_bool());
}

// The Philox stream is the generator's, not the CPU's: a device that borrows the CPU's sampler draws
// the CPU's values for a seed, whatever the layout of the tensor it fills.
TEST(SeamMisc, RandomRunsWithAnEntry) {
  test_util::HostDevice dev;
  BorrowCpuEntry<uniform_stub_fn> uniform(uniform_stub);
  BorrowCpuEntry<random_stub_fn> random(random_stub);
  default_generator().manual_seed(11);
  Tensor cpu = ember::rand({5, 7});
  Tensor cpu_ints = ember::randint(-3, 9, {13});
  default_generator().manual_seed(11);
  Tensor on_dev = ember::rand({5, 7}, nullptr, TensorOptions().device(host_device()));
  expect_same(on_dev, cpu);
  expect_same(ember::randint(-3, 9, {13}, nullptr, TensorOptions().device(host_device())), cpu_ints);
  default_generator().manual_seed(11);
  Tensor strided = ember::empty({7, 5}).to(host_device()).t();
  ember::uniform_(strided);
  expect_same(strided.contiguous(), cpu);
  EXPECT_EQ(ember::rand_like(strided).device(), host_device());
}

TEST(SeamMisc, RangeFactoriesNeedAKernel) {
  test_util::HostDevice dev;
  TensorOptions on_dev = TensorOptions().device(host_device());
  expect_no_kernel([&] { ember::arange(0, 10, 1, on_dev); }, "arange");
  expect_no_kernel([&] { ember::linspace(0, 1, 5, on_dev); }, "linspace");
  expect_no_kernel([&] { ember::logspace(0, 1, 5, 10.0, on_dev); }, "linspace");
  BorrowCpuEntry<arange_stub_fn> arange(arange_stub);
  BorrowCpuEntry<linspace_stub_fn> linspace(linspace_stub);
  expect_same(ember::arange(-2, 11, 3, on_dev), ember::arange(-2, 11, 3));
  expect_same(ember::arange(0.5, 3, 0.25, on_dev), ember::arange(0.5, 3, 0.25));
  expect_same(ember::linspace(-3, 3, 7, on_dev), ember::linspace(-3, 3, 7));
  expect_same(ember::logspace(0, 2, 5, 2.0, on_dev), ember::logspace(0, 2, 5, 2.0));
}
