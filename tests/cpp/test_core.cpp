// Core invariants: refcounting frees at once, views share storage and version, iterator coalescing.
#include <gtest/gtest.h>

#include "ember/alloc/allocator.h"
#include "ember/generated/ops.h"

using namespace ember;

TEST(Core, FreedWhenLastReferenceGoes) {
  int64_t before = cpu_memory_stats().allocated_bytes;
  {
    Tensor t = ember::zeros({256, 256});
    EXPECT_EQ(cpu_memory_stats().allocated_bytes - before, 256 * 256 * 4);
    Tensor v = t.view({-1});
    EXPECT_EQ(t.use_count(), 2);  // a differentiable view keeps its base (autograd's view tracking)
    EXPECT_EQ(t.impl()->storage().use_count(), 2);
    EXPECT_EQ(v.data_ptr(), t.data_ptr());
  }
  EXPECT_EQ(cpu_memory_stats().allocated_bytes, before);
}

TEST(Core, ViewsShareStorageAndVersion) {
  Tensor t = ember::zeros({4, 6});
  Tensor v = t.transpose(0, 1);
  EXPECT_EQ(v.data_ptr(), t.data_ptr());
  EXPECT_FALSE(v.is_contiguous());
  uint32_t before = t._version();
  v.add_(ember::ones({6, 4}));
  EXPECT_EQ(t._version(), before + 1);
  EXPECT_EQ(v._version(), t._version());
  EXPECT_EQ(t.sum().item<double>(), 24.0);
}

TEST(Core, BroadcastAndPromotion) {
  Tensor a = ember::ones({3, 1}, TensorOptions(kInt));
  Tensor b = ember::ones({4}, TensorOptions(kDouble));
  Tensor c = ember::add(a, b);
  EXPECT_EQ(c.dtype(), kDouble);
  EXPECT_EQ(c.sizes(), IntArrayRef({3, 4}));
  Tensor d = ember::mul(a, Scalar(2.5));  // a wrapped float promotes int to the default float
  EXPECT_EQ(d.dtype(), kFloat);
}

TEST(Core, BadInputThrows) {
  Tensor a = ember::ones({3});
  EXPECT_THROW(a.view({4}), Error);
  EXPECT_THROW(ember::add(a, ember::ones({4})), Error);
  EXPECT_THROW(a.select(0, 3), Error);
}

TEST(Core, FloatSumIsAccurate) {
  Tensor t = ember::full({10000000}, 0.1, TensorOptions(kFloat));
  double s = t.sum().item<double>();
  EXPECT_NEAR(s, 1e6, 1.0);
}
