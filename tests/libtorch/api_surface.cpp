// libtorch's C++ API as user programs spell it, built against Ember's <torch/torch.h> through
// find_package(Torch). Every check compares a value; the program exits non-zero on the first mismatch.
#include <torch/torch.h>

#include "check.h"

#include <cmath>
#include <iostream>
#include <sstream>
#include <string>

namespace {

bool close(const torch::Tensor& a, const torch::Tensor& b, double tol = 1e-5) {
  return a.sizes() == b.sizes() && torch::allclose(a.to(torch::kDouble), b.to(torch::kDouble), tol, tol);
}

template <class F>
bool throws(F&& f) {
  try {
    f();
  } catch (const c10::Error&) {
    return true;
  }
  return false;
}

void namespaces_and_types() {
  at::Tensor a = torch::ones({2, 2});
  torch::Tensor b = a;
  EXPECT(b.is_same(a));
  c10::optional<int64_t> none = c10::nullopt;
  EXPECT(!none.has_value());
  std::vector<int64_t> dims{2, 3};
  c10::IntArrayRef ref(dims);
  EXPECT(torch::zeros(ref).numel() == 6);
  c10::Device cpu(torch::kCPU);
  torch::Device same = cpu;
  EXPECT(same.is_cpu() && same == torch::Device("cpu"));
  torch::DeviceType type = torch::cuda::is_available() ? torch::kCUDA : torch::kCPU;
  EXPECT(type == torch::kCPU);  // Ember's CPU build registers no CUDA backend
  EXPECT(torch::cuda::device_count() == 0);
  EXPECT(int64_t(torch::Reduction::Sum) == 2 && int64_t(at::Reduction::Mean) == 1 && torch::Reduction::None == 0);
  EXPECT(torch::str("step ", 3, ": ", 0.5) == "step 3: 0.5");
}

void factories() {
  torch::manual_seed(0);
  torch::Tensor r1 = torch::randn({2, 3}, torch::kFloat);
  torch::manual_seed(0);
  torch::Tensor r2 = torch::randn({2, 3});
  EXPECT(r1.scalar_type() == torch::kFloat && r1.sizes() == std::vector<int64_t>({2, 3}));
  EXPECT(torch::equal(r1, r2));  // same seed, same draw
  EXPECT(torch::randn({4}, torch::kDouble).scalar_type() == torch::kDouble);
  torch::Device device(torch::kCPU);
  torch::Tensor e = torch::empty(5, device);
  EXPECT(e.dim() == 1 && e.size(0) == 5 && e.device() == device);
  EXPECT(torch::zeros(3, device).sum().item<float>() == 0);
  torch::Tensor g = torch::randn(3, torch::requires_grad());
  EXPECT(g.requires_grad());
  EXPECT(torch::ones({2}, torch::dtype(torch::kLong)).scalar_type() == torch::kLong);
  EXPECT(torch::ones({2}, torch::device(device).dtype(torch::kDouble)).scalar_type() == torch::kDouble);
  torch::Tensor u = torch::rand({1000}, torch::kFloat);
  EXPECT(u.min().item<float>() >= 0 && u.max().item<float>() < 1);
  torch::Tensor k = torch::randint(0, 5, {100}, torch::kLong);
  EXPECT(k.min().item<int64_t>() >= 0 && k.max().item<int64_t>() < 5);
  EXPECT(torch::equal(std::get<0>(torch::randperm(6, torch::kLong).sort()), torch::arange(6)));
}

void tensor_literals() {
  torch::Tensor i = torch::tensor({1, 2, 3});
  EXPECT(i.scalar_type() == torch::kLong && i.numel() == 3 && i[2].item<int64_t>() == 3);
  torch::Tensor f = torch::tensor({0.5, 1.0, 0.0001}, torch::kFloat);
  EXPECT(f.scalar_type() == torch::kFloat && std::fabs(f[0].item<float>() - 0.5f) < 1e-7);
  EXPECT(torch::tensor({0.5, 1.5}).scalar_type() == torch::kFloat);  // the default dtype
  torch::Tensor m = torch::tensor({{1.0, 2.0}, {3.0, 4.0}});
  EXPECT(m.sizes() == std::vector<int64_t>({2, 2}) && m[1][0].item<double>() == 3.0);
  torch::Tensor s = torch::tensor(2.5);
  EXPECT(s.dim() == 0 && s.item<double>() == 2.5);
  EXPECT(torch::tensor({true, false}).scalar_type() == torch::kBool);
  EXPECT(torch::tensor({1, 2}, torch::requires_grad().dtype(torch::kFloat)).requires_grad());
  EXPECT(torch::tensor(std::vector<float>{1.f, 2.f}).sum().item<float>() == 3.f);
  bool ragged = false;
  try {
    torch::tensor({{1, 2}, {3}});
  } catch (const c10::Error&) {
    ragged = true;
  }
  EXPECT(ragged);
}

void scalar_overloads_and_operators() {
  torch::Tensor x = torch::tensor({1.0, 2.0, 3.0});
  EXPECT(close(x.pow(2), torch::tensor({1.0, 4.0, 9.0})));
  EXPECT(x.pow(2).scalar_type() == torch::kFloat);
  EXPECT(close(torch::pow(x, 2), torch::tensor({1.0, 4.0, 9.0})));
  EXPECT(close(torch::pow(x, 0.5), x.sqrt()));
  torch::Tensor y = x.clone();
  y.pow_(3);
  EXPECT(close(y, torch::tensor({1.0, 8.0, 27.0})));

  torch::Tensor a = torch::tensor({1.0, 2.0});
  torch::Tensor b = torch::tensor({10.0, 20.0});
  torch::Tensor alias = a;  // shares a's storage: compound assignment writes in place
  a += b;
  EXPECT(close(alias, torch::tensor({11.0, 22.0})));
  a -= 1;
  EXPECT(close(alias, torch::tensor({10.0, 21.0})));
  a *= 2;
  EXPECT(close(alias, torch::tensor({20.0, 42.0})));
  a /= b;
  EXPECT(close(alias, torch::tensor({2.0, 2.1})));
  a *= b;
  a -= b;
  a += 0.5;
  a /= 2;
  EXPECT(close(alias, torch::tensor({5.25, 11.25})));
  torch::Tensor n = torch::tensor({7, 9});
  n += 1;
  EXPECT(n.scalar_type() == torch::kLong && n[1].item<int64_t>() == 10);
}

// dims as libtorch code passes them: one int, a braced list, nothing
void dim_arguments() {
  torch::Tensor m = torch::tensor({{3.0, 4.0}, {6.0, 8.0}});
  EXPECT(close(m.norm(2, /*dim=*/1), torch::tensor({5.0, 10.0})));
  EXPECT(close(m.sum(0), torch::tensor({9.0, 12.0})));
  EXPECT(close(m.sum({0, 1}), torch::tensor(21.0)));
  EXPECT(close(m.mean({1}, /*keepdim=*/true), torch::tensor({{3.5}, {7.0}})));
  EXPECT(close(torch::sum(m, -1), torch::tensor({7.0, 14.0})));
  // a copied single dim keeps its value after the original is gone
  c10::OptionalIntArrayRef copy;
  {
    c10::OptionalIntArrayRef one(int64_t(1));
    copy = one;
  }
  EXPECT(copy.has_value() && copy->size() == 1 && (*copy)[0] == 1);
  EXPECT(close(m.sum(copy), torch::tensor({7.0, 14.0})));
}

void indexing() {
  using namespace torch::indexing;
  torch::Tensor t = torch::arange(24).view({2, 3, 4});
  EXPECT(t.index({0, 1, 2}).item<int64_t>() == 6);
  EXPECT(t.index({Slice(), 1}).sizes() == std::vector<int64_t>({2, 4}));
  EXPECT(torch::equal(t.index({Slice(), Slice(1, None), Slice(None, None, 2)}),
                      torch::tensor({{{4, 6}, {8, 10}}, {{16, 18}, {20, 22}}})));
  EXPECT(torch::equal(t.index({Ellipsis, 3}), torch::tensor({{3, 7, 11}, {15, 19, 23}})));
  EXPECT(torch::equal(t.index({"...", -1, 0}), torch::tensor({8, 20})));
  EXPECT(t.index({None, 0}).sizes() == std::vector<int64_t>({1, 3, 4}));
  EXPECT(t.index({1, None, Slice(0, 2)}).sizes() == std::vector<int64_t>({1, 2, 4}));
  torch::Tensor idx = torch::tensor({2, 0});
  EXPECT(torch::equal(t.index({0, idx}), torch::tensor({{8, 9, 10, 11}, {0, 1, 2, 3}})));
  EXPECT(torch::equal(t.index({Slice(), Slice(), idx}), t.index_select(2, idx)));
  torch::Tensor mask = t.index({0}) > 20;
  EXPECT(t.index({1}).index({mask}).numel() == 0);
  EXPECT(torch::equal(t.index({1}).index({t.index({1}) > 20}), torch::tensor({21, 22, 23})));
  EXPECT(t.index({0, true}).sizes() == std::vector<int64_t>({1, 3, 4}));

  torch::Tensor z = torch::zeros({3, 4});
  z.index_put_({Slice(), 0}, 1.0);
  z.index_put_({1, Slice(1, 3)}, torch::tensor({5.0, 6.0}));
  z.index_put_({2, torch::tensor({3})}, 9);
  z.index_put_({z < 0.5}, -1);
  EXPECT(close(z, torch::tensor({{1.0, -1.0, -1.0, -1.0}, {1.0, 5.0, 6.0, -1.0}, {1.0, -1.0, -1.0, 9.0}})));

  bool too_many = false;
  try {
    t.index({0, 0, 0, 0});
  } catch (const c10::Error&) {
    too_many = true;
  }
  EXPECT(too_many);
}

void printing() {
  std::ostringstream os;
  os << torch::ones({2, 3});
  EXPECT(os.str() == " 1  1  1\n 1  1  1\n[ CPUFloatType{2,3} ]");
  os.str("");
  os << torch::tensor({1.5, -2.25});
  EXPECT(os.str() == " 1.5000\n-2.2500\n[ CPUFloatType{2} ]");
  os.str("");
  os << torch::tensor({3, 10, -4});
  EXPECT(os.str() == "  3\n 10\n -4\n[ CPULongType{3} ]");
  os.str("");
  os << torch::tensor(2.5);
  EXPECT(os.str() == "2.5\n[ CPUFloatType{} ]");
  os.str("");
  os << torch::zeros({2, 1, 2}, torch::kDouble);
  EXPECT(os.str() == "(1,.,.) = \n 0  0\n\n(2,.,.) = \n 0  0\n[ CPUDoubleType{2,1,2} ]");
  os.str("");
  os << torch::Tensor();
  EXPECT(os.str() == "[ Tensor (undefined) ]");
}

// y = x * w, the gradient of w saved through the context (libtorch's custom function API)
struct ScaleBy : public torch::autograd::Function<ScaleBy> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x, double factor) {
    ctx->saved_data["factor"] = factor;
    ctx->saved_data["calls"] = 1;
    ctx->save_for_backward({x});
    return x * factor;
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    double factor = ctx->saved_data["factor"].toDouble();
    EXPECT(ctx->saved_data["calls"].toInt() == 1);
    EXPECT(ctx->get_saved_variables()[0].numel() == 3);
    return {grads[0] * factor, torch::Tensor()};
  }
};

