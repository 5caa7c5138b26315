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

// ember::autograd::Function<T>: the C++ custom function API.
#include "ember/autograd/function.h"

struct CubeFn : autograd::Function<CubeFn> {
  static Tensor forward(autograd::AutogradContext* ctx, Tensor x, double scale) {
    ctx->save_for_backward({x});
    ctx->saved_data["scale"] = scale;
    return x * x * x * scale;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    Tensor x = ctx->get_saved_variables()[0];
    double scale = std::any_cast<double>(ctx->saved_data["scale"]);
    return {g[0] * x * x * (3.0 * scale)};
  }
};

TEST(Autograd, CppCustomFunction) {
  Tensor x = ember::full({3}, 2.0, TensorOptions(kDouble)).requires_grad_();
  Tensor y = CubeFn::apply(x, 0.5);
  EXPECT_DOUBLE_EQ(y.sum().item<double>(), 3 * 4.0);
  EXPECT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_DOUBLE_EQ(x.grad().sum().item<double>(), 3 * (3 * 4.0 * 0.5));
  // no grad needed: no graph
  Tensor z = CubeFn::apply(ember::ones({2}, TensorOptions(kDouble)), 1.0);
  EXPECT_FALSE(z.requires_grad());
}
