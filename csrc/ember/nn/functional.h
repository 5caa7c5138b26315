#pragma once
// ember::nn::functional (alias F): the stateless counterparts of the layers. Ops whose C++
// signature already is the functional one are re-exported; the rest take libtorch-style options.
#include <string>

#include "ember/generated/ops.h"
#include "ember/nn/module.h"

namespace ember::nn::functional {

using ember::batch_norm;
using ember::conv1d;
using ember::conv2d;
using ember::conv_transpose2d;
using ember::embedding;
using ember::flatten;
using ember::gelu;
using ember::layer_norm;
using ember::linear;
using ember::log_softmax;
using ember::max_pool2d;
using ember::relu;
using ember::sigmoid;
using ember::softmax;
using ember::tanh;

// "none" / "mean" / "sum" as the integer reduction the loss ops take; anything else is a ValueError.
EMBER_API int64_t reduction_enum(const std::string& reduction);

struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;
};
EMBER_API Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {});

struct CrossEntropyFuncOptions {
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(std::string, reduction) = "mean";
  EMBER_ARG(double, label_smoothing) = 0.0;
};
EMBER_API Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& options = {});

struct NLLLossFuncOptions {
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(std::string, reduction) = "mean";
};
EMBER_API Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options = {});

struct MSELossFuncOptions {
  EMBER_ARG(std::string, reduction) = "mean";
};
EMBER_API Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});

}  // namespace ember::nn::functional

namespace ember::nn {
namespace F = functional;
}
