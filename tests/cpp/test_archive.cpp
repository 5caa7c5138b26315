// serialize::OutputArchive / InputArchive and save/load of tensor lists, modules and optimizers:
// round trips of every kind of entry, the file layout Python reads, optimizers that continue exactly
// after a reload, and the errors of bad input (nothing loaded halfway, old files kept).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/nn/containers.h"
#include "ember/nn/layers.h"
#include "ember/serialize/archive.h"

using namespace ember;
using serialize::InputArchive;
using serialize::OutputArchive;
namespace fs = std::filesystem;

namespace {

struct TempDir : test_util::TempDir {
  TempDir() : test_util::TempDir("ember_archive_") {}
};

bool same(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         ember::eq(a, b).all().item<bool>();
}

nn::Sequential small_net() {
  return nn::Sequential(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 2));
}

void train_step(nn::Sequential& net, optim::Optimizer& opt, const Tensor& x, const Tensor& y) {
  opt.zero_grad();
  Tensor d = net->forward(x) - y;
  (d * d).mean().backward();
  opt.step();
}

}  // namespace

TEST(Archive, NestedTensorsAndScalarsRoundTrip) {
  TempDir dir;
  OutputArchive out, inner, deeper;
  deeper.write("z", ember::arange(3));
  inner.write("x", ember::ones({2, 2}), /*is_buffer=*/true);
  inner.write("deeper", deeper);
  inner.write("n", int64_t(-7));
  out.write("inner", inner);
  out.write("w", ember::arange(6.0).reshape({2, 3}));
  out.write("third", 1.0 / 3.0);
  out.write("flag", false);
  out.write("text", std::string("a: b\nc"));
  EXPECT_EQ(out.keys(), (std::vector<std::string>{"flag", "inner", "text", "third", "w"}));
  out.save_to(dir.file("a.pt"));

  InputArchive in;
  in.load_from(dir.file("a.pt"));
  EXPECT_EQ(in.keys(), out.keys());
  InputArchive nested, nested2;
  in.read("inner", nested);
  nested.read("deeper", nested2);
  Tensor x, z, w;
  nested.read("x", x, /*is_buffer=*/true);
  nested2.read("z", z);
  in.read("w", w);
  EXPECT_TRUE(same(x, ember::ones({2, 2})));
  EXPECT_TRUE(same(z, ember::arange(3)));
  EXPECT_TRUE(same(w, ember::arange(6.0).reshape({2, 3})));
  double third = 0;
  int64_t n = 0;
  bool flag = true;
  std::string text;
  in.read("third", third), nested.read("n", n), in.read("flag", flag), in.read("text", text);
  EXPECT_EQ(third, 1.0 / 3.0);  // bit for bit
  EXPECT_EQ(n, -7);
  EXPECT_FALSE(flag);
  EXPECT_EQ(text, "a: b\nc");
  // the nested layout is dotted keys
  EXPECT_EQ(in.tensors().count("inner.deeper.z"), 1u);
}

TEST(Archive, StreamsAndBytes) {
  OutputArchive out;
  Tensor orig = ember::randn({4, 5});
  out.write("t", orig);
  std::stringstream s;
  out.save_to(s);
  EXPECT_EQ(s.str(), out.bytes());
  InputArchive in;
  in.load_from(s);
  Tensor t;
  in.read("t", t);
  EXPECT_TRUE(same(t, orig));
  InputArchive from_bytes;
  std::string b = out.bytes();
  from_bytes.load_from(b.data(), b.size());
  Tensor t2;
  from_bytes.read("t", t2);
  EXPECT_TRUE(same(t, t2));
}

TEST(Archive, ReadIntoDefinedTensorCopiesInPlace) {
  OutputArchive out;
  out.write("p", ember::full({2, 3}, 2.5));
  std::string b = out.bytes();
  InputArchive in;
  in.load_from(b.data(), b.size());
  Tensor p = ember::zeros({2, 3}, kDouble).requires_grad_();
  void* data = p.data_ptr();
  in.read("p", p);
  EXPECT_EQ(p.data_ptr(), data);
  EXPECT_TRUE(same(p.detach(), ember::full({2, 3}, 2.5, kDouble)));
  EXPECT_TRUE(p.is_leaf());
}

