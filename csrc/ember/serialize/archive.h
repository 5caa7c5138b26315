#pragma once
// Archives: named tensors and scalars, nested, saved as one safetensors file (libtorch's
// serialize::OutputArchive / InputArchive, and save/load of tensors, tensor lists, modules and
// optimizers built on them).
//
// File format (Ember's own, readable from Python with ember.serialize.load_archive):
//   a safetensors file (see safetensors.h). A nested archive written under "a" puts its entries under
//   "a." + their key, so a module's archive holds its state_dict names ("0.weight", "fc.bias").
//   "__metadata__" holds
//     "__format__": "ember.archive", "__version__": "1",
//     "__buffers__": the keys written with is_buffer, one per line,
//     and every scalar value under its dotted key, as "<tag>:<text>" with tag f (double, %.17g),
//     i (int64), b (bool: "true"/"false") or s (string, verbatim).
//   Any safetensors file loads as an archive (holding only tensors).
// Module archives (nn::Module::save/load, virtual as in libtorch): parameters then buffers, by dotted
// name. Optimizer archives (Optimizer::save/load):
//   "optimizer" (s: SGD, Adam, AdamW, RMSprop), "param_groups.size" (i),
//   "param_groups.<g>.params" (i: number of parameters), "param_groups.<g>.<option>" (f/b; Adam's
//   betas as "betas.0", "betas.1"), and "state.<n>.<name>" tensors ("step", "exp_avg", "exp_avg_sq",
//   "max_exp_avg_sq", "momentum_buffer", "square_avg", "grad_avg") where n counts the parameters
//   across the groups in order.
// Saving writes a temporary file and renames it, so an interrupted save leaves the old file whole.
// Reading checks everything: a missing key, a wrong shape, or a corrupt file raise ember::Error.
// The archives are defined in serialize/archive.cpp (core); the module and optimizer parts in
// nn/archive.cpp and optim/archive.cpp, which only libember (not the Python extension) links.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/nn/module.h"
#include "ember/optim/optimizer.h"
#include "ember/serialize/safetensors.h"

namespace ember::serialize {

class EMBER_API OutputArchive {
 public:
  // A tensor (its data, detached) under key; is_buffer marks a module buffer rather than a parameter.
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  // Every entry of nested under "key." + its key.
  void write(const std::string& key, const OutputArchive& nested);
  void write(const std::string& key, const std::string& value);
  void write(const std::string& key, const char* value) { write(key, std::string(value)); }
  // Numbers: bool stays bool, integers are stored as int64, floating point as double.
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  void write(const std::string& key, T value) {
    if constexpr (std::is_same_v<T, bool>)
      write_scalar(key, value ? "b:true" : "b:false");
    else if constexpr (std::is_integral_v<T>)
      write_scalar(key, "i:" + std::to_string(static_cast<int64_t>(value)));
    else
      write_double(key, static_cast<double>(value));
  }

  // Atomically to a file, to a stream, or as bytes.
  void save_to(const std::string& path) const;
  void save_to(std::ostream& stream) const;
  std::string bytes() const;

  // The distinct first components of the keys ("fc" for "fc.weight"), sorted.
  std::vector<std::string> keys() const;

 private:
  void write_scalar(const std::string& key, std::string tagged);
  void write_double(const std::string& key, double value);
  void check_new(const std::string& key) const;

  TensorDict tensors_;
  StringDict values_;
  std::set<std::string> buffers_;
};

class EMBER_API InputArchive {
 public:
  // From a file, a stream, or bytes; device (optional) moves every tensor there.
  void load_from(const std::string& path, std::optional<Device> device = std::nullopt);
  void load_from(std::istream& stream, std::optional<Device> device = std::nullopt);
  void load_from(const char* data, size_t size, std::optional<Device> device = std::nullopt);

  // Into an undefined tensor: the stored tensor. Into a defined one: copied in place without
  // autograd history (its shape must match; the dtype is converted). Missing key: ember::Error.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  // Every entry under "key." (an error if there is none).
  void read(const std::string& key, InputArchive& nested);
  bool try_read(const std::string& key, InputArchive& nested);
  void read(const std::string& key, double& value);
  void read(const std::string& key, int64_t& value);
  void read(const std::string& key, bool& value);
  void read(const std::string& key, std::string& value);
  bool contains(const std::string& key) const;

