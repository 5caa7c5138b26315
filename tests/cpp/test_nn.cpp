// ember::nn (C++ frontend): module registration and traversal, state dicts and safetensors
// round trips, every layer's forward against the same math written with raw ops, default
// initialisation bounds, and argument errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "ember/ember.h"
#include "error_kind.h"

using namespace ember;

namespace {

double max_diff(const Tensor& a, const Tensor& b) { return (a.detach() - b.detach()).abs().max().item<double>(); }
double abs_max(const Tensor& a) { return a.detach().abs().max().item<double>(); }

using ember::test_util::error_kind;

std::vector<std::string> names(const nn::NamedTensors& nt) {
  std::vector<std::string> out;
  for (auto& kv : nt) out.push_back(kv.first);
  return out;
}

nn::Sequential cnn() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4), nn::ReLU(),
                        nn::MaxPool2d(2), nn::Flatten(), nn::Linear(4 * 4 * 4, 3));
}

std::string temp_file(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
}

// A user-defined module, libtorch style.
struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
    fc1 = register_module("fc1", nn::Linear(4, 8));
    fc2 = register_module("fc2", nn::Linear(8, 2));
    scale = register_parameter("scale", ember::ones({2}));
    counter = register_buffer("counter", ember::zeros({1}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) { return fc2(ember::relu(fc1(x))) * scale; }
  nn::Linear fc1{nullptr}, fc2{nullptr};
  Tensor scale, counter;
};
EMBER_MODULE(Net);

}  // namespace

TEST(NnModule, RegistrationAndTraversal) {
  Net net;
  EXPECT_EQ(names(net->named_parameters()),
            (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_EQ(net->parameters().size(), 5u);
  EXPECT_EQ(net->parameters(/*recurse=*/false).size(), 1u);
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->modules().size(), 3u);
  EXPECT_EQ(names(net->named_buffers()), std::vector<std::string>{"counter"});
  // non-persistent buffers stay out of the state dict
  EXPECT_EQ(names(net->state_dict()),
            (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  for (auto& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
  EXPECT_EQ(net(ember::randn({5, 4})).sizes(), IntArrayRef({5, 2}));
  EXPECT_EQ(error_kind([&] { net->register_parameter("scale", ember::ones({1})); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { net->register_buffer("a.b", ember::ones({1})); }), ErrorKind::Value);
}

TEST(NnModule, SequentialNamesMatchPython) {
  auto model = cnn();
  EXPECT_EQ(names(model->state_dict()),
            (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
                                      "1.num_batches_tracked", "5.weight", "5.bias"}));
  EXPECT_EQ(model->size(), 6u);
  EXPECT_NE(model->ptr<nn::Conv2dImpl>(0), nullptr);
  EXPECT_EQ(model->ptr<nn::LinearImpl>(0), nullptr);
  EXPECT_EQ(error_kind([&] { (*model)[6]; }), ErrorKind::Index);
  Tensor y = model(ember::randn({2, 1, 8, 8}));
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3}));
}

TEST(NnModule, TrainEvalToAndZeroGrad) {
  auto model = cnn();
  EXPECT_TRUE(model->ptr<nn::BatchNorm2dImpl>(1)->is_training());
  model->eval();
  EXPECT_FALSE(model->ptr<nn::BatchNorm2dImpl>(1)->is_training());
  model->train();
  EXPECT_TRUE(model->ptr<nn::BatchNorm2dImpl>(1)->is_training());

  auto lin = model->ptr<nn::LinearImpl>(5);
  Tensor w = lin->weight;
  Tensor before = w.detach().clone();
  model->to(kDouble);
  // same tensor objects, new dtype: members and optimizers keep working
  EXPECT_EQ(lin->weight.dtype(), kDouble);
  EXPECT_TRUE(w.is_same(lin->weight));
  EXPECT_EQ(model->ptr<nn::BatchNorm2dImpl>(1)->num_batches_tracked.dtype(), kLong);
  EXPECT_LT(max_diff(w.to(kFloat), before), 1e-7);
  EXPECT_EQ(error_kind([&] { model->to(kLong); }), ErrorKind::Type);

  Tensor loss = model(ember::randn({2, 1, 8, 8}, nullptr, TensorOptions(kDouble))).sum();
  loss.backward();
  EXPECT_TRUE(lin->weight.grad().defined());
  model->zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(abs_max(lin->weight.grad()), 0.0);
  model->zero_grad();
  EXPECT_FALSE(lin->weight.grad().defined());
}

TEST(NnModule, StateDictLoadAndSafetensors) {
  manual_seed(1);
  auto a = cnn();
  auto b = cnn();
  EXPECT_GT(max_diff(a->ptr<nn::LinearImpl>(5)->weight, b->ptr<nn::LinearImpl>(5)->weight), 0);
  b->load_state_dict(a->state_dict());
  for (size_t i = 0; i < a->state_dict().size(); i++)
    EXPECT_EQ(max_diff(a->state_dict()[i].second.to(kDouble), b->state_dict()[i].second.to(kDouble)), 0);

  auto c = cnn();
  std::string path = temp_file("nn_state.safetensors");
  nn::save(a, path);
  TensorDict file = load_file(path);
  EXPECT_EQ(file.size(), 9u);
  EXPECT_EQ(file.at("1.num_batches_tracked").dtype(), kLong);
  nn::load(c, path);
  Tensor x = ember::randn({2, 1, 8, 8});
  a->eval();
  c->eval();
  EXPECT_EQ(max_diff(a(x), c(x)), 0);

  // a model with other shapes or names is rejected before anything is written
  nn::Sequential other(nn::Conv2d(nn::Conv2dOptions(1, 5, 3).padding(1)));
  EXPECT_THROW(nn::load(other, path), Error);
  auto partial = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)));
  EXPECT_THROW(nn::load(partial, path), Error);
  auto res = nn::load(partial, path, /*strict=*/false);
  EXPECT_TRUE(res.missing_keys.empty());
  EXPECT_EQ(res.unexpected_keys.size(), 7u);
  nn::NamedTensors bad{{"0.weight", ember::zeros({1})}};
  EXPECT_THROW(partial->load_state_dict(bad), Error);
  std::filesystem::remove(path);
}

