// The C++ API of the shape/search ops and of the overloads added beside existing ops: short calls
// stay unambiguous (ember::sum(x), ember::arange(5), ember::norm(x), x.random_(...)), tuple out=.
#include <gtest/gtest.h>

#include "ember/autograd/engine.h"
#include "ember/core/operators.h"

using namespace ember;

TEST(ShapeOps, OverloadsResolve) {
  Tensor x = ember::arange(6, std::nullopt, 1, TensorOptions(kDouble)).reshape({2, 3});
  EXPECT_EQ(ember::arange(5).numel(), 5);                        // arange(start) with end=None
  EXPECT_EQ(ember::arange(5, TensorOptions(kLong)).dtype(), kLong);  // arange.end
  EXPECT_DOUBLE_EQ(ember::sum(x).item<double>(), 15.0);            // sum(self, dtype)
  EXPECT_EQ(ember::sum(x, IntArrayRef({int64_t(1)}), true).sizes(), IntArrayRef({2, 1}));
  EXPECT_DOUBLE_EQ(ember::prod(x + 1).item<double>(), 720.0);
  EXPECT_EQ(ember::prod(x, 0).sizes(), IntArrayRef({3}));
  EXPECT_NEAR(ember::norm(x).item<double>(), std::sqrt(55.0), 1e-12);  // p=2
  EXPECT_NEAR(ember::norm(x, std::string_view("fro"), std::nullopt, false, std::nullopt).item<double>(),
              std::sqrt(55.0), 1e-12);
  EXPECT_DOUBLE_EQ(ember::var(x, true).item<double>(), 3.5);
  EXPECT_EQ(ember::round(x).sizes(), x.sizes());
  EXPECT_EQ(ember::round(x, 1).sizes(), x.sizes());
  EXPECT_EQ(ember::where(ember::gt(x, scalar_to_tensor(2.0))).size(), 2u);
  EXPECT_EQ(ember::tensor_split(x, 2, 1).size(), 2u);
  EXPECT_EQ(ember::repeat_interleave(x, 2).numel(), 12);
  Tensor r = ember::empty({100}, TensorOptions(kLong));
  r.random_(3);
  EXPECT_LT(r.max().item<int64_t>(), 3);
}

TEST(ShapeOps, TupleOut) {
  Tensor x = ember::arange(6, std::nullopt, 1, TensorOptions(kFloat)).reshape({2, 3});
  Tensor v = ember::empty({0}, TensorOptions(kFloat)), i = ember::empty({0}, TensorOptions(kLong));
  auto [vv, ii] = ember::max_out(v, i, x, 1, false);
  EXPECT_TRUE(vv.is_same(v) && ii.is_same(i));
  EXPECT_EQ(v.sizes(), IntArrayRef({2}));
  EXPECT_EQ(i.sum().item<int64_t>(), 4);
}

TEST(ShapeOps, InterpolateGradientIsItsAdjoint) {
  // <upsample(x), g> == <x, upsample_backward(g)>
  Tensor x = ember::randn({1, 2, 3, 4}, nullptr, TensorOptions(kDouble));
  Tensor g = ember::randn({1, 2, 5, 7}, nullptr, TensorOptions(kDouble));
  for (const char* mode : {"bilinear", "bicubic", "nearest", "area", "bilinear-aa"}) {
    Tensor y = ember::upsample(x, {5, 7}, mode, false);
    Tensor gx = ember::upsample_backward(g, {1, 2, 3, 4}, {5, 7}, mode, false);
    EXPECT_NEAR((y * g).sum().item<double>(), (x * gx).sum().item<double>(), 1e-10) << mode;
  }
}
