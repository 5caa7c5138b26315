#include "ember/nn/rnn.h"

#include <cmath>
#include <limits>
#include <ostream>

#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/nn/init.h"

namespace ember::nn {

namespace {
Tensor squeeze_dim(const Tensor& t, int64_t d) { return t.squeeze(IntArrayRef(d)); }
}  // namespace

// ---- LSTM / GRU

RNNImplBase::RNNImplBase(const char* name, const RNNOptionsBase& o, int64_t gates)
    : Module(name), options(o), lstm_(gates == 4) {
  EMBER_CHECK_KIND(o.dropout() >= 0 && o.dropout() <= 1, Value,
                   "dropout should be a number in range [0, 1] representing the probability of an element being zeroed");
  EMBER_CHECK_KIND(o.hidden_size() > 0, Value, "hidden_size must be greater than zero");
  EMBER_CHECK_KIND(o.num_layers() > 0, Value, "num_layers must be greater than zero");
  int64_t dirs = o.bidirectional() ? 2 : 1, g = gates * o.hidden_size();
  for (int64_t layer = 0; layer < o.num_layers(); layer++) {
    for (int64_t d = 0; d < dirs; d++) {
      int64_t in = layer == 0 ? o.input_size() : o.hidden_size() * dirs;
      std::string sfx = std::to_string(layer) + (d == 1 ? "_reverse" : "");
      std::vector<Tensor> w;
      w.push_back(register_parameter("weight_ih_l" + sfx, ember::empty({g, in})));
      w.push_back(register_parameter("weight_hh_l" + sfx, ember::empty({g, o.hidden_size()})));
      if (o.bias()) {
        w.push_back(register_parameter("bias_ih_l" + sfx, ember::empty({g})));
        w.push_back(register_parameter("bias_hh_l" + sfx, ember::empty({g})));
      }
      all_weights.push_back(w);
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  double stdv = 1.0 / std::sqrt(double(options.hidden_size()));
  for (auto& p : parameters()) init::uniform_(p, -stdv, stdv);
}

void RNNImplBase::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.input_size() << ", " << options.hidden_size();
  if (options.num_layers() != 1) os << ", num_layers=" << options.num_layers();
  if (!options.bias()) os << ", bias=False";
  if (options.batch_first()) os << ", batch_first=True";
  if (options.dropout() != 0) os << ", dropout=" << options.dropout();
  if (options.bidirectional()) os << ", bidirectional=True";
  os << ")";
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, const Tensor& h0_in, const Tensor& c0_in) {
  EMBER_CHECK_KIND(input.dim() == 2 || input.dim() == 3, Value, name(), ": Expected input to be 2D or 3D, got ",
                   input.dim(), "D instead");
  const Tensor& w0 = all_weights[0][0];
  EMBER_CHECK_KIND(!input.is_floating_point() || input.dtype() == w0.dtype(), Value, "RNN input dtype (",
                   input.dtype(), ") does not match weight dtype (", w0.dtype(), ")");
  EMBER_CHECK(input.size(-1) == options.input_size(), "input.size(-1) must be equal to input_size. Expected ",
              options.input_size(), ", got ", input.size(-1));
  bool unbatched = input.dim() == 2, bf = options.batch_first();
  Tensor x = unbatched ? input.unsqueeze(bf ? 0 : 1) : input;
  if (bf) x = x.transpose(0, 1);  // (T, B, I)
  EMBER_CHECK(x.size(0) > 0, "Expected sequence length to be larger than 0 in RNN");
  int64_t dirs = options.bidirectional() ? 2 : 1, H = options.hidden_size(), B = x.size(1);
  std::vector<int64_t> state_shape{options.num_layers() * dirs, B, H};
  auto prepare = [&](const Tensor& s, const char* what) {
    if (!s.defined()) return ember::zeros(state_shape, TensorOptions(x.dtype()));
    EMBER_CHECK(s.dim() == (unbatched ? 2 : 3), "For ", unbatched ? "unbatched 2-D" : "batched 3-D",
                " input, ", what, " should also be ", unbatched ? 2 : 3, "-D but got ", s.dim(), "-D tensor");
    Tensor t = unbatched ? s.unsqueeze(1) : s;
    EMBER_CHECK(t.sizes() == IntArrayRef(state_shape), "Expected hidden size ", IntArrayRef(state_shape), ", got ",
                t.sizes());
    return t;
  };
  Tensor h0 = prepare(h0_in, "hx"), c0 = lstm_ ? prepare(c0_in, "cx") : Tensor();
  std::vector<Tensor> hs, cs;
  for (int64_t layer = 0; layer < options.num_layers(); layer++) {
    if (layer > 0 && options.dropout() > 0 && is_training()) x = ember::dropout(x, options.dropout(), true);
    std::vector<Tensor> layer_outs;
    for (int64_t d = 0; d < dirs; d++) {
      const auto& w = all_weights[layer * dirs + d];
      Tensor b_ih = options.bias() ? w[2] : Tensor(), b_hh = options.bias() ? w[3] : Tensor();
      // LSTM adds b_hh once to the input projection; GRU needs it inside r * (W_hn h + b_hn)
      Tensor b_in = b_ih.defined() && lstm_ ? b_ih + b_hh : b_ih;
      std::vector<Tensor> steps = ember::linear(x, w[0], b_in).unbind(0);
      Tensor w_hh_t = w[1].t();
      int64_t k = layer * dirs + d;
      Tensor h = h0[k], c = lstm_ ? c0[k] : Tensor();
      std::vector<Tensor> outs(steps.size());
      for (size_t i = 0; i < steps.size(); i++) {
        size_t t = d == 1 ? steps.size() - 1 - i : i;
        if (lstm_) {
          std::tie(h, c) = ember::_lstm_cell(ember::addmm(steps[t], h, w_hh_t), c);
        } else {
          Tensor gh = b_hh.defined() ? ember::addmm(b_hh, h, w_hh_t) : ember::mm(h, w_hh_t);
          h = ember::_gru_cell(steps[t], gh, h);
        }
        outs[t] = h;
      }
      layer_outs.push_back(ember::stack(outs));
      hs.push_back(h);
      cs.push_back(c);
    }
    x = dirs == 1 ? layer_outs[0] : ember::cat(layer_outs, -1);
  }
  Tensor h_n = ember::stack(hs), c_n = lstm_ ? ember::stack(cs) : Tensor();
  Tensor out = bf ? x.transpose(0, 1) : x;
  if (unbatched) {
    out = squeeze_dim(out, bf ? 0 : 1);
    h_n = squeeze_dim(h_n, 1);
    if (lstm_) c_n = squeeze_dim(c_n, 1);
  }
  return {out, h_n, c_n};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o) : RNNImplBase("LSTM", o, 4) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 const std::tuple<Tensor, Tensor>& hx) {
  EMBER_CHECK(std::get<0>(hx).defined() == std::get<1>(hx).defined(),
              "LSTM: hx must give both h_0 and c_0, or neither");
  auto [out, h, c] = run(input, std::get<0>(hx), std::get<1>(hx));
  return {out, {h, c}};
}

GRUImpl::GRUImpl(const GRUOptions& o) : RNNImplBase("GRU", o, 3) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [out, h, c] = run(input, hx, Tensor());
  return {out, h};
}

