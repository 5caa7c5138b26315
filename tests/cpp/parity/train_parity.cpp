// Trains the Fashion-MNIST CNN from fixed weights on fixed batches and prints one loss per step,
// for tests/python/test_cpp_frontend.py, which runs the same steps in Python and compares.
//   ember_train_parity INIT.safetensors BATCHES.safetensors OPTIMIZER STEPS OUT.safetensors [--time]
//   ember_train_parity --init SEED OUT.safetensors   (the model's default initialisation after manual_seed(SEED))
// OPTIMIZER: sgd | adam | adamw | rmsprop. BATCHES holds x0, y0, x1, y1, ... (used in turn).
// The default generator is seeded with 1 before training (dropout masks match Python's).
// --time (benchmarks/bench_cpp_training.py): also print to stderr the seconds taken by the steps
// after the first 3 (warm-up) as "timed_steps N seconds S".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "ember/ember.h"

using namespace ember;

// Layers created one statement at a time: the arguments of Sequential(a, b, ...) are evaluated in
// an unspecified order (right to left with GCC), so their random initialisation would not follow
// Python's order.
static nn::Sequential build_model() {
  nn::Sequential m;
  m->push_back(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)));
  m->push_back(nn::ReLU());
  m->push_back(nn::MaxPool2d(2));
  m->push_back(nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)));
  m->push_back(nn::ReLU());
  m->push_back(nn::MaxPool2d(2));
  m->push_back(nn::Flatten());
  m->push_back(nn::Linear(64 * 7 * 7, 128));
  m->push_back(nn::ReLU());
  m->push_back(nn::Dropout(0.25));
  m->push_back(nn::Linear(128, 10));
  return m;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--init") {
    manual_seed(std::strtoull(argv[2], nullptr, 10));
    nn::save(build_model(), argv[3]);
    return 0;
  }
  bool timed = argc == 7 && std::string(argv[6]) == "--time";
  if (argc != 6 && !timed) {
    std::fprintf(stderr, "usage: %s INIT BATCHES OPTIMIZER STEPS OUT [--time]\n", argv[0]);
    return 2;
  }
  std::string which = argv[3];
  int steps = std::atoi(argv[4]);
  nn::Sequential model = build_model();
  nn::load(model, argv[1]);
  TensorDict batches = load_file(argv[2]);
  int n_batches = int(batches.size() / 2);

  std::unique_ptr<optim::Optimizer> opt;
  if (which == "sgd") opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(0.05).momentum(0.9).nesterov(true).weight_decay(1e-4));
  else if (which == "adam") opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(1e-3));
  else if (which == "adamw") opt = std::make_unique<optim::AdamW>(model->parameters(), optim::AdamWOptions(2e-3).amsgrad(true));
  else if (which == "rmsprop") opt = std::make_unique<optim::RMSprop>(model->parameters(), optim::RMSpropOptions(1e-3).momentum(0.5).centered(true));
  else {
    std::fprintf(stderr, "unknown optimizer %s\n", which.c_str());
    return 2;
  }
  optim::CosineAnnealingLR sched(*opt, /*T_max=*/4);

  manual_seed(1);
  model->train();
  const int warmup = 3;
  auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; step++) {
    if (step == warmup) start = std::chrono::steady_clock::now();
    int b = step % n_batches;
    const Tensor& x = batches.at("x" + std::to_string(b));
    const Tensor& y = batches.at("y" + std::to_string(b));
    opt->zero_grad();
    Tensor loss = nn::F::cross_entropy(model(x), y);
    loss.backward();
    opt->step();
    sched.step();
    std::printf("%.9g\n", loss.item<double>());
  }
  if (timed && steps > warmup)
    std::fprintf(stderr, "timed_steps %d seconds %.6f\n", steps - warmup,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  nn::save(model, argv[5]);
  return 0;
}