TEST(NnModule, PrettyPrint) {
  std::ostringstream os;
  os << nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Dropout(0.25));
  EXPECT_EQ(os.str(),
            "Sequential(\n  (0): Linear(in_features=3, out_features=4, bias=True)\n  (1): ReLU()\n"
            "  (2): Dropout(p=0.25, inplace=False)\n)");
}

TEST(NnLayers, LinearForwardAndInit) {
  nn::Linear fc(nn::LinearOptions(100, 50));
  double bound = 1 / std::sqrt(100.0);
  EXPECT_LE(abs_max(fc->weight), bound);
  EXPECT_LE(abs_max(fc->bias), bound);
  // U(-b, b) has std b / sqrt(3)
  double sd = fc->weight.std().item<double>();
  EXPECT_NEAR(sd, bound / std::sqrt(3.0), 0.1 * bound);
  Tensor x = ember::randn({7, 100});
  EXPECT_LT(max_diff(fc(x), x.matmul(fc->weight.t()) + fc->bias), 1e-5);
  nn::Linear nobias(nn::LinearOptions(3, 2).bias(false));
  EXPECT_FALSE(nobias->bias.defined());
  EXPECT_EQ(nobias->parameters().size(), 1u);
}

TEST(NnLayers, Convolutions) {
  nn::Conv2d conv(nn::Conv2dOptions(3, 8, 3).stride(2).padding(1));
  EXPECT_EQ(conv->weight.sizes(), IntArrayRef({8, 3, 3, 3}));
  EXPECT_LE(abs_max(conv->weight), 1 / std::sqrt(27.0));
  Tensor x = ember::randn({2, 3, 9, 9});
  Tensor y = conv(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 8, 5, 5}));
  std::vector<int64_t> s2{2, 2}, p1{1, 1};
  EXPECT_EQ(max_diff(y, ember::conv2d(x, conv->weight, conv->bias, s2, p1)), 0);

  nn::Conv2d refl(nn::Conv2dOptions(3, 4, 3).padding(1).padding_mode("reflect").bias(false));
  std::vector<int64_t> pads{1, 1, 1, 1};
  EXPECT_LT(max_diff(refl(x), ember::conv2d(ember::pad(x, pads, "reflect"), refl->weight, Tensor(), 1, std::vector<int64_t>{0, 0})), 1e-6);
  EXPECT_EQ(error_kind([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding_mode("mirror")); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([] { nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)); }), ErrorKind::Value);

  nn::Conv1d c1(nn::Conv1dOptions(4, 6, 5).dilation(2).groups(2));
  EXPECT_EQ(c1->weight.sizes(), IntArrayRef({6, 2, 5}));
  EXPECT_EQ(c1(ember::randn({3, 4, 20})).sizes(), IntArrayRef({3, 6, 12}));

  nn::ConvTranspose2d ct(nn::ConvTranspose2dOptions(8, 3, 3).stride(2).padding(1).output_padding(1));
  EXPECT_EQ(ct->weight.sizes(), IntArrayRef({8, 3, 3, 3}));
  EXPECT_EQ(ct(y).sizes(), IntArrayRef({2, 3, 10, 10}));

  nn::MaxPool2d pool(nn::MaxPool2dOptions(2).stride(1));
  EXPECT_EQ(pool(x).sizes(), IntArrayRef({2, 3, 8, 8}));
}

