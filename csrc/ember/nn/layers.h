#pragma once
// The layers of ember::nn with their options objects, libtorch style:
//   Conv2d conv(Conv2dOptions(1, 32, 3).stride(2).padding(1));   Linear fc(3136, 128);
// Parameter names, shapes and default initialisation are those of the Python layers (kaiming_uniform
// with a = sqrt(5) for weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for biases), so state dicts interchange.
#include <optional>
#include <string>

#include "ember/nn/module.h"

namespace ember::nn {

// ---- Linear, Flatten, activations

struct EMBER_API LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features) : in_features_(in_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

class EMBER_API LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features) : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  LinearOptions options;
  Tensor weight, bias;
};
EMBER_MODULE(Linear);

struct EMBER_API FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};

class EMBER_API FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  FlattenOptions options;
};
EMBER_MODULE(Flatten);

// Parameter-free elementwise activations.
#define EMBER_ACTIVATION(Name)                          \
  class EMBER_API Name##Impl : public Module {          \
   public:                                              \
    Name##Impl();                                       \
    Tensor forward(const Tensor& input);                \
  };                                                    \
  EMBER_MODULE(Name)
EMBER_ACTIVATION(ReLU);
EMBER_ACTIVATION(Tanh);
EMBER_ACTIVATION(Sigmoid);
EMBER_ACTIVATION(GELU);
#undef EMBER_ACTIVATION

// A free function as a module (occupies a slot of a Sequential, like an activation module).
class EMBER_API FunctionalImpl : public Module {
 public:
  explicit FunctionalImpl(std::function<Tensor(const Tensor&)> fn);
  // Functional(ember::leaky_relu, 0.2): the arguments after the input, bound once
  template <class Fn, class A, class... Rest>
  FunctionalImpl(Fn fn, A a, Rest... rest)
      : FunctionalImpl(std::function<Tensor(const Tensor&)>(
            [fn, a, rest...](const Tensor& x) -> Tensor { return fn(x, a, rest...); })) {}
  Tensor forward(const Tensor& input);
 private:
  std::function<Tensor(const Tensor&)> fn_;
};
EMBER_MODULE(Functional);

struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 0.01;
  EMBER_ARG(bool, inplace) = false;
};

class EMBER_API LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  LeakyReLUOptions options;
};
EMBER_MODULE(LeakyReLU);

// ---- convolutions and pooling

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(ExpandingArray<D>, padding) = 0;
  EMBER_ARG(ExpandingArray<D>, output_padding) = 0;  // transposed convolutions only
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(std::string, padding_mode) = "zeros";  // zeros, reflect, replicate or circular
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using ConvTranspose2dOptions = ConvOptions<2>;

// The shared part of the convolutions: weight (out, in/groups, *k) or, transposed, (in, out/groups, *k).
class EMBER_API ConvImplBase : public Module {
 public:
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  Tensor weight, bias;
  std::vector<int64_t> kernel_size, stride, padding, output_padding, dilation;
  int64_t in_channels, out_channels, groups;
  std::string padding_mode;
  bool transposed;

 protected:
  ConvImplBase(const char* name, int64_t in, int64_t out, std::vector<int64_t> k, std::vector<int64_t> s,
               std::vector<int64_t> p, std::vector<int64_t> op, std::vector<int64_t> d, int64_t groups, bool bias,
               std::string padding_mode, bool transposed);
  // the input padded for a non-zeros padding_mode (the convolution then runs unpadded)
  Tensor pad_input(const Tensor& input) const;
};

class EMBER_API Conv1dImpl : public ConvImplBase {
 public:
  Conv1dImpl(int64_t in, int64_t out, ExpandingArray<1> k) : Conv1dImpl(Conv1dOptions(in, out, std::move(k))) {}
  explicit Conv1dImpl(const Conv1dOptions& o);
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Conv1d);

