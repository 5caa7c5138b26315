#include "ember/nn/layers.h"

#include <cmath>
#include <ostream>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/ops.h"
#include "ember/nn/functional.h"
#include "ember/nn/init.h"

namespace ember::nn {

namespace {

std::ostream& operator<<(std::ostream& os, const std::vector<int64_t>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); i++) os << (i ? ", " : "") << v[i];
  return os << (v.size() == 1 ? ",)" : ")");
}

const char* py_bool(bool b) { return b ? "True" : "False"; }

// kaiming_uniform(a = sqrt(5)) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias
void reset_weight_and_bias(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

}  // namespace

// ---- Linear, Flatten, activations, Functional

LinearImpl::LinearImpl(const LinearOptions& o) : Module("Linear"), options(o) {
  weight = register_parameter("weight", ember::empty({o.out_features(), o.in_features()}));
  if (o.bias()) bias = register_parameter("bias", ember::empty({o.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() { reset_weight_and_bias(weight, bias); }

Tensor LinearImpl::forward(const Tensor& input) { return ember::linear(input, weight, bias); }

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << py_bool(options.bias()) << ")";
}

FlattenImpl::FlattenImpl(const FlattenOptions& o) : Module("Flatten"), options(o) {}
Tensor FlattenImpl::forward(const Tensor& input) {
  return ember::flatten(input, options.start_dim(), options.end_dim());
}
void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

ReLUImpl::ReLUImpl() : Module("ReLU") {}
Tensor ReLUImpl::forward(const Tensor& x) { return ember::relu(x); }
TanhImpl::TanhImpl() : Module("Tanh") {}
Tensor TanhImpl::forward(const Tensor& x) { return ember::tanh(x); }
SigmoidImpl::SigmoidImpl() : Module("Sigmoid") {}
Tensor SigmoidImpl::forward(const Tensor& x) { return ember::sigmoid(x); }
GELUImpl::GELUImpl() : Module("GELU") {}
Tensor GELUImpl::forward(const Tensor& x) { return ember::gelu(x); }

FunctionalImpl::FunctionalImpl(std::function<Tensor(const Tensor&)> fn) : Module("Functional"), fn_(std::move(fn)) {
  EMBER_CHECK_KIND(bool(fn_), Value, "Functional: the function is empty");
}
Tensor FunctionalImpl::forward(const Tensor& input) { return fn_(input); }

LeakyReLUImpl::LeakyReLUImpl(const LeakyReLUOptions& o) : Module("LeakyReLU"), options(o) {}
Tensor LeakyReLUImpl::forward(const Tensor& x) {
  return options.inplace() ? ember::leaky_relu_(x, options.negative_slope()) : ember::leaky_relu(x, options.negative_slope());
}
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope();
  if (options.inplace()) os << ", inplace=True";
  os << ")";
}

// ---- convolutions

ConvImplBase::ConvImplBase(const char* name, int64_t in, int64_t out, std::vector<int64_t> k, std::vector<int64_t> s,
                           std::vector<int64_t> p, std::vector<int64_t> op, std::vector<int64_t> d, int64_t g,
                           bool with_bias, std::string mode, bool tr)
    : Module(name), kernel_size(std::move(k)), stride(std::move(s)), padding(std::move(p)),
      output_padding(std::move(op)), dilation(std::move(d)), in_channels(in), out_channels(out), groups(g),
      padding_mode(std::move(mode)), transposed(tr) {
  EMBER_CHECK_KIND(groups > 0, Value, "groups must be a positive integer");
  EMBER_CHECK_KIND(in % groups == 0, Value, "in_channels must be divisible by groups");
  EMBER_CHECK_KIND(out % groups == 0, Value, "out_channels must be divisible by groups");
  EMBER_CHECK_KIND(padding_mode == "zeros" || padding_mode == "reflect" || padding_mode == "replicate" ||
                       padding_mode == "circular",
                   Value, "padding_mode must be one of 'zeros', 'reflect', 'replicate' or 'circular', but got '",
                   padding_mode, "'");
  EMBER_CHECK_KIND(!transposed || padding_mode == "zeros", Value,
                   "Only \"zeros\" padding mode is supported for ", name);
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{in, out / groups} : std::vector<int64_t>{out, in / groups};
  shape.insert(shape.end(), kernel_size.begin(), kernel_size.end());
  weight = register_parameter("weight", ember::empty(shape));
  if (with_bias) bias = register_parameter("bias", ember::empty({out}));
  reset_parameters();
}

void ConvImplBase::reset_parameters() { reset_weight_and_bias(weight, bias); }

Tensor ConvImplBase::pad_input(const Tensor& input) const {
  // pad's order: last dim first, (left, right) per dim
  std::vector<int64_t> pads;
  for (size_t i = padding.size(); i-- > 0;) {
    pads.push_back(padding[i]);
    pads.push_back(padding[i]);
  }
  return ember::pad(input, pads, padding_mode == "circular" ? "circular" : padding_mode);
}

void ConvImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(" << in_channels << ", " << out_channels << ", kernel_size=" << kernel_size
     << ", stride=" << stride;
  if (std::any_of(padding.begin(), padding.end(), [](int64_t v) { return v != 0; })) os << ", padding=" << padding;
  if (std::any_of(dilation.begin(), dilation.end(), [](int64_t v) { return v != 1; })) os << ", dilation=" << dilation;
  if (transposed && std::any_of(output_padding.begin(), output_padding.end(), [](int64_t v) { return v != 0; }))
    os << ", output_padding=" << output_padding;
  if (groups != 1) os << ", groups=" << groups;
  if (!bias.defined()) os << ", bias=False";
  if (padding_mode != "zeros") os << ", padding_mode=" << padding_mode;
  os << ")";
}

#define EMBER_CONV_ARGS(o) \
  o.in_channels(), o.out_channels(), o.kernel_size().v, o.stride().v, o.padding().v, o.output_padding().v, \
      o.dilation().v, o.groups(), o.bias(), o.padding_mode()

Conv1dImpl::Conv1dImpl(const Conv1dOptions& o) : ConvImplBase("Conv1d", EMBER_CONV_ARGS(o), false) {}
Conv2dImpl::Conv2dImpl(const Conv2dOptions& o) : ConvImplBase("Conv2d", EMBER_CONV_ARGS(o), false) {}
ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& o)
    : ConvImplBase("ConvTranspose2d", EMBER_CONV_ARGS(o), true) {}
#undef EMBER_CONV_ARGS

Tensor Conv1dImpl::forward(const Tensor& x) {
  if (padding_mode != "zeros") {
    std::vector<int64_t> zero{0};
    return ember::conv1d(pad_input(x), weight, bias, stride, zero, dilation, groups);
  }
  return ember::conv1d(x, weight, bias, stride, padding, dilation, groups);
}

Tensor Conv2dImpl::forward(const Tensor& x) {
  if (padding_mode != "zeros") {
    std::vector<int64_t> zero{0, 0};
    return ember::conv2d(pad_input(x), weight, bias, stride, zero, dilation, groups);
  }
  return ember::conv2d(x, weight, bias, stride, padding, dilation, groups);
}

Tensor ConvTranspose2dImpl::forward(const Tensor& x) {
  return ember::conv_transpose2d(x, weight, bias, stride, padding, output_padding, groups, dilation);
}

MaxPool2dImpl::MaxPool2dImpl(const MaxPool2dOptions& o) : Module("MaxPool2d"), options(o) {}
Tensor MaxPool2dImpl::forward(const Tensor& x) {
  return ember::max_pool2d(x, options.kernel_size().ref(), options.stride().ref(), options.padding().ref(),
                           options.dilation().ref(), options.ceil_mode());
}
void MaxPool2dImpl::pretty_print(std::ostream& os) const {
  auto one = [](const ExpandingArray<2>& a) {
    return a[0] == a[1] ? std::to_string(a[0]) : "(" + std::to_string(a[0]) + ", " + std::to_string(a[1]) + ")";
  };
  os << "MaxPool2d(kernel_size=" << one(options.kernel_size()) << ", stride=" << one(options.stride())
     << ", padding=" << one(options.padding()) << ", dilation=" << one(options.dilation())
     << ", ceil_mode=" << py_bool(options.ceil_mode()) << ")";
}

// ---- normalization

BatchNormImplBase::BatchNormImplBase(const char* name, const BatchNormOptions& o) : Module(name), options(o) {
  int64_t n = o.num_features();
  if (o.affine()) {
    weight = register_parameter("weight", ember::empty({n}));
    bias = register_parameter("bias", ember::empty({n}));
  }
  if (o.track_running_stats()) {
    running_mean = register_buffer("running_mean", ember::zeros({n}));
    running_var = register_buffer("running_var", ember::ones({n}));
    num_batches_tracked = register_buffer("num_batches_tracked", ember::zeros({}, TensorOptions(kLong)));
  }
  reset_parameters();
}

void BatchNormImplBase::reset_running_stats() {
  if (!options.track_running_stats()) return;
  autograd::NoGradGuard g;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

void BatchNormImplBase::reset_parameters() {
  reset_running_stats();
  if (options.affine()) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNormImplBase::forward(const Tensor& input) {
  check_input_dim(input);
  double factor = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    {
      autograd::NoGradGuard g;
      num_batches_tracked.add_(1);
    }
    if (!options.momentum()) factor = 1.0 / num_batches_tracked.item().to_double();
  }
  bool use_batch_stats = is_training() || !options.track_running_stats();
  Tensor rm = !is_training() || options.track_running_stats() ? running_mean : Tensor();
  Tensor rv = !is_training() || options.track_running_stats() ? running_var : Tensor();
  return ember::batch_norm(input, weight, bias, rm, rv, use_batch_stats, factor, options.eps());
}

void BatchNormImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum()) os << *options.momentum();
  else os << "None";
  os << ", affine=" << py_bool(options.affine())
     << ", track_running_stats=" << py_bool(options.track_running_stats()) << ")";
}