// ---- MultiheadAttention

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"), options(o) {
  int64_t E = o.embed_dim();
  EMBER_CHECK_KIND(E > 0 && o.num_heads() > 0, Value, "embed_dim and num_heads must be greater than 0, got embed_dim=",
                   E, " and num_heads=", o.num_heads(), " instead");
  EMBER_CHECK_KIND(E % o.num_heads() == 0, Value, "embed_dim must be divisible by num_heads");
  in_proj_weight = register_parameter("in_proj_weight", ember::empty({3 * E, E}));
  if (o.bias()) in_proj_bias = register_parameter("in_proj_bias", ember::empty({3 * E}));
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias())));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights) {
  int64_t E = options.embed_dim(), heads = options.num_heads(), hd = E / heads;
  EMBER_CHECK(query.dim() == 2 || query.dim() == 3, "query should be unbatched 2D or batched 3D tensor but received ",
              query.dim(), "-D query tensor");
  EMBER_CHECK(key.dim() == query.dim() && value.dim() == query.dim(), "key and value must have the same number of "
              "dims as query");
  bool batched = query.dim() == 3, bf = options.batch_first() && batched;
  Tensor q_in = bf ? query.transpose(0, 1) : query, k_in = bf ? key.transpose(0, 1) : key,
         v_in = bf ? value.transpose(0, 1) : value;
  Tensor kpm = key_padding_mask;
  if (!batched) {
    q_in = q_in.unsqueeze(1), k_in = k_in.unsqueeze(1), v_in = v_in.unsqueeze(1);
    if (kpm.defined()) kpm = kpm.unsqueeze(0);
  }
  int64_t L = q_in.size(0), N = q_in.size(1), S = k_in.size(0);
  EMBER_CHECK(q_in.size(2) == E, "was expecting embedding dimension of ", E, ", but got ", q_in.size(2));
  EMBER_CHECK(k_in.sizes() == v_in.sizes(), "key shape ", k_in.sizes(), " does not match value shape ", v_in.sizes());
  std::vector<Tensor> w = in_proj_weight.chunk(3);
  std::vector<Tensor> b = in_proj_bias.defined() ? in_proj_bias.chunk(3) : std::vector<Tensor>(3);
  // (L, N, E) -> (N * heads, L, hd)
  auto split_heads = [&](const Tensor& t, int64_t len) { return t.reshape({len, N * heads, hd}).transpose(0, 1); };
  Tensor q = split_heads(ember::linear(q_in, w[0], b[0]), L);
  Tensor k = split_heads(ember::linear(k_in, w[1], b[1]), S);
  Tensor v = split_heads(ember::linear(v_in, w[2], b[2]), S);
  // masks as additive float masks: bool true = -inf
  auto as_float = [&](const Tensor& m) {
    if (m.dtype() == kBool)
      return ember::zeros(m.sizes(), TensorOptions(q.dtype())).masked_fill(m, -std::numeric_limits<double>::infinity());
    EMBER_CHECK(m.is_floating_point(), "only bool and floating types of masks are supported");
    return m.to(q.dtype());
  };
  Tensor mask;
  if (attn_mask.defined()) {
    mask = as_float(attn_mask);
    if (mask.dim() == 2) {
      EMBER_CHECK(mask.size(0) == L && mask.size(1) == S, "The shape of the 2D attn_mask is ", mask.sizes(),
                  ", but should be (", L, ", ", S, ").");
      mask = mask.unsqueeze(0);
    } else {
      EMBER_CHECK(mask.dim() == 3 && mask.size(0) == N * heads && mask.size(1) == L && mask.size(2) == S,
                  "The shape of the 3D attn_mask is ", mask.sizes(), ", but should be (", N * heads, ", ", L, ", ", S,
                  ").");
    }
  }
  if (kpm.defined()) {
    EMBER_CHECK(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S, "expecting key_padding_mask shape of (", N,
                ", ", S, "), but got ", kpm.sizes());
    Tensor m = as_float(kpm).reshape({N, 1, 1, S}).expand({N, heads, 1, S}).reshape({N * heads, 1, S});
    mask = mask.defined() ? mask + m : m;
  }
  Tensor scores = q * std::sqrt(1.0 / double(hd));
  Tensor attn = mask.defined() ? ember::baddbmm(mask, scores, k.transpose(-2, -1)) : ember::bmm(scores, k.transpose(-2, -1));
  attn = attn.softmax(-1);
  if (options.dropout() > 0 && is_training()) attn = ember::dropout(attn, options.dropout(), true);
  Tensor out = ember::bmm(attn, v).transpose(0, 1).reshape({L * N, E});
  out = out_proj->forward(out).view({L, N, E});
  Tensor weights;
  if (need_weights) {
    weights = attn.view({N, heads, L, S});
    if (average_attn_weights) weights = weights.mean(IntArrayRef(int64_t(1)));
    if (!batched) weights = squeeze_dim(weights, 0);
  }
  if (!batched) out = squeeze_dim(out, 1);
  else if (bf) out = out.transpose(0, 1);
  return {out, weights};
}

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const {
  os << "MultiheadAttention(embed_dim=" << options.embed_dim() << ", num_heads=" << options.num_heads() << ")";
}

}  // namespace ember::nn