  std::vector<std::string> keys() const;
  // All tensors, by full dotted key.
  const TensorDict& tensors() const { return tensors_; }

 private:
  void adopt(TensorDict tensors, StringDict metadata, std::optional<Device> device);
  const std::string& scalar(const std::string& key, char tag) const;
  std::string where(const std::string& key) const { return source_ + ": key '" + prefix_ + key + "'"; }

  TensorDict tensors_;
  StringDict values_;
  std::set<std::string> buffers_;
  std::string source_ = "archive", prefix_;  // for error messages
};

// ---- the objects an archive carries (libtorch's archive << value and archive >> value)
EMBER_API OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor);  // key "tensor"
EMBER_API OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors);  // "0", "1", ...
EMBER_API OutputArchive& operator<<(OutputArchive& archive, const nn::Module& module);
EMBER_API OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer);
EMBER_API InputArchive& operator>>(InputArchive& archive, Tensor& tensor);
EMBER_API InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors);
EMBER_API InputArchive& operator>>(InputArchive& archive, nn::Module& module);
EMBER_API InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer);

template <class M>
OutputArchive& operator<<(OutputArchive& archive, const std::shared_ptr<M>& module) {
  static_assert(std::is_base_of_v<nn::Module, M>, "only modules are saved through a shared_ptr");
  EMBER_CHECK(module, "cannot save an empty module pointer");
  return archive << *module;
}
template <class M>
OutputArchive& operator<<(OutputArchive& archive, const nn::ModuleHolder<M>& module) {
  return archive << *module;
}
template <class M>
InputArchive& operator>>(InputArchive& archive, const std::shared_ptr<M>& module) {
  static_assert(std::is_base_of_v<nn::Module, M>, "only modules are loaded through a shared_ptr");
  EMBER_CHECK(module, "cannot load into an empty module pointer");
  return archive >> *module;
}
template <class M>
InputArchive& operator>>(InputArchive& archive, const nn::ModuleHolder<M>& module) {
  return archive >> *module;
}

}  // namespace ember::serialize

namespace ember {

// torch::save(value, path or stream) / torch::load(value, path or stream) for tensor lists,
// modules (ModuleHolder or shared_ptr; loaded in place) and optimizers. A single tensor's
// save/load to a path is in safetensors.h (the same file layout).
namespace detail {
template <class T>
struct is_module_ref : std::false_type {};
template <class M>
struct is_module_ref<std::shared_ptr<M>> : std::is_base_of<nn::Module, M> {};
// ModuleHolder<M> and the holders TORCH_MODULE / EMBER_MODULE derive from it
template <class T, class = void>
struct is_module_holder : std::false_type {};
template <class T>
struct is_module_holder<T, std::void_t<typename T::ImplType>>
    : std::is_base_of<nn::ModuleHolder<typename T::ImplType>, T> {};
template <class T>
using saveable = std::enable_if_t<is_module_ref<T>::value || is_module_holder<T>::value || std::is_same_v<T, std::vector<Tensor>> ||
                                  std::is_base_of_v<optim::Optimizer, T> || std::is_same_v<T, Tensor>>;
}  // namespace detail

template <class T, class = detail::saveable<T>>
void save(const T& value, std::ostream& stream) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(stream);
}
template <class T, class = detail::saveable<T>, class = std::enable_if_t<!std::is_same_v<T, Tensor>>>
void save(const T& value, const std::string& path) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(path);
}

// Modules and optimizers load in place, so const holders and pointers are accepted.
template <class T, class = detail::saveable<T>>
void load(T& value, std::istream& stream, std::optional<Device> device = std::nullopt) {
  serialize::InputArchive archive;
  archive.load_from(stream, device);
  archive >> value;
}
template <class T, class = detail::saveable<T>, class = std::enable_if_t<!std::is_same_v<T, Tensor>>>
void load(T& value, const std::string& path, std::optional<Device> device = std::nullopt) {
  serialize::InputArchive archive;
  archive.load_from(path, device);
  archive >> value;
}
template <class T, class = std::enable_if_t<detail::is_module_ref<T>::value || detail::is_module_holder<T>::value>>
void load(const T& module, const std::string& path, std::optional<Device> device = std::nullopt) {
  serialize::InputArchive archive;
  archive.load_from(path, device);
  archive >> module;
}

}  // namespace ember
