// A tour of tensors and autograd in C++: creation, ops, backward, gradients of gradients,
// no-grad mode and a custom training step written by hand.
#include <cstdio>
#include <string>

#include "ember/ember.h"

using namespace ember;

// The values of a small float tensor, as [v0, v1, ...].
static std::string str(const Tensor& t) {
  Tensor c = t.detach().to(kDouble).contiguous();
  std::string s = "[";
  char buf[32];
  for (int64_t i = 0; i < c.numel(); i++) {
    std::snprintf(buf, sizeof(buf), "%s%.4f", i ? ", " : "", c.data_ptr<double>()[i]);
    s += buf;
  }
  return s + "]";
}

int main() {
  manual_seed(0);

  // tensors that require gradients are leaves of the graph
  Tensor a = ember::randn({3}).requires_grad_();
  Tensor b = ember::ones({3}) * 2.0;
  Tensor c = (a * a + b).sum();
  c.backward();
  std::printf("a = %s\nd(sum(a^2 + 2))/da = 2a = %s\n", str(a).c_str(), str(a.grad()).c_str());

  // gradients of gradients: d/dx of d/dx x^3 = 6x
  Tensor x = ember::full({}, 1.5).requires_grad_();
  Tensor y = x * x * x;
  Tensor dy = autograd::grad({y}, {x}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
  Tensor d2y = autograd::grad({dy}, {x})[0];
  std::printf("x = 1.5: dy/dx = %.4f (3x^2 = 6.75), d2y/dx2 = %.4f (6x = 9)\n", dy.item<double>(),
              d2y.item<double>());

  // no_grad: nothing is recorded
  {
    autograd::NoGradGuard no_grad;
    Tensor z = a * 2.0;
    std::printf("under NoGradGuard, requires_grad = %s\n", z.requires_grad() ? "true" : "false");
  }

  // a linear model trained by hand with plain gradient descent
  Tensor w_true = ember::randn({4, 1}), X = ember::randn({64, 4});
  Tensor Y = X.matmul(w_true);
  Tensor w = ember::zeros({4, 1}).requires_grad_();
  for (int step = 0; step < 100; step++) {
    Tensor r = X.matmul(w) - Y;
    Tensor loss = (r * r).mean();
    if (w.grad().defined()) w.grad().zero_();
    loss.backward();
    autograd::NoGradGuard no_grad;
    w.sub_(w.grad() * 0.1);
    if (step % 25 == 0) std::printf("step %3d loss %.6f\n", step, loss.item<double>());
  }
  double err = (w.detach() - w_true).abs().max().item<double>();
  std::printf("max |w - w_true| = %.2e\n", err);
  return err < 1e-3 ? 0 : 1;
}