TEST(NnLayers, BatchNorm) {
  nn::BatchNorm2d bn(nn::BatchNormOptions(3).momentum(0.5));
  Tensor x = ember::randn({4, 3, 5, 5}) * 2.0 + 1.0;
  Tensor y = bn(x);
  std::vector<int64_t> dims{0, 2, 3};
  Tensor mean = x.mean(dims), var = x.var(dims, /*unbiased=*/true);
  EXPECT_LT(abs_max(y.mean(dims)), 1e-5);
  EXPECT_LT(max_diff(bn->running_mean, mean * 0.5), 1e-5);
  EXPECT_LT(max_diff(bn->running_var, var * 0.5 + 0.5), 1e-4);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  bn->eval();
  Tensor ye = bn(x);
  Tensor ref = (x - bn->running_mean.view({1, 3, 1, 1})) / (bn->running_var.view({1, 3, 1, 1}) + 1e-5).sqrt();
  EXPECT_LT(max_diff(ye, ref), 1e-5);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_EQ(error_kind([&] { bn(ember::randn({2, 3})); }), ErrorKind::Value);

  nn::BatchNorm1d bn1(nn::BatchNormOptions(4).affine(false).momentum(std::nullopt));
  EXPECT_EQ(bn1->parameters().size(), 0u);
  bn1(ember::randn({8, 4}));
  bn1(ember::randn({8, 4, 3}));
  EXPECT_EQ(bn1->num_batches_tracked.item<int64_t>(), 2);
  EXPECT_EQ(error_kind([&] { bn1(ember::randn({2, 4, 3, 3})); }), ErrorKind::Value);
}

TEST(NnLayers, LayerNormDropoutEmbedding) {
  nn::LayerNorm ln(nn::LayerNormOptions({6}));
  Tensor x = ember::randn({4, 6}) * 3.0;
  Tensor y = ln(x);
  std::vector<int64_t> last{-1};
  EXPECT_LT(abs_max(y.mean(last)), 1e-5);
  EXPECT_EQ(names(ln->named_parameters()), (std::vector<std::string>{"weight", "bias"}));

  nn::Dropout drop(0.25);
  Tensor ones = ember::ones({10000});
  Tensor d = drop(ones);
  double kept = d.ne(0.0).to(kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 0.75, 0.03);
  EXPECT_NEAR(d.max().item<double>(), 1 / 0.75, 1e-6);
  drop->eval();
  EXPECT_EQ(max_diff(drop(ones), ones), 0);
  EXPECT_EQ(error_kind([] { nn::Dropout(1.5); }), ErrorKind::Value);

  nn::Embedding emb(nn::EmbeddingOptions(10, 3).padding_idx(-1));
  EXPECT_EQ(abs_max(emb->weight[9]), 0.0);
  Tensor idx = ember::arange(0, 10, 3, TensorOptions(kLong));  // 0, 3, 6, 9
  Tensor e = emb(idx);
  EXPECT_EQ(e.sizes(), IntArrayRef({4, 3}));
  EXPECT_EQ(max_diff(e[1], emb->weight[3]), 0);
  EXPECT_EQ(error_kind([] { nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(10)); }), ErrorKind::Value);
}

