// The unfused reference: a fusion subgraph's nodes as eager op calls (autograd records as usual).
// run_group falls back to it when the actual shapes do not fit one loop; tests compare against it.
#include <map>
#include <unordered_map>

#include "ember/core/error.h"
#include "ember/generated/ops.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/fuser/program.h"

namespace ember::jit::fuser {
namespace {

using Env = std::unordered_map<int64_t, Tensor>;

Tensor tensor_arg(const Node& n, size_t i, const Env& env) {
  EMBER_CHECK(i < n.args.size(), "fuser: ", n.op, " is missing argument ", i);
  const Arg& a = n.args[i];
  switch (a.kind) {
    case Arg::Kind::Value: {
      auto it = env.find(a.i);
      EMBER_CHECK(it != env.end(), "fuser: value %", a.i, " read by ", n.op, " is not defined");
      return it->second;
    }
    case Arg::Kind::Int: return scalar_to_tensor(Scalar(a.i));
    case Arg::Kind::Float: return scalar_to_tensor(Scalar(a.f));
    case Arg::Kind::Bool: return scalar_to_tensor(Scalar(a.b));
    case Arg::Kind::None: return Tensor();
    default: EMBER_FAIL(Type, "fuser: ", n.op, " argument ", i, " is not a tensor or a number");
  }
}

Scalar scalar_arg(const Node& n, size_t i) {
  const Arg& a = n.args.at(i);
  if (a.kind == Arg::Kind::Int) return Scalar(a.i);
  if (a.kind == Arg::Kind::Float) return Scalar(a.f);
  if (a.kind == Arg::Kind::Bool) return Scalar(a.b);
  EMBER_FAIL(Type, "fuser: ", n.op, " argument ", i, " must be a number");
}

std::optional<std::vector<int64_t>> dims_arg(const Node& n) {
  if (n.args.at(1).kind == Arg::Kind::Ints) return n.args[1].ints;
  return std::nullopt;
}

Tensor eval(const Node& n, const Env& env) {
  using Unary = Tensor (*)(const Tensor&);
  using Binary = Tensor (*)(const Tensor&, const Tensor&);
  static const std::map<std::string, Unary> unary = {
      {"neg", ember::neg}, {"exp", ember::exp}, {"log", ember::log}, {"tanh", ember::tanh},
      {"sigmoid", ember::sigmoid}, {"relu", ember::relu}, {"erf", ember::erf}, {"sqrt", ember::sqrt},
      {"rsqrt", ember::rsqrt}, {"abs", ember::abs}, {"reciprocal", ember::reciprocal}, {"sin", ember::sin},
      {"cos", ember::cos}, {"log1p", ember::log1p}, {"expm1", ember::expm1}, {"square", ember::square},
      {"silu", ember::silu}};
  static const std::map<std::string, Binary> binary = {
      {"mul", ember::mul}, {"true_divide", ember::true_divide}, {"pow", ember::pow}, {"maximum", ember::maximum},
      {"minimum", ember::minimum}, {"lt", ember::lt}, {"le", ember::le}, {"gt", ember::gt}, {"ge", ember::ge},
      {"eq", ember::eq}, {"ne", ember::ne}, {"clamp_min", ember::clamp_min}, {"clamp_max", ember::clamp_max}};
  auto T = [&](size_t i) { return tensor_arg(n, i, env); };
  const std::string& op = n.op;
  if (auto it = unary.find(op); it != unary.end()) return it->second(T(0));
  if (auto it = binary.find(op); it != binary.end()) return it->second(T(0), T(1));
  if (op == "add") return ember::add(T(0), T(1), n.args.size() > 2 ? scalar_arg(n, 2) : Scalar(int64_t(1)));
  if (op == "sub") return ember::sub(T(0), T(1), n.args.size() > 2 ? scalar_arg(n, 2) : Scalar(int64_t(1)));
  if (op == "div") return ember::div(T(0), T(1));
  if (op == "gelu") return ember::gelu(T(0), n.args.at(1).s);
  if (op == "leaky_relu") return ember::leaky_relu(T(0), n.args.size() > 1 ? scalar_arg(n, 1) : Scalar(0.01));
  if (op == "clamp") return ember::clamp(T(0), T(1), T(2));
  if (op.rfind("where", 0) == 0) return ember::where(T(0), T(1), T(2));
  if (op == "lerp") return ember::lerp(T(0), T(1), T(2));
  if (op == "sum") return ember::sum(T(0));
  bool keepdim = n.args.size() > 2 && n.args[2].kind == Arg::Kind::Bool && n.args[2].b;
  if (op == "sum.dim_IntList" || op == "mean") {
    auto dims = dims_arg(n);
    OptionalIntArrayRef d = dims ? OptionalIntArrayRef(IntArrayRef(*dims)) : OptionalIntArrayRef();
    return op == "mean" ? ember::mean(T(0), d, keepdim) : ember::sum(T(0), d, keepdim);
  }
  EMBER_FAIL(NotImplemented, "fuser: no eager form of op '", op, "' in a fusion group");
}

}  // namespace

std::vector<Tensor> run_subgraph_eager(const Graph& sub, const std::vector<Tensor>& inputs) {
  EMBER_CHECK(inputs.size() == sub.inputs.size(), "fusion group: expected ", sub.inputs.size(), " inputs, got ",
              inputs.size());
  Env env;
  for (size_t k = 0; k < inputs.size(); k++) env[sub.inputs[k].value] = inputs[k];
  for (const Node& n : sub.nodes) env[n.outputs.at(0)] = eval(n, env);
  std::vector<Tensor> outs;
  auto get = [&](int64_t v) {
    auto it = env.find(v);
    EMBER_CHECK(it != env.end(), "fusion group: output %", v, " is not computed");
    return it->second;
  };
  if (sub.output.kind == OutputSpec::Kind::Value) outs.push_back(get(sub.output.value));
  else
    for (const OutputSpec& o : sub.output.items) outs.push_back(get(o.value));
  return outs;
}

}  // namespace ember::jit::fuser
