// libtorch's module API as user programs spell it (TORCH_MODULE, LeakyReLU, Dropout2d, AnyModule,
// ModuleDict, Functional, clip_grad_norm_), and a short training run, against Ember's <torch/torch.h>.
// Exits non-zero on the first wrong value.
#include <torch/torch.h>

#include "check.h"

#include <cmath>
#include <iostream>
#include <sstream>

namespace {

namespace nn = torch::nn;

struct TwoLayerImpl : nn::Module {
  TwoLayerImpl(int64_t in, int64_t hidden, int64_t out)
      : fc1(register_module("fc1", nn::Linear(in, hidden))), fc2(register_module("fc2", nn::Linear(hidden, out))) {}
  torch::Tensor forward(torch::Tensor x) { return fc2(act(fc1(x))); }
  nn::Linear fc1, fc2;
  nn::LeakyReLU act{nn::LeakyReLUOptions().negative_slope(0.1)};
};
TORCH_MODULE(TwoLayer);

// a module whose forward takes two tensors, for AnyModule's argument forwarding
struct AddImpl : nn::Module {
  torch::Tensor forward(const torch::Tensor& a, const torch::Tensor& b) { return a + b; }
};
TORCH_MODULE(Add);

void activations_and_dropout() {
  nn::LeakyReLU leaky(nn::LeakyReLUOptions().negative_slope(0.2));
  torch::Tensor x = torch::tensor({-1.0, 0.0, 2.0});
  EXPECT(torch::allclose(leaky(x), torch::tensor({-0.2, 0.0, 2.0})));
  EXPECT(torch::allclose(nn::LeakyReLU()(x), torch::tensor({-0.01, 0.0, 2.0})));
  std::ostringstream os;
  os << *leaky;
  EXPECT(os.str() == "LeakyReLU(negative_slope=0.2)");

  torch::manual_seed(0);
  nn::Dropout2d drop(nn::Dropout2dOptions(0.5));
  torch::Tensor ones = torch::ones({4, 8, 3, 3});
  torch::Tensor y = drop(ones);
  // whole channels are zeroed or scaled by 1 / (1 - p)
  torch::Tensor per_channel = y.sum({2, 3});
  EXPECT(torch::equal(torch::logical_or(per_channel == 0, per_channel == 18), torch::ones({4, 8}, torch::kBool)));
  EXPECT((per_channel == 0).any().item<bool>() && (per_channel == 18).any().item<bool>());
  drop->eval();
  EXPECT(torch::equal(drop(ones), ones));
  EXPECT(drop(torch::ones({8, 3, 3})).sizes() == std::vector<int64_t>({8, 3, 3}));
}

void functional_any_module_dict() {
  nn::Functional relu_fn(torch::relu);
  EXPECT(torch::equal(relu_fn(torch::tensor({-1.0, 3.0})), torch::tensor({0.0, 3.0})));
  nn::Functional leaky_fn(torch::leaky_relu, 0.5);
  EXPECT(torch::allclose(leaky_fn(torch::tensor({-2.0, 3.0})), torch::tensor({-1.0, 3.0})));

  nn::AnyModule any(nn::Linear(3, 2));
  torch::Tensor x = torch::ones({4, 3});
  auto linear = any.get<nn::Linear>();
  EXPECT(torch::allclose(any.forward(x), linear(x)));
  EXPECT(any.ptr()->parameters().size() == 2);
  nn::AnyModule add(Add{});
  EXPECT(torch::equal(add.forward(x, x), x * 2));
  bool wrong_arity = false;
  try {
    add.forward(x);
  } catch (const c10::Error&) {
    wrong_arity = true;
  }
  EXPECT(wrong_arity);
  EXPECT(nn::AnyModule().is_empty());

  nn::Sequential seq;
  seq->push_back(nn::AnyModule(nn::Linear(3, 3)));
  seq->push_back(relu_fn);
  EXPECT(seq->size() == 2 && seq->forward(x).min().item<float>() >= 0);

  std::vector<std::pair<std::string, std::shared_ptr<nn::Module>>> layers{{"encoder", nn::Linear(3, 4).ptr()},
                                                                        {"decoder", nn::Linear(4, 3).ptr()}};
  nn::ModuleDict dict(layers);
  EXPECT(dict->size() == 2 && dict->contains("encoder") && !dict->contains("head"));
  EXPECT(dict->keys() == std::vector<std::string>({"encoder", "decoder"}));
  auto encoder = dict->at<nn::LinearImpl>("encoder");
  EXPECT(encoder->weight.size(0) == 4);
  auto names = dict->named_parameters();
  EXPECT(names.size() == 4 && names[0].first == "encoder.weight" && names[3].first == "decoder.bias");
  bool missing = false;
  try {
    (*dict)["head"];
  } catch (const c10::Error&) {
    missing = true;
  }
  EXPECT(missing);
}

void clip_and_train() {
  torch::Tensor w = torch::zeros({2}, torch::requires_grad());
  (w * torch::tensor({3.0, 4.0})).sum().backward();
  double norm = torch::nn::utils::clip_grad_norm_({w}, 1.0);
  EXPECT(std::fabs(norm - 5.0) < 1e-5);
  EXPECT(torch::allclose(w.grad(), torch::tensor({0.6, 0.8}), 1e-4, 1e-6));
  EXPECT(std::fabs(torch::nn::utils::clip_grad_norm_({w}, 10.0) - 1.0) < 1e-4);  // under the limit: unchanged
  EXPECT(torch::allclose(w.grad(), torch::tensor({0.6, 0.8}), 1e-4, 1e-6));

  // fit y = 2 x0 - x1 + 0.5 with a small network; the loss must fall by two orders of magnitude
  torch::manual_seed(1);
  TwoLayer model(2, 16, 1);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  torch::Tensor inputs = torch::randn({256, 2});
  torch::Tensor targets = (inputs.index({torch::indexing::Slice(), torch::indexing::Slice(0, 1)}) * 2 -
                           inputs.index({torch::indexing::Slice(), torch::indexing::Slice(1, 2)}) + 0.5);
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    optimizer.zero_grad();
    torch::Tensor loss = torch::mse_loss(model(inputs), targets);
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 5.0);
    optimizer.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  EXPECT(last < first / 100);
  std::ostringstream os;
  os << model;
  EXPECT(os.str().find("(fc1): Linear(in_features=2, out_features=16, bias=True)") != std::string::npos);
}

}  // namespace

int main() {
  activations_and_dropout();
  functional_any_module_dict();
  clip_and_train();
  return libtorch_test::finish("nn_modules");
}
