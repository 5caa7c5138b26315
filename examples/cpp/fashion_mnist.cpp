// Train the CNN of examples/fashion_mnist.py on Fashion-MNIST with Ember's C++ frontend: the same
// model, optimizer (Adam lr 1e-3, cosine LR), batch size and normalisation.
//
//   fashion_mnist [--epochs 4] [--limit N] [--batch-size 64] [--lr 1e-3] [--threads T] [--workers 1]
//                 [--data /usr/share/datasets/fashion-mnist] [--save model.safetensors]
//
// Prints a progress line per epoch, the train loss, test accuracy and images/s. The checkpoint
// (--save) has Python's state_dict names: nn.Sequential(...).load_state_dict(load_file(path)).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#include "ember/ember.h"

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  int epochs = 4, batch_size = 64, threads = 0, workers = 1;
  int64_t limit = 0;
  double lr = 1e-3;
  std::string data = "/usr/share/datasets/fashion-mnist", save;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--epochs") a.epochs = std::stoi(val());
    else if (k == "--limit") a.limit = std::stoll(val());
    else if (k == "--batch-size") a.batch_size = std::stoi(val());
    else if (k == "--lr") a.lr = std::stod(val());
    else if (k == "--threads") a.threads = std::stoi(val());
    else if (k == "--workers") a.workers = std::stoi(val());
    else if (k == "--data") a.data = val();
    else if (k == "--save") a.save = val();
    else {
      std::fprintf(stderr, "usage: %s [--epochs N] [--limit N] [--batch-size B] [--lr LR] [--threads T] "
                   "[--workers W] [--data DIR] [--save FILE]\n", argv[0]);
      std::exit(k == "--help" || k == "-h" ? 0 : 2);
    }
  }
  return a;
}

// The first n examples of a dataset (--limit).
class Head : public data::Dataset {
 public:
  Head(data::DatasetPtr base, int64_t n) : base_(std::move(base)), n_(std::min(n, base_->size())) {}
  data::Example get(int64_t i) override { return base_->get(i); }
  int64_t size() const override { return n_; }
 private:
  data::DatasetPtr base_;
  int64_t n_;
};

nn::Sequential build_model() {
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
      nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
      nn::Flatten(), nn::Linear(64 * 7 * 7, 128), nn::ReLU(), nn::Dropout(0.25), nn::Linear(128, 10));
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  manual_seed(0);
  if (args.threads > 0) set_num_threads(args.threads);

  const double mean = 0.2860, stddev = 0.3530;  // Fashion-MNIST training-set statistics
  auto train_raw = std::make_shared<data::datasets::MNIST>(args.data, data::datasets::MNIST::Mode::kTrain);
  data::datasets::MNIST test_set(args.data, data::datasets::MNIST::Mode::kTest);
  data::DatasetPtr train = train_raw;
  if (args.limit > 0) train = std::make_shared<Head>(train, args.limit);
  train = train->map(data::transforms::Normalize(mean, stddev));
  data::DataLoader loader(train, data::DataLoaderOptions().batch_size(args.batch_size).shuffle(true)
                                     .workers(args.workers));
  Tensor test_x = (test_set.images() - mean) / stddev, test_y = test_set.targets();

  nn::Sequential model = build_model();
  optim::Adam opt(model->parameters(), optim::AdamOptions(args.lr));
  optim::CosineAnnealingLR sched(opt, args.epochs);
  int64_t n_params = 0;
  for (auto& p : model->parameters()) n_params += p.numel();
  std::printf("ember C++: %lld parameters, %lld training images, %d threads\n", (long long)n_params,
              (long long)train->size(), get_num_threads());

  auto t_total = Clock::now();
  double acc = 0;
  for (int epoch = 1; epoch <= args.epochs; epoch++) {
    model->train();
    auto start = Clock::now();
    int64_t seen = 0, total = train->size();
    double loss_sum = 0;
    size_t i = 0;
    for (auto& batch : loader) {
      opt.zero_grad();
      Tensor loss = nn::F::cross_entropy(model(batch.data), batch.target);
      loss.backward();
      opt.step();
      int64_t b = batch.data.size(0);
      seen += b;
      loss_sum += loss.item<double>() * double(b);
      if (i++ % 20 == 0 || seen == total) {
        int filled = int(30 * seen / total);
        std::printf("\repoch %d [%s%s] %lld/%lld loss %.4f %.0f img/s", epoch, std::string(filled, '#').c_str(),
                    std::string(30 - filled, '.').c_str(), (long long)seen, (long long)total, loss_sum / seen,
                    seen / seconds_since(start));
        std::fflush(stdout);
      }
    }
    double train_time = seconds_since(start);
    sched.step();
    model->eval();
    int64_t correct = 0;
    {
      autograd::NoGradGuard no_grad;
      for (int64_t j = 0; j < test_x.size(0); j += 1000) {
        int64_t e = std::min<int64_t>(j + 1000, test_x.size(0));
        Tensor pred = model(test_x.narrow(0, j, e - j)).argmax(1);
        correct += pred.eq(test_y.narrow(0, j, e - j)).sum().item<int64_t>();
      }
    }
    acc = double(correct) / double(test_x.size(0));
    std::printf("\repoch %d: train loss %.4f  test accuracy %.2f%%  %.0f img/s  epoch %.1fs  elapsed %.1fs%20s\n",
                epoch, loss_sum / seen, 100 * acc, seen / train_time, train_time, seconds_since(t_total), "");
  }
  if (!args.save.empty()) {
    nn::save(model, args.save);
    std::printf("wrote %s\n", args.save.c_str());
  }
  std::printf("final test accuracy %.2f%% in %.1fs\n", 100 * acc, seconds_since(t_total));
  return 0;
}