TEST(NnLayers, LSTMMatchesGateMath) {
  manual_seed(3);
  nn::LSTM lstm(nn::LSTMOptions(3, 4));
  EXPECT_EQ(names(lstm->named_parameters()),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"}));
  EXPECT_LE(abs_max(lstm->all_weights[0][0]), 0.5);  // U(-1/sqrt(H), 1/sqrt(H))
  Tensor x = ember::randn({5, 2, 3});
  auto [out, state] = lstm(x);
  auto [h_n, c_n] = state;
  EXPECT_EQ(out.sizes(), IntArrayRef({5, 2, 4}));
  EXPECT_EQ(h_n.sizes(), IntArrayRef({1, 2, 4}));
  // step by step with the gate equations (i, f, g, o)
  auto& w = lstm->all_weights[0];
  Tensor h = ember::zeros({2, 4}), c = ember::zeros({2, 4});
  for (int64_t t = 0; t < 5; t++) {
    Tensor gates = x[t].matmul(w[0].t()) + w[2] + h.matmul(w[1].t()) + w[3];
    std::vector<Tensor> g = gates.chunk(4, 1);
    c = g[1].sigmoid() * c + g[0].sigmoid() * g[2].tanh();
    h = g[3].sigmoid() * c.tanh();
    EXPECT_LT(max_diff(out[t], h), 1e-5);
  }
  EXPECT_LT(max_diff(c_n[0], c), 1e-5);

  nn::LSTM bi(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  EXPECT_EQ(bi->parameters().size(), 16u);
  auto [ob, sb] = bi(ember::randn({2, 5, 3}));
  EXPECT_EQ(ob.sizes(), IntArrayRef({2, 5, 8}));
  EXPECT_EQ(std::get<1>(sb).sizes(), IntArrayRef({4, 2, 4}));
  // unbatched input and explicit state
  auto [ou, su] = lstm(ember::randn({5, 3}), std::make_tuple(ember::zeros({1, 4}), ember::zeros({1, 4})));
  EXPECT_EQ(ou.sizes(), IntArrayRef({5, 4}));
  EXPECT_THROW(lstm(ember::randn({5, 2, 7})), Error);
}

TEST(NnLayers, GRUMatchesGateMath) {
  nn::GRU gru(nn::GRUOptions(3, 4));
  Tensor x = ember::randn({4, 2, 3}), h0 = ember::randn({1, 2, 4});
  auto [out, h_n] = gru(x, h0);
  auto& w = gru->all_weights[0];
  Tensor h = h0[0];
  for (int64_t t = 0; t < 4; t++) {
    std::vector<Tensor> gi = (x[t].matmul(w[0].t()) + w[2]).chunk(3, 1);
    std::vector<Tensor> gh = (h.matmul(w[1].t()) + w[3]).chunk(3, 1);
    Tensor r = (gi[0] + gh[0]).sigmoid(), z = (gi[1] + gh[1]).sigmoid();
    Tensor n = (gi[2] + r * gh[2]).tanh();
    h = (1.0 - z) * n + z * h;
    EXPECT_LT(max_diff(out[t], h), 1e-5);
  }
  EXPECT_LT(max_diff(h_n[0], h), 1e-5);
}

TEST(NnLayers, MultiheadAttention) {
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2));
  EXPECT_EQ(names(mha->named_parameters()),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  Tensor q = ember::randn({3, 2, 8}), kv = ember::randn({5, 2, 8});
  auto [out, w] = mha(q, kv, kv);
  EXPECT_EQ(out.sizes(), IntArrayRef({3, 2, 8}));
  EXPECT_EQ(w.sizes(), IntArrayRef({2, 3, 5}));
  std::vector<int64_t> last{-1};
  EXPECT_LT(max_diff(w.sum(last), ember::ones({2, 3})), 1e-5);
  // one head by hand: softmax(q k^T / sqrt(d)) v, then the output projection
  nn::MultiheadAttention one(nn::MultiheadAttentionOptions(4, 1));
  Tensor x = ember::randn({3, 1, 4});
  auto [o1, w1] = one(x, x, x);
  std::vector<Tensor> W = one->in_proj_weight.chunk(3), B = one->in_proj_bias.chunk(3);
  Tensor x2 = x.select(1, 0);
  Tensor qq = x2.matmul(W[0].t()) + B[0], kk = x2.matmul(W[1].t()) + B[1], vv = x2.matmul(W[2].t()) + B[2];
  Tensor att = (qq.matmul(kk.t()) / 2.0).softmax(-1);
  Tensor ref = att.matmul(vv).matmul(one->out_proj->weight.t()) + one->out_proj->bias;
  EXPECT_LT(max_diff(o1.select(1, 0), ref), 1e-5);
  // masked keys get no weight
  Tensor kpm = ember::zeros({2, 5}, TensorOptions(kBool));
  kpm.select(1, 4).fill_(1);
  auto [om, wm] = mha(q, kv, kv, kpm);
  EXPECT_EQ(abs_max(wm.select(2, 4)), 0.0);
  EXPECT_EQ(error_kind([] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 3)); }), ErrorKind::Value);
}

