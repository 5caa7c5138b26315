// libtorch-style program: torch::save / torch::load of a tensor, a tensor list, a module and an Adam
// optimizer, archives with nested entries and scalars, and the errors of bad input. Exits nonzero on
// any wrong value.
//   serialize_roundtrip [DIR]  writes DIR/cpp_written.pt (read by tests/python/test_archive.py) and,
//   if DIR/py_written.pt exists (written by that test), checks its entries.
// Includes <torch/serialize.h> and Ember's headers directly (not <torch/torch.h>, written in
// parallel); with <torch/torch.h> in place the program needs no change beyond that include.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <torch/torch.h>

#include "check.h"

namespace nn = ember::nn;
using ember::Tensor;

template <class F>
static bool throws(F&& f) {
  try {
    f();
  } catch (const ember::Error&) {
    return true;
  }
  return false;
}

static bool same(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         ember::eq(a, b).all().item<bool>();
}

struct NetImpl : nn::Module {
  NetImpl() {
    fc1 = register_module("fc1", nn::Linear(4, 8));
    fc2 = register_module("fc2", nn::Linear(8, 2));
    scale = register_buffer("scale", ember::full({2}, 0.5));
  }
  Tensor forward(const Tensor& x) { return fc2->forward(ember::relu(fc1->forward(x))) * scale; }
  nn::Linear fc1{nullptr}, fc2{nullptr};
  Tensor scale;
};
EMBER_MODULE(Net);

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp/ember_serialize_roundtrip_" + std::to_string(::getpid());
  if (argc <= 1) std::system(("mkdir -p " + dir).c_str());
  auto file = [&](const char* name) { return dir + "/" + name; };

  // a tensor and a list of tensors
  Tensor t = ember::randn({3, 5});
  torch::save(t, file("t.pt"));
  Tensor t2;
  torch::load(t2, file("t.pt"));
  EXPECT(same(t, t2));
  std::vector<Tensor> list = {ember::arange(6).reshape({2, 3}), ember::ones({4}, ember::kDouble)};
  torch::save(list, file("list.pt"));
  std::vector<Tensor> list2;
  torch::load(list2, file("list.pt"));
  EXPECT(list2.size() == 2 && same(list[0], list2[0]) && same(list[1], list2[1]));

  // a module and its Adam state; the loaded pair continues exactly like the original
  Net net;
  ember::optim::Adam adam(net->parameters(), ember::optim::AdamOptions(1e-2).betas({0.8, 0.95}));
  Tensor x = ember::randn({16, 4}), y = ember::randn({16, 2});
  auto train_step = [&](Net& m, ember::optim::Optimizer& opt) {
    opt.zero_grad();
    Tensor d = m->forward(x) - y;
    Tensor loss = (d * d).mean();
    loss.backward();
    opt.step();
  };
  for (int i = 0; i < 3; i++) train_step(net, adam);
  torch::save(net, file("net.pt"));
  torch::save(adam, file("adam.pt"));

  Net net2;
  ember::optim::Adam adam2(net2->parameters(), ember::optim::AdamOptions(1.0));
  torch::load(net2, file("net.pt"));
  torch::load(adam2, file("adam.pt"));
  auto p1 = net->named_parameters(), p2 = net2->named_parameters();
  for (size_t i = 0; i < p1.size(); i++) EXPECT(same(p1[i].second, p2[i].second));
  auto& o2 = static_cast<ember::optim::AdamOptions&>(adam2.param_groups()[0].options());
  EXPECT(o2.lr() == 1e-2 && std::get<0>(o2.betas()) == 0.8 && std::get<1>(o2.betas()) == 0.95);
  for (int i = 0; i < 2; i++) train_step(net, adam), train_step(net2, adam2);
  p1 = net->named_parameters(), p2 = net2->named_parameters();
  for (size_t i = 0; i < p1.size(); i++) EXPECT(same(p1[i].second, p2[i].second));

  // a module through a shared_ptr, and through a stream
  Net saved;  // the state in net.pt (net and net2 have trained on since)
  torch::load(saved, file("net.pt"));
  auto impl = std::make_shared<NetImpl>();
  torch::load(impl, file("net.pt"));
  EXPECT(same(impl->fc1->weight, saved->fc1->weight));
  std::stringstream module_stream;
  torch::save(impl, module_stream);
  Net net3;
  torch::load(net3, module_stream);
  EXPECT(same(net3->fc2->bias, saved->fc2->bias) && same(net3->scale, saved->scale));

  // archives: nested entries, scalars, keys, streams
  torch::serialize::OutputArchive out, inner;
  inner.write("b", ember::arange(1.0, 3.0));
  inner.write("count", 3);
  out.write("w", t);
  out.write("inner", inner);
  out.write("lr", 0.125);
  out.write("name", "ember");
  out.write("flag", true);
  std::stringstream stream;
  out.save_to(stream);
  torch::serialize::InputArchive in, nested;
  in.load_from(stream);
  EXPECT((in.keys() == std::vector<std::string>{"flag", "inner", "lr", "name", "w"}));
  in.read("inner", nested);
  Tensor b;
  int64_t count = 0;
  double lr = 0;
  bool flag = false;
  std::string name;
  nested.read("b", b), nested.read("count", count), in.read("lr", lr), in.read("flag", flag), in.read("name", name);
  EXPECT(same(b, ember::arange(1.0, 3.0)) && count == 3 && lr == 0.125 && flag && name == "ember");

  // bad input: clear errors, and nothing loaded halfway
  Tensor wrong = ember::zeros({2, 2});
  EXPECT(throws([&] { in.read("missing", b); }));
  EXPECT(throws([&] { in.read("w", wrong); }));
  EXPECT(same(wrong, ember::zeros({2, 2})));
  EXPECT(throws([&] { in.read("lr", name); }));
  nn::Linear other(4, 3);
  Tensor before = other->weight.clone();
  EXPECT(throws([&] { torch::load(other, file("net.pt")); }));  // no fc1.weight etc.
  EXPECT(same(other->weight, before));
  ember::optim::SGD sgd(net2->parameters(), ember::optim::SGDOptions(0.1));
  EXPECT(throws([&] { torch::load(sgd, file("adam.pt")); }));
  {
    std::ofstream f(file("corrupt.pt"), std::ios::binary);
    f << "\x10\0\0\0\0\0\0\0{\"a\":";
  }
  EXPECT(throws([&] { torch::load(t2, file("corrupt.pt")); }));
  EXPECT(throws([&] { torch::load(net2, file("does_not_exist.pt")); }));
  // a save that cannot happen raises
  EXPECT(throws([&] { torch::save(net, dir + "/no_such_dir/net.pt"); }));
  torch::load(net2, file("net.pt"));

  // Python interop (tests/python/test_archive.py)
  torch::serialize::OutputArchive for_python;
  for_python.write("w", ember::arange(6, ember::kFloat).reshape({2, 3}));
  for_python.write("nested", inner);
  for_python.write("lr", 0.25);
  for_python.write("name", "from c++");
  for_python.save_to(file("cpp_written.pt"));
  if (::access(file("py_written.pt").c_str(), R_OK) == 0) {
    torch::serialize::InputArchive py;
    py.load_from(file("py_written.pt"));
    Tensor w, v;
    double momentum = 0;
    int64_t steps = 0;
    bool flag2 = false;
    std::string label;
    py.read("w", w), py.read("sub.v", v), py.read("momentum", momentum), py.read("steps", steps);
    py.read("flag", flag2), py.read("label", label);
    EXPECT(same(w, ember::arange(12, ember::kDouble).reshape({3, 4})));
    EXPECT(same(v, ember::arange(7, 10)));
    EXPECT(momentum == 0.9 && steps == 42 && flag2 && label == "from python");
    std::printf("read py_written.pt\n");
  }
  if (argc <= 1) std::system(("rm -rf " + dir).c_str());
  return libtorch_test::finish("serialize_roundtrip");
}