void BatchNorm1dImpl::check_input_dim(const Tensor& x) const {
  EMBER_CHECK_KIND(x.dim() == 2 || x.dim() == 3, Value, "expected 2D or 3D input (got ", x.dim(), "D input)");
}
void BatchNorm2dImpl::check_input_dim(const Tensor& x) const {
  EMBER_CHECK_KIND(x.dim() == 4, Value, "expected 4D input (got ", x.dim(), "D input)");
}

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : Module("LayerNorm"), options(o) {
  if (o.elementwise_affine()) {
    weight = register_parameter("weight", ember::empty(o.normalized_shape()));
    if (o.bias()) bias = register_parameter("bias", ember::empty(o.normalized_shape()));
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return ember::layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm(" << options.normalized_shape() << ", eps=" << options.eps()
     << ", elementwise_affine=" << py_bool(options.elementwise_affine()) << ")";
}

// ---- dropout, embedding

DropoutImpl::DropoutImpl(const DropoutOptions& o) : Module("Dropout"), options(o) {
  EMBER_CHECK_KIND(o.p() >= 0 && o.p() <= 1, Value, "dropout probability has to be between 0 and 1, but got ", o.p());
}

Tensor DropoutImpl::forward(const Tensor& input) {
  return F::dropout(input, F::DropoutFuncOptions().p(options.p()).training(is_training()).inplace(options.inplace()));
}

void DropoutImpl::pretty_print(std::ostream& os) const {
  os << "Dropout(p=" << options.p() << ", inplace=" << py_bool(options.inplace()) << ")";
}

Dropout2dImpl::Dropout2dImpl(const DropoutOptions& o) : Module("Dropout2d"), options(o) {
  EMBER_CHECK_KIND(o.p() >= 0 && o.p() <= 1, Value, "dropout probability has to be between 0 and 1, but got ", o.p());
}
Tensor Dropout2dImpl::forward(const Tensor& input) {
  EMBER_CHECK(input.dim() == 3 || input.dim() == 4, "Dropout2d: expected a 3-D or 4-D input, got ", input.dim(), "-D");
  if (!is_training() || options.p() == 0) return input;
  // an unbatched (C, H, W) input drops channels along dim 0: treat it as a batch of one
  Tensor x = input.dim() == 3 ? ember::unsqueeze(input, 0) : input;
  Tensor y = options.inplace() ? ember::feature_dropout_(x, options.p(), true) : ember::feature_dropout(x, options.p(), true);
  return input.dim() == 3 ? (options.inplace() ? input : y.select(0, 0)) : y;
}
void Dropout2dImpl::pretty_print(std::ostream& os) const {
  os << "Dropout2d(p=" << options.p() << ", inplace=" << py_bool(options.inplace()) << ")";
}

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : Module("Embedding"), options(o) {
  if (o.padding_idx()) {
    int64_t p = *o.padding_idx(), n = o.num_embeddings();
    EMBER_CHECK_KIND(p < n && p >= -n, Value, "Padding_idx must be within num_embeddings");
    padding_idx_ = p < 0 ? p + n : p;
  }
  weight = register_parameter("weight", ember::empty({o.num_embeddings(), o.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (padding_idx_ >= 0) {
    autograd::NoGradGuard g;
    weight[padding_idx_].fill_(0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return ember::embedding(weight, indices, padding_idx_, options.scale_grad_by_freq());
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(" << options.num_embeddings() << ", " << options.embedding_dim();
  if (padding_idx_ >= 0) os << ", padding_idx=" << padding_idx_;
  os << ")";
}

// ---- losses

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& o) : Module("CrossEntropyLoss"), options(o) {
  F::reduction_enum(o.reduction());
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::cross_entropy(input, target,
                          F::CrossEntropyFuncOptions().weight(options.weight()).ignore_index(options.ignore_index())
                              .reduction(options.reduction()).label_smoothing(options.label_smoothing()));
}

MSELossImpl::MSELossImpl(const MSELossOptions& o) : Module("MSELoss"), options(o) { F::reduction_enum(o.reduction()); }
Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::mse_loss(input, target, F::MSELossFuncOptions().reduction(options.reduction()));
}

}  // namespace ember::nn
