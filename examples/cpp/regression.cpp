// Fit a polynomial with a small MLP and SGD: the C++ frontend's smallest complete training loop.
//   regression [--steps 2000]
// Learns y = 0.5 x^3 - x + 0.3 sin(3x) on [-2, 2] and prints the loss as it falls.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ember/ember.h"

using namespace ember;

int main(int argc, char** argv) {
  int steps = 2000;
  for (int i = 1; i + 1 < argc; i++)
    if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[++i]);
  manual_seed(0);

  Tensor x = ember::linspace(-2.0, 2.0, 256).unsqueeze(1);
  Tensor y = x * x * x * 0.5 - x + (x * 3.0).sin() * 0.3;

  nn::Sequential model(nn::Linear(1, 64), nn::Tanh(), nn::Linear(64, 64), nn::Tanh(), nn::Linear(64, 1));
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  optim::StepLR sched(opt, /*step_size=*/steps / 2, /*gamma=*/0.1);

  double first = 0, last = 0;
  for (int step = 0; step < steps; step++) {
    opt.zero_grad();
    Tensor loss = nn::F::mse_loss(model(x), y);
    loss.backward();
    opt.step();
    sched.step();
    last = loss.item<double>();
    if (step == 0) first = last;
    if (step % (steps / 10) == 0 || step == steps - 1)
      std::printf("step %5d  loss %.6f  lr %.4f\n", step, last, sched.get_last_lr()[0]);
  }
  std::printf("loss %.6f -> %.6f\n", first, last);
  return last < first / 10 ? 0 : 1;
}
