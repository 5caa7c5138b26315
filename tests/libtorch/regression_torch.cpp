// examples/cpp/regression.cpp spelled as a libtorch program: the same model, data and steps through
// <torch/torch.h>'s names. A test that the loss falls tenfold, and (benchmarks/bench_libtorch_compat.sh)
// the proof that the compatibility names cost nothing: its time per step against the Ember original's.
//   regression_torch [--steps 2000]
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  int steps = 2000;
  for (int i = 1; i + 1 < argc; i++)
    if (!std::strcmp(argv[i], "--steps")) steps = std::atoi(argv[++i]);
  torch::manual_seed(0);

  torch::Tensor x = torch::linspace(-2.0, 2.0, 256).unsqueeze(1);
  torch::Tensor y = x * x * x * 0.5 - x + (x * 3.0).sin() * 0.3;

  torch::nn::Sequential model(torch::nn::Linear(1, 64), torch::nn::Tanh(), torch::nn::Linear(64, 64),
                              torch::nn::Tanh(), torch::nn::Linear(64, 1));
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  torch::optim::StepLR sched(opt, /*step_size=*/steps / 2, /*gamma=*/0.1);
  namespace F = torch::nn::functional;

  double first = 0, last = 0;
  for (int step = 0; step < steps; step++) {
    opt.zero_grad();
    torch::Tensor loss = F::mse_loss(model->forward(x), y);
    loss.backward();
    opt.step();
    sched.step();
    last = loss.item<double>();
    if (step == 0) first = last;
  }
  std::printf("regression_torch: loss %.6f -> %.6f\n", first, last);
  return last < first / 10 ? 0 : 1;
}
