#pragma once
// Running a saved graph from C++ (libtorch's torch::jit::load): ember::jit::load(path) reads a file
// written by ember.jit.save in Python and returns a Module whose forward takes the traced inputs.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/ivalue.h"
#include "ember/core/tensor.h"
#include "ember/jit/ir.h"

namespace ember::jit {

// The elements of a tuple result (libtorch: output.toTuple()->elements()).
struct Tuple {
  std::vector<IValue> items;
  const std::vector<IValue>& elements() const { return items; }
};

class EMBER_API Module {
 public:
  Module() = default;
  explicit Module(std::shared_ptr<Graph> graph);

  // forward({x, y}): a tensor for a single output, else a std::shared_ptr<Tuple> (tuple or list).
  IValue forward(const std::vector<IValue>& inputs) const;
  // The same on tensors, outputs flattened depth first.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
  IValue operator()(const Ts&... inputs) const {
    return forward(std::vector<IValue>{IValue(inputs)...});
  }

  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  // Graphs record the mode they were traced in; these keep libtorch programs compiling.
  void eval() {}
  void train(bool = true) {}
  void save(const std::string& path) const;
  const Graph& graph() const { return *graph_; }

 private:
  std::shared_ptr<Graph> graph_;
};

// Reads a graph file. Nothing in the file is executed: op names are looked up in Ember's registry.
EMBER_API Module load(const std::string& path);

}  // namespace ember::jit
