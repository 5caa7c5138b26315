// The C++ autograd API (the README's C++ tour), checked against hand-derived gradients.
#include <gtest/gtest.h>

#include "ember/autograd/engine.h"
#include "ember/core/operators.h"

using namespace ember;

TEST(Autograd, ReadmeTour) {
  Tensor x = ember::randn({3, 4}, nullptr, TensorOptions(kFloat).requires_grad(true));
  Tensor y = ember::matmul(x, x.t()).tanh().sum();
  autograd::backward({y});
  Tensor g = autograd::meta(x)->grad;
  ASSERT_TRUE(g.defined());
  EXPECT_EQ(g.sizes(), IntArrayRef({3, 4}));
}

TEST(Autograd, MulAndBroadcast) {
  Tensor a = ember::full({2, 3}, 2.0, TensorOptions(kDouble)).requires_grad_();
  Tensor b = ember::full({3}, 5.0, TensorOptions(kDouble)).requires_grad_();
  (a * b).sum().backward();
  EXPECT_DOUBLE_EQ(a.grad().sum().item<double>(), 6 * 5.0);
  EXPECT_EQ(b.grad().sizes(), IntArrayRef({3}));        // reduced back from the broadcast shape
  EXPECT_DOUBLE_EQ(b.grad().sum().item<double>(), 3 * 2 * 2.0);
  EXPECT_EQ(a.grad_fn(), nullptr);
  EXPECT_TRUE(a.is_leaf());
}

TEST(Autograd, VersionCounterError) {
  Tensor x = ember::ones({3}, TensorOptions(kFloat).requires_grad(true));
  Tensor y = x.exp();
  Tensor z = y.sum();
  y.mul_(2);  // exp saved its output
  EXPECT_THROW(z.backward(), Error);
}

TEST(Autograd, DeepChainIsIterative) {
  Tensor x = ember::ones({1}, TensorOptions(kDouble).requires_grad(true));
  Tensor y = x;
  for (int i = 0; i < 100000; i++) y = y * 1.0;
  y.sum().backward();
  EXPECT_DOUBLE_EQ(x.grad().item<double>(), 1.0);
}
