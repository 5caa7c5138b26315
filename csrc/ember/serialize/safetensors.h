#pragma once
// Tensors to and from safetensors files in C++: an 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets}, "__metadata__": {str: str}}, then the raw bytes. The same files
// as ember.safetensors in Python and the `safetensors` package. Every header field is checked against
// the file before memory is allocated; malformed files raise ember::Error (RuntimeError).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

using TensorDict = std::map<std::string, Tensor>;
using StringDict = std::map<std::string, std::string>;

namespace serialize {

// The bytes of a safetensors file holding `tensors` (any layout; written contiguous).
EMBER_API std::string to_safetensors(const TensorDict& tensors, const StringDict& metadata = {});
// Parse safetensors bytes; `what` names the source in error messages.
EMBER_API TensorDict from_safetensors(const void* data, size_t size, StringDict* metadata = nullptr,
                                      const std::string& what = "safetensors bytes");

// Result of load_parameters: names in the file with no parameter, and parameters the file lacks.
struct LoadResult {
  std::vector<std::string> missing_keys, unexpected_keys;
};

// Copy the tensors of a safetensors file into existing tensors, in place and without recording
// autograd history. Every shape and dtype is checked before anything is written; strict (as
// load_state_dict) also makes missing or unexpected names an error.
EMBER_API LoadResult load_parameters(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& params,
                                     bool strict = true);

}  // namespace serialize

// Write a safetensors file atomically (a temporary file in the same folder, renamed over `path`).
EMBER_API void save(const TensorDict& tensors, const std::string& path, const StringDict& metadata = {});
// One tensor, stored under the name "tensor".
EMBER_API void save(const Tensor& tensor, const std::string& path);

// Every tensor of a safetensors file (and its metadata when asked).
EMBER_API TensorDict load_file(const std::string& path, StringDict* metadata = nullptr);
// libtorch spelling: load(tensors, path) / load(tensor, path) replace the argument's contents.
EMBER_API void load(TensorDict& tensors, const std::string& path);
EMBER_API void load(Tensor& tensor, const std::string& path);

// Load a safetensors file into a module's named parameters (std::map, std::unordered_map, or a
// vector of pairs of name and Tensor): see serialize::load_parameters.
template <class NamedTensors>
serialize::LoadResult load_parameters(const std::string& path, NamedTensors& params, bool strict = true) {
  std::vector<std::pair<std::string, Tensor>> list;
  for (auto& kv : params) list.emplace_back(kv.first, kv.second);
  return serialize::load_parameters(path, list, strict);
}

}  // namespace ember
