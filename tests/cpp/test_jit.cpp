// ember::jit from C++: tracing C++ code, replaying, saving and loading, and the refusals that keep
// a replay from answering with baked data.
#include <gtest/gtest.h>

#include <fstream>

#include "ember/ember.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/serialize.h"
#include "ember/jit/tracer.h"
#include "temp_dir.h"

namespace ember {
namespace {

std::shared_ptr<jit::Graph> trace_one(const Tensor& x, Tensor (*fn)(const Tensor&)) {
  jit::Tracer tracer;
  tracer.add_input(x, "x");
  Tensor y = fn(x);
  jit::OutputSpec out;
  out.value = tracer.value_of(y);
  auto g = tracer.finish(out);
  jit::prepare(*g);
  return g;
}

Tensor mlp_tail(const Tensor& x) { return (x * 2.0 + 1.0).tanh().sum(1); }

TEST(Jit, TraceRecordsOutermostOpsOnly) {
  Tensor x = randn({3, 4});
  auto g = trace_one(x, mlp_tail);
  std::vector<std::string> ops;
  for (const auto& n : g->nodes) ops.push_back(n.op);
  // linear-like composites would show once; here: mul, add, tanh, sum
  EXPECT_EQ(ops, (std::vector<std::string>{"mul", "add", "tanh", "sum.dim_IntList"}));
  EXPECT_FALSE(jit::tracing());
}

TEST(Jit, ReplayMatchesEagerOnOtherShapes) {
  auto g = trace_one(randn({3, 4}), mlp_tail);
  for (int64_t n : {1, 5, 0}) {
    Tensor y = randn({n, 4});
    auto out = jit::run(*g, {y});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(allclose(out[0], mlp_tail(y)));
  }
}

TEST(Jit, SignatureMismatchRaises) {
  auto g = trace_one(randn({3, 4}), mlp_tail);
  EXPECT_THROW(jit::run(*g, {randn({3, 4}, kDouble)}), Error);
  EXPECT_THROW(jit::run(*g, {randn({3})}), Error);
  EXPECT_THROW(jit::run(*g, {}), Error);
}

Tensor branchy(const Tensor& x) { return x.sum().item<double>() > 0 ? x * 2 : x - 1; }

TEST(Jit, GuardFailureNamesTheCause) {
  auto g = trace_one(ones({3}), branchy);
  EXPECT_TRUE(allclose(jit::run(*g, {ones({3})})[0], ones({3}) * 2));
  try {
    jit::run(*g, {-ones({3})});
    FAIL() << "expected a guard failure";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("guard failed"), std::string::npos) << e.what();
  }
}

TEST(Jit, SaveLoadRoundTripAndModuleApi) {
  test_util::TempDir dir("ember_jit_");
  nn::Linear lin(4, 2);
  jit::Tracer tracer;
  Tensor x = randn({3, 4});
  tracer.add_input(x, "x");
  for (auto& kv : lin->named_parameters()) tracer.add_param(kv.first, kv.second);
  Tensor y = lin->forward(x).relu();
  jit::OutputSpec out;
  out.kind = jit::OutputSpec::Kind::Tuple;
  out.items.resize(2);
  out.items[0].value = tracer.value_of(y);
  out.items[1].value = tracer.value_of(x);
  auto g = tracer.finish(out);
  jit::prepare(*g);
  jit::save_graph(*g, dir.file("m.pt"));

  jit::Module m = jit::load(dir.file("m.pt"));
  Tensor z = randn({6, 4});
  IValue r = m.forward({z});
  ASSERT_TRUE(r.isTuple());
  EXPECT_TRUE(allclose(r.toTuple()->elements()[0].toTensor(), lin->forward(z).relu()));
  EXPECT_TRUE(r.toTuple()->elements()[1].toTensor().is_same(z));
  EXPECT_EQ(m.named_parameters().size(), 2u);
}

TEST(Jit, LoadRejectsMalformedGraphs) {
  test_util::TempDir dir("ember_jit_");
  auto g = trace_one(randn({2}), [](const Tensor& t) { return t.exp(); });
  std::string json = jit::to_json(*g);
  auto expect_fail = [&](std::string text, const char* needle) {
    try {
      jit::from_json(text, {}, "test");
      FAIL() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = json;
    size_t p = s.find(from);
    EXPECT_NE(p, std::string::npos) << from;
    return s.replace(p, from.size(), to);
  };
  expect_fail(replace("\"op\": \"exp\"", "\"op\": \"system\""), "unknown op 'system'");
  expect_fail(replace("\"args\": [{\"value\": 0}]", "\"args\": [{\"value\": 5}]"), "before it is defined");
  expect_fail(replace("\"args\": [{\"value\": 0}]", "\"args\": [{\"value\": 0}, {\"int\": 2}]"), "schema takes 1");
  expect_fail(replace("\"version\": 1", "\"version\": 9"), "version 9");
  expect_fail(json.substr(0, json.size() / 2), "invalid ember.jit graph JSON");
  expect_fail("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", "too deeply");
  std::ofstream(dir.file("x.pt")) << "not a safetensors file at all";
  EXPECT_THROW(jit::load(dir.file("x.pt")), Error);
}

TEST(Jit, UntraceableCodeIsRefused) {
  jit::Tracer tracer;
  Tensor x = randn({3}, TensorOptions().requires_grad(true));
  tracer.add_input(x, "x");
  Tensor y = (x * x).sum();
  y.backward();
  jit::OutputSpec out;
  out.value = tracer.value_of(y);
  EXPECT_THROW(tracer.finish(out), Error);
}

TEST(Jit, NestedTracersAreRefused) {
  jit::Tracer outer;
  EXPECT_THROW(jit::Tracer inner, Error);
}

}  // namespace
}  // namespace ember
