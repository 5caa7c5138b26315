// Serve a model trained in Python, without Python: examples/fashion_mnist.py writes the trained CNN
// as a graph (ember.jit.trace + ember.jit.save); this program loads it with ember::jit::load and
// classifies the Fashion-MNIST test set.
//   serve_traced out/fashion_mnist_ember_traced.pt [--data DIR] [--check PROBE.safetensors]
// --check: a safetensors file with "input" and "output" written by Python from the same graph;
// the C++ result must be identical, bit for bit.
#include <cstdio>
#include <cstring>
#include <string>

#include "ember/ember.h"

using namespace ember;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.pt [--data DIR] [--check PROBE.safetensors]\n", argv[0]);
    return 2;
  }
  std::string model_path = argv[1], data = "/usr/share/datasets/fashion-mnist", check;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--data") == 0) data = argv[i + 1];
    else if (std::strcmp(argv[i], "--check") == 0) check = argv[i + 1];
  }
  jit::Module model = jit::load(model_path);
  autograd::NoGradGuard no_grad;
  std::printf("loaded %s: %zu ops, %zu parameter tensors\n", model_path.c_str(), model.graph().nodes.size(),
              model.named_parameters().size());

  if (!check.empty()) {
    TensorDict probe = load_file(check);
    Tensor got = model.forward({probe.at("input")}).toTensor();
    Tensor want = probe.at("output");
    double diff = (got - want).abs().max().item<double>();
    std::printf("C++ vs Python on %lld probe images: max |difference| = %g\n", (long long)got.size(0), diff);
    if (diff != 0.0) return 1;
  }

  data::datasets::MNIST test_set(data, data::datasets::MNIST::Mode::kTest);
  Tensor x = (test_set.images() - 0.2860) / 0.3530, y = test_set.targets();
  int64_t correct = 0;
  for (int64_t j = 0; j < x.size(0); j += 1000) {  // the graph runs on any batch size
    int64_t n = std::min<int64_t>(1000, x.size(0) - j);
    Tensor logits = model.forward({x.narrow(0, j, n)}).toTensor();
    correct += logits.argmax(1).eq(y.narrow(0, j, n)).sum().item<int64_t>();
  }
  std::printf("test accuracy %.2f%% (%lld images)\n", 100.0 * double(correct) / double(x.size(0)), (long long)x.size(0));
  return 0;
}
