#include "ember/nn/init.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/error.h"
#include "ember/generated/ops.h"

namespace ember::nn::init {

double calculate_gain(const std::string& nl, double param) {
  if (nl == "linear" || nl == "sigmoid" || nl.rfind("conv", 0) == 0) return 1.0;
  if (nl == "tanh") return 5.0 / 3;
  if (nl == "relu") return std::sqrt(2.0);
  if (nl == "leaky_relu") return std::sqrt(2.0 / (1 + param * param));
  if (nl == "selu") return 3.0 / 4;
  EMBER_FAIL(Value, "Unsupported nonlinearity ", nl);
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  EMBER_CHECK_KIND(t.dim() >= 2, Value,
                   "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); d++) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

static int64_t correct_fan(const Tensor& t, const std::string& mode) {
  EMBER_CHECK_KIND(mode == "fan_in" || mode == "fan_out", Value, "Mode ", mode,
                   " not supported, please use one of fan_in, fan_out");
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return mode == "fan_in" ? in : out;
}

Tensor uniform_(Tensor t, double a, double b) {
  autograd::NoGradGuard g;
  t.uniform_(a, b);
  return t;
}

Tensor normal_(Tensor t, double mean, double std) {
  autograd::NoGradGuard g;
  t.normal_(mean, std);
  return t;
}

Tensor constant_(Tensor t, double value) {
  autograd::NoGradGuard g;
  t.fill_(value);
  return t;
}
Tensor zeros_(Tensor t) { return init::constant_(t, 0.0); }
Tensor ones_(Tensor t) { return init::constant_(t, 1.0); }

Tensor xavier_uniform_(Tensor t, double gain) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  double a = std::sqrt(3.0) * gain * std::sqrt(2.0 / double(in + out));
  return init::uniform_(t, -a, a);
}

Tensor xavier_normal_(Tensor t, double gain) {
  auto [in, out] = calculate_fan_in_and_fan_out(t);
  return init::normal_(t, 0.0, gain * std::sqrt(2.0 / double(in + out)));
}

Tensor kaiming_uniform_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  if (t.numel() == 0) return t;
  double bound = std::sqrt(3.0) * calculate_gain(nonlinearity, a) / std::sqrt(double(correct_fan(t, mode)));
  return init::uniform_(t, -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, const std::string& mode, const std::string& nonlinearity) {
  if (t.numel() == 0) return t;
  return init::normal_(t, 0.0, calculate_gain(nonlinearity, a) / std::sqrt(double(correct_fan(t, mode))));
}

}  // namespace ember::nn::init
