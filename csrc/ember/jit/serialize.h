#pragma once
// A graph on disk: one safetensors file holding the parameters and constants by name, whose
// metadata holds {"format": "ember.jit", "graph": <the JSON of csrc/ember/jit/README.md>}.
// Loading reads data only: op names are looked up in Ember's own registry, nothing is executed.
#include <map>
#include <memory>
#include <string>

#include "ember/jit/ir.h"

namespace ember::jit {

EMBER_API std::string to_json(const Graph& g);
// Tensors come from `tensors` by the names the JSON gives (params and constants); what: for errors.
EMBER_API std::shared_ptr<Graph> from_json(const std::string& text, const std::map<std::string, Tensor>& tensors,
                                           const std::string& what);
EMBER_API void save_graph(const Graph& g, const std::string& path);
// Loads and prepares (interpreter.h) a graph.
EMBER_API std::shared_ptr<Graph> load_graph(const std::string& path);

}  // namespace ember::jit