TEST(Archive, BadInputRaises) {
  TempDir dir;
  OutputArchive out;
  out.write("p", ember::zeros({2, 3}));
  out.write("lr", 0.5);
  EXPECT_THROW(out.write("p", ember::zeros({1})), Error);  // duplicate key
  EXPECT_THROW(out.write("", ember::zeros({1})), Error);
  EXPECT_THROW(out.write("__format__", 1), Error);
  EXPECT_THROW(out.write("u", Tensor()), Error);
  std::string b = out.bytes();
  InputArchive in;
  in.load_from(b.data(), b.size());
  Tensor t = ember::ones({3, 2}), missing;
  EXPECT_THROW(in.read("missing", missing), Error);
  EXPECT_THROW(in.read("p", t), Error);  // shape mismatch
  EXPECT_TRUE(same(t, ember::ones({3, 2})));
  std::string s;
  EXPECT_THROW(in.read("lr", s), Error);  // a double is not a string
  InputArchive nested;
  EXPECT_THROW(in.read("p", nested), Error);
  // every truncation of a valid archive is rejected cleanly
  for (size_t n = 0; n < b.size(); n += 7) {
    InputArchive cut;
    EXPECT_THROW(cut.load_from(b.data(), n), Error) << n;
  }
  // a corrupt scalar tag
  std::string bad = b;
  size_t at = bad.find("f:0.5");
  ASSERT_NE(at, std::string::npos);
  bad[at] = 'q';
  EXPECT_THROW(in.load_from(bad.data(), bad.size()), Error);
  EXPECT_THROW(in.load_from(dir.file("nope.pt")), Error);
}

TEST(Archive, FailedSaveRaisesAndLeavesNoTemporary) {
  TempDir dir;
  OutputArchive first;
  first.write("a", ember::arange(4));
  first.save_to(dir.file("m.pt"));
  fs::create_directory(dir.file("m.pt.dir"));
  // a save that cannot happen (target is a folder) leaves nothing behind
  EXPECT_THROW(first.save_to(dir.file("m.pt.dir")), Error);
  InputArchive in;
  in.load_from(dir.file("m.pt"));
  Tensor a;
  in.read("a", a);
  EXPECT_TRUE(same(a, ember::arange(4)));
  size_t files = 0;
  for (auto& e : fs::directory_iterator(dir.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);  // no temporary left over
}

TEST(Archive, TensorListSaveLoad) {
  TempDir dir;
  std::vector<Tensor> list = {ember::arange(5), ember::randn({2, 2}), ember::zeros({0, 3})};
  save(list, dir.file("l.pt"));
  std::vector<Tensor> back;
  load(back, dir.file("l.pt"));
  ASSERT_EQ(back.size(), 3u);
  for (size_t i = 0; i < 3; i++) EXPECT_TRUE(same(list[i], back[i])) << i;
}

TEST(Archive, ModuleSaveLoadInPlace) {
  TempDir dir;
  nn::Sequential a = small_net(), b = small_net();
  nn::BatchNorm1d bn(4);
  save(a, dir.file("m.pt"));
  Tensor w = b->named_parameters()[0].second;
  void* data = w.data_ptr();
  load(b, dir.file("m.pt"));
  auto pa = a->named_parameters(), pb = b->named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); i++) EXPECT_TRUE(same(pa[i].second, pb[i].second)) << pa[i].first;
  EXPECT_EQ(b->named_parameters()[0].second.data_ptr(), data);  // in place: optimizers keep working

  // buffers travel too, and are marked as buffers in the file
  bn->named_buffers()[0].second.fill_(3.0);
  save(bn, dir.file("bn.pt"));
  nn::BatchNorm1d bn2(4);
  load(bn2, dir.file("bn.pt"));
  EXPECT_TRUE(same(bn->named_buffers()[0].second, bn2->named_buffers()[0].second));
  StringDict meta;
  load_file(dir.file("bn.pt"), &meta);
  EXPECT_NE(meta["__buffers__"].find("running_mean"), std::string::npos);

  // a module of another shape: a clear error and no change
  nn::Sequential wide(nn::Linear(3, 5), nn::ReLU(), nn::Linear(5, 2));
  Tensor before = wide->named_parameters()[0].second.clone();
  EXPECT_THROW(load(wide, dir.file("m.pt")), Error);
  EXPECT_TRUE(same(wide->named_parameters()[0].second, before));
  EXPECT_THROW(load(bn2, dir.file("m.pt")), Error);  // missing keys
}

