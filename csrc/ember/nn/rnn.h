#pragma once
// LSTM, GRU and MultiheadAttention with the parameter names and math of the Python modules
// (python/ember/nn/modules/rnn.py, activation.py): the input projection of a whole sequence is one
// matmul, the time loop calls the fused cell ops (_lstm_cell, _gru_cell).
#include <tuple>

#include "ember/nn/layers.h"

namespace ember::nn {

struct RNNOptionsBase {
  RNNOptionsBase(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  EMBER_ARG(int64_t, input_size);
  EMBER_ARG(int64_t, hidden_size);
  EMBER_ARG(int64_t, num_layers) = 1;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bidirectional) = false;
};
using LSTMOptions = RNNOptionsBase;
using GRUOptions = RNNOptionsBase;

// Parameters weight_ih_l{k}[_reverse], weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, all U(-1/sqrt(H), 1/sqrt(H)).
class EMBER_API RNNImplBase : public Module {
 public:
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  RNNOptionsBase options;
  std::vector<std::vector<Tensor>> all_weights;  // per layer and direction: w_ih, w_hh[, b_ih, b_hh]

 protected:
  RNNImplBase(const char* name, const RNNOptionsBase& options, int64_t gates);
  // output (batch_first as configured), h_n and (LSTM) c_n
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& h0, const Tensor& c0);
  bool lstm_;
};

class EMBER_API LSTMImpl : public RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  // (output, (h_n, c_n)); hx: (h_0, c_0), both defined or both undefined (zeros)
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         const std::tuple<Tensor, Tensor>& hx = {});
};
EMBER_MODULE(LSTM);

class EMBER_API GRUImpl : public RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  // (output, h_n)
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = {});
};
EMBER_MODULE(GRU);

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  EMBER_ARG(int64_t, embed_dim);
  EMBER_ARG(int64_t, num_heads);
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bias) = true;
  EMBER_ARG(bool, batch_first) = false;
};

// in_proj_weight (3E, E), in_proj_bias (3E), out_proj (Linear E -> E): Python's names.
class EMBER_API MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset_parameters();
  // (attn_output, attn_weights); weights undefined unless need_weights. key_padding_mask (N, S) and
  // attn_mask (L, S) or (N*heads, L, S): bool (true = masked out) or float (added to the scores).
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);
  void pretty_print(std::ostream& os) const override;
  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;
  Linear out_proj{nullptr};
};
EMBER_MODULE(MultiheadAttention);

}  // namespace ember::nn
