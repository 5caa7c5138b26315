#pragma once
// ember::nn::init: in-place initialisers, run without autograd, with the formulas (and the random
// stream, one uniform_/normal_ call per tensor) of ember.nn.init and torch.nn.init.
#include <string>
#include <utility>

#include "ember/core/tensor.h"

namespace ember::nn::init {

EMBER_API double calculate_gain(const std::string& nonlinearity, double param = 0.01);
// (fan_in, fan_out) of a weight with at least 2 dims: (dim 1, dim 0) times the receptive field size
EMBER_API std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

EMBER_API Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0);
EMBER_API Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0);
EMBER_API Tensor constant_(Tensor tensor, double value);
EMBER_API Tensor zeros_(Tensor tensor);
EMBER_API Tensor ones_(Tensor tensor);
EMBER_API Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
EMBER_API Tensor xavier_normal_(Tensor tensor, double gain = 1.0);
// mode: "fan_in" or "fan_out"
EMBER_API Tensor kaiming_uniform_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                                  const std::string& nonlinearity = "leaky_relu");
EMBER_API Tensor kaiming_normal_(Tensor tensor, double a = 0.0, const std::string& mode = "fan_in",
                                 const std::string& nonlinearity = "leaky_relu");

}  // namespace ember::nn::init