template <class Opt, class Options>
void check_optimizer_continues(const Options& options) {
  TempDir dir;
  nn::Sequential net = small_net(), net2 = small_net();
  Opt opt(net->parameters(), options);
  Tensor x = ember::randn({8, 3}), y = ember::randn({8, 2});
  for (int i = 0; i < 3; i++) train_step(net, opt, x, y);
  save(net, dir.file("net.pt"));
  save(opt, dir.file("opt.pt"));
  Opt opt2(net2->parameters(), Options(123.0));
  load(net2, dir.file("net.pt"));
  load(opt2, dir.file("opt.pt"));
  EXPECT_EQ(opt2.param_groups()[0].options().get_lr(), options.lr());
  for (int i = 0; i < 2; i++) train_step(net, opt, x, y), train_step(net2, opt2, x, y);
  auto p1 = net->parameters(), p2 = net2->parameters();
  for (size_t i = 0; i < p1.size(); i++) EXPECT_TRUE(same(p1[i], p2[i])) << i;
}

TEST(Archive, OptimizersContinueExactlyAfterReload) {
  check_optimizer_continues<optim::Adam>(optim::AdamOptions(1e-2).betas({0.8, 0.9}).amsgrad(true));
  check_optimizer_continues<optim::AdamW>(optim::AdamWOptions(1e-2).weight_decay(0.1));
  check_optimizer_continues<optim::SGD>(optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  check_optimizer_continues<optim::RMSprop>(optim::RMSpropOptions(1e-2).centered(true).momentum(0.5));
}

TEST(Archive, OptimizerStateLayoutAndErrors) {
  TempDir dir;
  nn::Sequential net = small_net();
  optim::Adam adam(net->parameters(), optim::AdamOptions(1e-3));
  train_step(net, adam, ember::randn({4, 3}), ember::randn({4, 2}));
  save(adam, dir.file("adam.pt"));
  InputArchive in;
  in.load_from(dir.file("adam.pt"));
  std::string kind;
  in.read("optimizer", kind);
  EXPECT_EQ(kind, "Adam");
  for (const char* key : {"state.0.step", "state.0.exp_avg", "state.3.exp_avg_sq"})
    EXPECT_EQ(in.tensors().count(key), 1u) << key;
  double beta2 = 0;
  in.read("param_groups.0.betas.1", beta2);
  EXPECT_EQ(beta2, 0.999);

  // another optimizer kind or other parameters: clear errors, the optimizer unchanged
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.1));
  EXPECT_THROW(load(sgd, dir.file("adam.pt")), Error);
  nn::Linear one(3, 4);
  optim::Adam fewer(one->parameters(), optim::AdamOptions(0.5));
  EXPECT_THROW(load(fewer, dir.file("adam.pt")), Error);
  EXPECT_EQ(fewer.param_groups()[0].options().get_lr(), 0.5);
  EXPECT_EQ(fewer.find_state(one->parameters()[0]), nullptr);
}

TEST(Archive, MemberSaveLoadOfModulesAndOptimizers) {
  nn::Sequential a = small_net(), b = small_net();
  optim::SGD sa(a->parameters(), optim::SGDOptions(0.1).momentum(0.5));
  optim::SGD sb(b->parameters(), optim::SGDOptions(0.7));
  train_step(a, sa, ember::randn({4, 3}), ember::randn({4, 2}));
  OutputArchive out, model, opt;
  a->save(model);
  sa.save(opt);
  out.write("model", model);
  out.write("optimizer", opt);
  std::string bytes = out.bytes();
  InputArchive in, model_in, opt_in;
  in.load_from(bytes.data(), bytes.size());
  in.read("model", model_in);
  in.read("optimizer", opt_in);
  b->load(model_in);
  sb.load(opt_in);
  auto pa = a->parameters(), pb = b->parameters();
  for (size_t i = 0; i < pa.size(); i++) EXPECT_TRUE(same(pa[i], pb[i])) << i;
  EXPECT_EQ(sb.param_groups()[0].options().get_lr(), 0.1);
  ASSERT_NE(sb.find_state(pb[0]), nullptr);
  EXPECT_TRUE(same(sb.find_state(pb[0])->at("momentum_buffer"), sa.find_state(pa[0])->at("momentum_buffer")));
}
