// ember::jit::Module: a loaded graph with libtorch's calling convention.
#include "ember/jit/module.h"

#include "ember/core/error.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/serialize.h"

namespace ember::jit {

namespace {
IValue to_ivalue(const OutputSpec& spec, const std::vector<Tensor>& leaves, size_t& k) {
  if (spec.kind == OutputSpec::Kind::Value) return IValue(leaves[k++]);
  auto t = std::make_shared<Tuple>();
  for (const auto& s : spec.items) t->items.push_back(to_ivalue(s, leaves, k));
  return IValue(t);
}
}  // namespace

Module::Module(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) { prepare(*graph_); }

std::vector<Tensor> Module::run(const std::vector<Tensor>& inputs) const {
  EMBER_CHECK(graph_ != nullptr, "ember::jit::Module: empty module (default-constructed)");
  return jit::run(*graph_, inputs);
}

IValue Module::forward(const std::vector<IValue>& inputs) const {
  std::vector<Tensor> ts;
  for (size_t k = 0; k < inputs.size(); k++) {
    EMBER_CHECK_KIND(inputs[k].isTensor(), Type, "ember::jit::Module::forward: input ", k,
                     " is not a tensor (a traced graph takes tensors)");
    ts.push_back(inputs[k].toTensor());
  }
  std::vector<Tensor> leaves = run(ts);
  size_t k = 0;
  return to_ivalue(graph_->output, leaves, k);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& p : graph_->params) out.emplace_back(p.name, p.tensor);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (const auto& p : graph_->params) out.push_back(p.tensor);
  return out;
}

void Module::save(const std::string& path) const { save_graph(*graph_, path); }

Module load(const std::string& path) { return Module(load_graph(path)); }

}  // namespace ember::jit
