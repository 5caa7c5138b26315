// The CUDA backend from C++ (ember::cuda, ember::Device): without a GPU, the queries answer "no GPU"
// and using the device raises PyTorch's error; with one, tensors round-trip, ops match the CPU and
// the caching allocator reaches a steady state. tests/python/cuda/ covers the ops in depth.
#include <gtest/gtest.h>

#include "ember/core/operators.h"
#include "ember/core/factories.h"
#include "ember/cuda/cuda.h"
#include "ember/generated/ops.h"
#include "ember/random/generator.h"
#include "error_kind.h"

using namespace ember;
using test_util::error_kind;

namespace {
// A result on the GPU equals the CPU's: device, dtype, shape, values within float rounding.
void expect_close(const Tensor& on_gpu, const Tensor& on_cpu) {
  EXPECT_EQ(on_gpu.device().type, DeviceType::CUDA);
  Tensor back = on_gpu.to(Device());
  ASSERT_EQ(back.dtype(), on_cpu.dtype());
  ASSERT_EQ(back.sizes(), on_cpu.sizes());
  EXPECT_LT((back - on_cpu).abs().max().item().to_double(), 1e-4);
}
}  // namespace

TEST(Cuda, QueriesWithoutAGpu) {
  if (cuda::is_available()) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(cuda::device_count(), 0);
  const ErrorKind expected = cuda::is_compiled() ? ErrorKind::Runtime : ErrorKind::Assertion;
  EXPECT_EQ(error_kind([] { ember::zeros({2}, TensorOptions().device(Device("cuda"))); }), expected);
  EXPECT_EQ(error_kind([] { cuda::current_device(); }), expected);
  EXPECT_EQ(error_kind([] { cuda::memory_stats(); }), expected);
  cuda::empty_cache();  // nothing cached: a no-op, as PyTorch's
}

TEST(Cuda, TensorsOpsAndTheAllocator) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA GPU";
  const Device gpu("cuda:0");
  Tensor a = ember::randn({64, 33}), b = ember::randn({33});
  Tensor ga = a.to(gpu), gb = b.to(gpu);
  EXPECT_EQ(ga.device(), gpu);
  expect_close(ga + gb, a + b);
  expect_close((ga * gb).sum(IntArrayRef{1}), (a * b).sum(IntArrayRef{1}));
  expect_close(ga.t().contiguous(), a.t().contiguous());
  EXPECT_EQ(error_kind([&] { (void)(ga + b); }), ErrorKind::Runtime);  // mixed devices
  cuda::synchronize();
  const int64_t allocs = cuda::memory_stats().num_device_alloc;
  for (int i = 0; i < 50; i++) (void)((ga * 2 + 1).sum());
  EXPECT_EQ(cuda::memory_stats().num_device_alloc, allocs);  // served from the cache
  EXPECT_GT(cuda::memory_stats().allocated_bytes[kAllPools].current, 0);
}

// Each CUDA device has its own default generator, held on the host: seeding needs no GPU.
TEST(Cuda, PerDeviceGenerators) {
  Generator& g0 = default_generator(Device(DeviceType::CUDA, 0));
  Generator& g1 = default_generator(Device(DeviceType::CUDA, 1));
  EXPECT_NE(&g0, &g1);
  EXPECT_NE(&g0, &default_generator());
  EXPECT_EQ(&default_generator(Device()), &default_generator());
  EXPECT_EQ(g1.device(), Device(DeviceType::CUDA, 1));
  manual_seed_cuda_all(42);
  EXPECT_EQ(g0.initial_seed(), 42u);
  EXPECT_EQ(g1.initial_seed(), 42u);
  g1.manual_seed(7);
  EXPECT_EQ(g0.initial_seed(), 42u);
  EXPECT_EQ(&generator_for(nullptr, Device(DeviceType::CUDA, 1)), &g1);
  Generator cpu_gen;
  EXPECT_EQ(&generator_for(&cpu_gen, Device()), &cpu_gen);
  EXPECT_EQ(error_kind([&] { generator_for(&cpu_gen, Device(DeviceType::CUDA, 0)); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { generator_for(&g0, Device()); }), ErrorKind::Runtime);
}

TEST(Cuda, IndexingAndScatterMatchTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA GPU";
  const Device gpu("cuda:0");
  Tensor x = ember::randn({8, 5});
  Tensor idx = ember::tensor({3, 0, 3, 7}).to(kLong);
  expect_close(ember::index_select(x.to(gpu), 0, idx.to(gpu)), ember::index_select(x, 0, idx));
  Tensor gi = ember::randint(0, 8, {4, 5});
  expect_close(ember::gather(x.to(gpu), 0, gi.to(gpu)), ember::gather(x, 0, gi));
  expect_close(ember::scatter_add(x.to(gpu), 0, gi.to(gpu), ember::ones({4, 5}).to(gpu)),
               ember::scatter_add(x, 0, gi, ember::ones({4, 5})));
  Tensor mask = x.gt(0);
  expect_close(ember::nonzero(mask.to(gpu)).to(kFloat), ember::nonzero(mask).to(kFloat));
  EXPECT_EQ(error_kind([&] { ember::index_select(x.to(gpu), 0, ember::tensor({8}).to(kLong).to(gpu)); }),
            ErrorKind::Index);
}

// Matrix products on cuBLAS (loaded at the first one) and the NN kernels, from C++.
TEST(Cuda, CublasProductsAndNnKernelsMatchTheCpu) {
  if (!cuda::is_available()) GTEST_SKIP() << "no CUDA GPU";
  ASSERT_TRUE(cuda::has_cublas());
  const Device gpu("cuda:0");
  Tensor a = ember::randn({17, 9}), b = ember::randn({9, 5}), bias = ember::randn({5});
  expect_close(ember::matmul(a.to(gpu), b.to(gpu)), ember::matmul(a, b));
  expect_close(ember::matmul(a.t().to(gpu).t(), b.to(gpu)), ember::matmul(a, b));  // a transposed view
  expect_close(ember::addmm(bias.to(gpu), a.to(gpu), b.to(gpu), 0.5, 2.0), ember::addmm(bias, a, b, 0.5, 2.0));
  Tensor x = ember::randn({3, 4, 6}), y = ember::randn({3, 6, 2});
  expect_close(ember::bmm(x.to(gpu), y.to(gpu)), ember::bmm(x, y));
  expect_close(ember::log_softmax(x.to(gpu), 1), ember::log_softmax(x, 1));
  expect_close(ember::softmax(x.to(gpu), 2), ember::softmax(x, 2));
  expect_close(ember::layer_norm(x.to(gpu), {6}), ember::layer_norm(x, {6}));
  Tensor t = ember::tensor({1, 0, 3}).to(kLong);
  Tensor logits = ember::randn({3, 4});
  expect_close(ember::cross_entropy_loss(logits.to(gpu), t.to(gpu)), ember::cross_entropy_loss(logits, t));
  EXPECT_EQ(error_kind([&] { ember::nll_loss(logits.to(gpu), ember::tensor({9, 0, 0}).to(kLong).to(gpu)); }),
            ErrorKind::Index);
}