void autograd_api() {
  using namespace torch::autograd;
  torch::Tensor x = torch::ones({3}, torch::requires_grad());
  torch::Tensor y = ScaleBy::apply(x, 2.5);
  y.sum().backward();
  EXPECT(close(x.grad(), torch::full({3}, 2.5)));
  tensor_list grads = torch::autograd::grad({(x * x).sum()}, {x});
  EXPECT(close(grads[0], torch::full({3}, 2.0)));
  {
    torch::NoGradGuard no_grad;
    EXPECT(!(x * 2).requires_grad());
  }
  EXPECT((x * 2).requires_grad());
  c10::IValue v = std::string("name");
  EXPECT(v.isString() && v.toStringRef() == "name");
  EXPECT(throws([&] { v.toDouble(); }));
}

void macros() {
  EXPECT(!throws([] { TORCH_CHECK(1 + 1 == 2, "arithmetic"); }));
  std::string message;
  try {
    int got = 3;
    TORCH_CHECK(got == 4, "expected 4, got ", got);
  } catch (const c10::Error& e) {
    message = e.what();
  }
  EXPECT(message == "expected 4, got 3");
  try {
    AT_ASSERT(false);
  } catch (const std::exception& e) {
    message = e.what();
  }
  EXPECT(message.find("false") != std::string::npos);
}

}  // namespace

int main() {
  namespaces_and_types();
  factories();
  tensor_literals();
  scalar_overloads_and_operators();
  dim_arguments();
  indexing();
  printing();
  autograd_api();
  macros();
  return libtorch_test::finish("api_surface");
}