class EMBER_API Conv2dImpl : public ConvImplBase {
 public:
  Conv2dImpl(int64_t in, int64_t out, ExpandingArray<2> k) : Conv2dImpl(Conv2dOptions(in, out, std::move(k))) {}
  explicit Conv2dImpl(const Conv2dOptions& o);
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(Conv2d);

class EMBER_API ConvTranspose2dImpl : public ConvImplBase {
 public:
  ConvTranspose2dImpl(int64_t in, int64_t out, ExpandingArray<2> k)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in, out, std::move(k))) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& o);
  Tensor forward(const Tensor& input);
};
EMBER_MODULE(ConvTranspose2d);

struct MaxPool2dOptions {
  MaxPool2dOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  EMBER_ARG(ExpandingArray<2>, kernel_size);
  EMBER_ARG(ExpandingArray<2>, stride);  // defaults to kernel_size
  EMBER_ARG(ExpandingArray<2>, padding) = 0;
  EMBER_ARG(ExpandingArray<2>, dilation) = 1;
  EMBER_ARG(bool, ceil_mode) = false;
};

class EMBER_API MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : MaxPool2dImpl(MaxPool2dOptions(std::move(kernel_size))) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options);
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  MaxPool2dOptions options;
};
EMBER_MODULE(MaxPool2d);

// ---- normalization, dropout, embedding

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(std::optional<double>, momentum) = 0.1;  // nullopt: cumulative moving average
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
};

class EMBER_API BatchNormImplBase : public Module {
 public:
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 protected:
  BatchNormImplBase(const char* name, const BatchNormOptions& options);
  virtual void check_input_dim(const Tensor& input) const = 0;
};

class EMBER_API BatchNorm1dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm1dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm1d", options) {}
 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm1d);

class EMBER_API BatchNorm2dImpl : public BatchNormImplBase {
 public:
  explicit BatchNorm2dImpl(const BatchNormOptions& options) : BatchNormImplBase("BatchNorm2d", options) {}
 protected:
  void check_input_dim(const Tensor& input) const override;
};
EMBER_MODULE(BatchNorm2d);
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  EMBER_ARG(std::vector<int64_t>, normalized_shape);
  EMBER_ARG(double, eps) = 1e-5;
  EMBER_ARG(bool, elementwise_affine) = true;
  EMBER_ARG(bool, bias) = true;
};

class EMBER_API LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  LayerNormOptions options;
  Tensor weight, bias;
};
EMBER_MODULE(LayerNorm);

struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  EMBER_ARG(double, p);
  EMBER_ARG(bool, inplace) = false;
};

class EMBER_API DropoutImpl : public Module {
 public:
  explicit DropoutImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};
EMBER_MODULE(Dropout);

// Zeroes whole channels (dim 1 of (N, C, H, W) or of unbatched (C, H, W)) with probability p.
using Dropout2dOptions = DropoutOptions;
class EMBER_API Dropout2dImpl : public Module {
 public:
  explicit Dropout2dImpl(const DropoutOptions& options = {});
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};
EMBER_MODULE(Dropout2d);

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EMBER_ARG(int64_t, num_embeddings);
  EMBER_ARG(int64_t, embedding_dim);
  EMBER_ARG(std::optional<int64_t>, padding_idx) = std::nullopt;
  EMBER_ARG(bool, scale_grad_by_freq) = false;
};

class EMBER_API EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num, int64_t dim) : EmbeddingImpl(EmbeddingOptions(num, dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& indices);
  void pretty_print(std::ostream& os) const override;
  EmbeddingOptions options;
  Tensor weight;
 private:
  int64_t padding_idx_ = -1;  // normalised (non-negative) or -1
};
EMBER_MODULE(Embedding);

// ---- losses (reduction: "mean", "sum" or "none")

struct CrossEntropyLossOptions {
  EMBER_ARG(Tensor, weight) = {};
  EMBER_ARG(int64_t, ignore_index) = -100;
  EMBER_ARG(std::string, reduction) = "mean";
  EMBER_ARG(double, label_smoothing) = 0.0;
};

class EMBER_API CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  CrossEntropyLossOptions options;
};
EMBER_MODULE(CrossEntropyLoss);

struct MSELossOptions {
  EMBER_ARG(std::string, reduction) = "mean";
};

class EMBER_API MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);
  MSELossOptions options;
};
EMBER_MODULE(MSELoss);

}  // namespace ember::nn