TEST(NnLayers, FunctionalAndModuleList) {
  nn::Sequential seq(nn::Linear(3, 3), nn::Functional([](const Tensor& x) { return x * 2.0; }));
  Tensor x = ember::randn({2, 3});
  auto lin = seq->ptr<nn::LinearImpl>(0);
  EXPECT_LT(max_diff(seq(x), lin->forward(x) * 2.0), 1e-6);

  nn::ModuleList list(nn::Linear(2, 2), nn::GRU(2, 2));
  list->push_back(nn::Linear(2, 1));
  EXPECT_EQ(list->size(), 3u);
  EXPECT_EQ(names(list->named_parameters())[0], "0.weight");
  EXPECT_NE(list->ptr<nn::GRUImpl>(1), nullptr);
  size_t n = 0;
  for (auto& m : *list) n += m->parameters().size();
  EXPECT_EQ(n, 2u + 4u + 2u);

  Tensor logits = ember::randn({4, 5}), target = ember::arange(0, 4, 1, TensorOptions(kLong));
  Tensor ce = nn::F::cross_entropy(logits, target);
  Tensor ref = -(logits.log_softmax(1) * ember::one_hot(target, 5).to(kFloat)).sum() / 4.0;
  EXPECT_LT(max_diff(ce, ref), 1e-5);
  EXPECT_EQ(nn::F::cross_entropy(logits, target, nn::F::CrossEntropyFuncOptions().reduction("none")).sizes(),
            IntArrayRef({4}));
  EXPECT_EQ(error_kind([&] { nn::F::mse_loss(logits, logits, nn::F::MSELossFuncOptions().reduction("avg")); }),
            ErrorKind::Value);
  nn::CrossEntropyLoss loss_fn;
  EXPECT_LT(max_diff(loss_fn(logits, target), ce), 1e-7);
}

TEST(NnInit, Bounds) {
  Tensor w = ember::empty({64, 32});
  nn::init::xavier_uniform_(w);
  EXPECT_LE(abs_max(w), std::sqrt(6.0 / 96));
  nn::init::kaiming_uniform_(w, 0, "fan_in", "relu");
  EXPECT_LE(abs_max(w), std::sqrt(6.0 / 32));
  nn::init::kaiming_normal_(w, 0, "fan_out");
  EXPECT_NEAR(w.std().item<double>(), std::sqrt(2.0 / 64), 0.02);
  EXPECT_DOUBLE_EQ(nn::init::calculate_gain("tanh"), 5.0 / 3);
  EXPECT_EQ(nn::init::calculate_fan_in_and_fan_out(ember::empty({8, 4, 3, 3})), std::make_pair(int64_t(36), int64_t(72)));
  EXPECT_EQ(error_kind([] { nn::init::xavier_uniform_(ember::empty({3})); }), ErrorKind::Value);
  EXPECT_EQ(error_kind([&] { nn::init::kaiming_uniform_(w, 0, "fan_avg"); }), ErrorKind::Value);
}
