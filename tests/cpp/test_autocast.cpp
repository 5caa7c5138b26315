// Autocast on the CPU (ember/autograd/autocast.h): the thread-local state and the casts that the
// generated entries of ops.yaml's `autocast:` ops apply.
#include <gtest/gtest.h>

#include <thread>

#include "ember/autograd/autocast.h"
#include "ember/autograd/engine.h"
#include "ember/autograd/grad_mode.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"

using namespace ember;

namespace {
// Turns CPU autocast on for one test and restores the defaults after it.
float max_diff(const Tensor& a, const Tensor& b) { return (a.to(kFloat) - b.to(kFloat)).abs().max().template item<float>(); }

struct CpuAutocast {
  explicit CpuAutocast(ScalarType dtype = kBFloat16) {
    autocast::set_dtype(autocast::Device::CPU, dtype);
    autocast::set_enabled(autocast::Device::CPU, true);
    autocast::increment_nesting();
  }
  ~CpuAutocast() {
    if (autocast::decrement_nesting() == 0) autocast::clear_cache();
    autocast::set_enabled(autocast::Device::CPU, false);
    autocast::set_dtype(autocast::Device::CPU, kBFloat16);
  }
};
}  // namespace

TEST(Autocast, DefaultsMatchPyTorch) {
  EXPECT_FALSE(autocast::is_enabled(autocast::Device::CPU));
  EXPECT_EQ(autocast::get_dtype(autocast::Device::CPU), kBFloat16);
  EXPECT_EQ(autocast::get_dtype(autocast::Device::CUDA), kHalf);
  EXPECT_TRUE(autocast::is_cache_enabled());
  EXPECT_FALSE(autocast::maybe_active());
}

TEST(Autocast, LowerPrecisionOpsRunInTheAutocastDtype) {
  Tensor a = ember::randn({4, 5}), b = ember::randn({5, 3});
  EXPECT_EQ(ember::mm(a, b).dtype(), kFloat);
  {
    CpuAutocast on;
    EXPECT_TRUE(autocast::maybe_active());
    Tensor r = ember::mm(a, b);
    EXPECT_EQ(r.dtype(), kBFloat16);
    EXPECT_EQ(max_diff(r, ember::mm(a.to(kBFloat16), b.to(kBFloat16))), 0.0f);
    EXPECT_EQ(ember::linear(a, b.t(), Tensor()).dtype(), kBFloat16);
    // float64 is left alone, as PyTorch's autocast does
    EXPECT_EQ(ember::mm(a.to(kDouble), b.to(kDouble)).dtype(), kDouble);
  }
  {
    CpuAutocast on(kHalf);
    EXPECT_EQ(ember::mm(a, b).dtype(), kHalf);
  }
  EXPECT_FALSE(autocast::maybe_active());
  EXPECT_EQ(ember::mm(a, b).dtype(), kFloat);
}

TEST(Autocast, Fp32AndPromotePolicies) {
  Tensor x = ember::randn({4, 3}).to(kBFloat16), y = ember::randn({4, 3});
  CpuAutocast on;
  EXPECT_EQ(ember::mse_loss(x, x, 1).dtype(), kFloat);
  EXPECT_EQ(ember::cat({x, y}, 0).dtype(), kFloat);
  EXPECT_EQ(ember::cat({x, x}, 0).dtype(), kBFloat16);
  EXPECT_EQ(ember::stack({y.to(kDouble), y}, 0).dtype(), kDouble);
  // float16 and bfloat16 together: no widest type, PyTorch raises
  EXPECT_THROW(ember::cat({x, y.to(kHalf)}, 0), Error);
  // the failed call left autocast usable
  EXPECT_EQ(ember::mm(y.t(), y).dtype(), kBFloat16);
}

TEST(Autocast, DisabledOpsKeepAutocastOutOfTheirBody) {
  // mv is built on matmul (an autocast op); PyTorch's mv is one kernel that keeps float32
  Tensor a = ember::randn({3, 4}), v = ember::randn({4});
  CpuAutocast on;
  Tensor r = ember::mv(a, v);
  EXPECT_EQ(r.dtype(), kFloat);
  EXPECT_LT(max_diff(r, ember::mm(a.to(kDouble), v.to(kDouble).unsqueeze(1)).squeeze(IntArrayRef({1}))), 1e-5f);
  EXPECT_EQ(ember::matmul(a, v).dtype(), kBFloat16);
}

TEST(Autocast, GradientsReachInputsInTheirDtype) {
  Tensor w = ember::randn({3, 5}).requires_grad_(), x = ember::randn({4, 5});
  Tensor out;
  {
    CpuAutocast on;
    out = ember::linear(x, w, Tensor());
  }
  EXPECT_EQ(out.dtype(), kBFloat16);
  autograd::backward({out.to(kFloat).sum()});
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat);
  // d(sum(x @ w^T))/dw = column sums of x, rounded through bfloat16 once
  Tensor expect = x.to(kBFloat16).sum(IntArrayRef({0})).to(kFloat).expand({3, 5});
  EXPECT_LT(max_diff(w.grad(), expect), 2e-2f);
}

TEST(Autocast, LeafWeightCastIsCachedUntilTheRegionEnds) {
  Tensor w = ember::ones({2, 2}).requires_grad_(), x = ember::ones({2, 2});
  CpuAutocast on;
  Tensor r1 = ember::mm(x, w);
  {
    autograd::NoGradGuard ng;
    w.add_(1.0);
  }
  // the cached bfloat16 copy of w is reused inside the region (PyTorch's cache does the same)
  EXPECT_EQ(max_diff(ember::mm(x, w), r1), 0.0f);
  autocast::clear_cache();
  EXPECT_EQ(ember::mm(x, w).to(kFloat).max().item<float>(), 4.0f);
  // without the cache every call casts again
  autocast::set_cache_enabled(false);
  {
    autograd::NoGradGuard ng;
    w.add_(1.0);
  }
  EXPECT_EQ(ember::mm(x, w).to(kFloat).max().item<float>(), 6.0f);
  autocast::set_cache_enabled(true);
}

TEST(Autocast, StateIsPerThread) {
  CpuAutocast on;
  bool other_enabled = true;
  ScalarType other_dtype = kFloat;
  std::thread t([&] {
    other_enabled = autocast::is_enabled(autocast::Device::CPU);
    Tensor a = ember::randn({2, 2});
    other_dtype = ember::mm(a, a).dtype();
  });
  t.join();
  EXPECT_FALSE(other_enabled);
  EXPECT_EQ(other_dtype, kFloat);
}
