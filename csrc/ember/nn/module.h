#pragma once
// ember::nn::Module: the C++ counterpart of ember.nn.Module. A module owns named parameters,
// buffers and child modules (insertion order kept, so names and order match Python's state_dict).
//
// Holder style (libtorch's): a layer is implemented as `LinearImpl : Module` and used through
// `Linear`, a ModuleHolder<LinearImpl> wrapping a std::shared_ptr. Modules are shared, never copied
// by accident (a model and its optimizer see the same tensors), and `fc->weight` / `fc(x)` read the
// same as in libtorch, so code ports across with only the namespace changed.
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/serialize/safetensors.h"

namespace ember::serialize {
class OutputArchive;
class InputArchive;
}  // namespace ember::serialize

namespace ember::nn {

// (name, tensor) pairs in registration order: named_parameters(), state_dict().
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// A chainable option: `EMBER_ARG(int64_t, stride) = 1;` gives stride(v) (returns *this) and stride().
#define EMBER_ARG(T, name)                                   \
 public:                                                     \
  auto name(const T& v)->decltype(*this) {                   \
    this->name##_ = v;                                       \
    return *this;                                            \
  }                                                          \
  const T& name() const noexcept { return this->name##_; }   \
  T& name() noexcept { return this->name##_; }               \
                                                             \
 private:                                                    \
  T name##_

// An int or one int per spatial dim: Conv2dOptions(1, 32, 3) or .kernel_size({3, 5}).
template <size_t N>
struct ExpandingArray {
  std::vector<int64_t> v;
  ExpandingArray(int64_t x) : v(N, x) {}  // NOLINT: implicit by design
  ExpandingArray(std::initializer_list<int64_t> l) : v(l) {
    EMBER_CHECK_KIND(l.size() == N, Value, "expected ", N, " values, got ", l.size());
  }
  ExpandingArray(std::vector<int64_t> l) : v(std::move(l)) {
    EMBER_CHECK_KIND(v.size() == N, Value, "expected ", N, " values, got ", v.size());
  }
  IntArrayRef ref() const { return IntArrayRef(v.data(), v.size()); }
  int64_t operator[](size_t i) const { return v[i]; }
};

class EMBER_API Module : public std::enable_shared_from_this<Module> {
 public:
  explicit Module(std::string name = "Module");
  virtual ~Module();
  Module(const Module&) = default;
  Module& operator=(const Module&) = default;

  // The type name shown by pretty printing ("Linear", "Sequential", ...).
  const std::string& name() const { return name_; }

  std::vector<Tensor> parameters(bool recurse = true) const;
  NamedTensors named_parameters(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  NamedTensors named_buffers(bool recurse = true) const;
  std::vector<std::shared_ptr<Module>> children() const;
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }
  // This module and all its descendants, depth first (needs the module to be owned by a shared_ptr).
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true);
  // fn(module) on every descendant, children first, then this module (like Python's apply).
  void apply(const std::function<void(Module&)>& fn);

  virtual void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Convert every parameter and floating buffer in place (the tensors keep their identity, so
  // members such as `weight` and optimizers holding them see the change).
  void to(ScalarType dtype);
  void to(Device device, std::optional<ScalarType> dtype = std::nullopt);
  // Drop every parameter's .grad (set_to_none) or fill it with zeros.
  void zero_grad(bool set_to_none = true);

  // Parameters then persistent buffers, recursively, named as Python's state_dict ("0.weight").
  NamedTensors state_dict() const;
  // Copy tensors into this module's state in place; strict makes missing or unexpected names an error.
  serialize::LoadResult load_state_dict(const NamedTensors& state, bool strict = true);
  serialize::LoadResult load_state_dict(const TensorDict& state, bool strict = true);

  // Parameters and buffers into / out of an archive by dotted name (libtorch's Module::save/load;
  // torch::save(model, path) uses them). load copies in place and checks every entry first.
  virtual void save(serialize::OutputArchive& archive) const;
  virtual void load(serialize::InputArchive& archive);

  // One line describing this module's own configuration ("Linear(in_features=3, ...)").
  virtual void pretty_print(std::ostream& os) const;

  Tensor register_parameter(const std::string& name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(const std::string& name, Tensor tensor, bool persistent = true);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    register_module_impl(name, module);
    return module;
  }
  template <class Holder, class = typename std::decay_t<Holder>::ImplType>
  std::decay_t<Holder> register_module(const std::string& name, Holder&& holder) {
    register_module_impl(name, holder.ptr());
    return holder;
  }

 private:
  void register_module_impl(const std::string& name, std::shared_ptr<Module> module);
  void check_name(const std::string& name, const char* what) const;
  void collect(NamedTensors& out, const std::string& prefix, bool params, bool recurse, bool persistent_only) const;
  void convert(const std::function<Tensor(const Tensor&)>& fn, bool floating_only);

  std::string name_;
  bool training_ = true;
  NamedTensors params_, buffers_;
  std::vector<bool> buffer_persistent_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
};

// The module tree, printed like Python's repr.
EMBER_API std::ostream& operator<<(std::ostream& os, const Module& m);

template <class Impl>
class ModuleHolder {
 public:
  using ImplType = Impl;

  // Default-constructs the module when it can be, else the holder starts empty.
  ModuleHolder() {
    if constexpr (std::is_default_constructible_v<Impl>) impl_ = std::make_shared<Impl>();
  }
  ModuleHolder(std::nullptr_t) {}
  ModuleHolder(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  template <class A0, class... Args,
            class = std::enable_if_t<!std::is_base_of_v<ModuleHolder, std::decay_t<A0>> &&
                                     !std::is_same_v<std::decay_t<A0>, std::shared_ptr<Impl>> &&
                                     !std::is_same_v<std::decay_t<A0>, std::nullptr_t>>>
  ModuleHolder(A0&& a0, Args&&... args)
      : impl_(std::make_shared<Impl>(std::forward<A0>(a0), std::forward<Args>(args)...)) {}

  Impl* operator->() const { return get(); }
  Impl& operator*() const { return *get(); }
  Impl* get() const {
    EMBER_CHECK(impl_, "accessing an empty ModuleHolder");
    return impl_.get();
  }
  const std::shared_ptr<Impl>& ptr() const { return impl_; }
  bool is_empty() const { return !impl_; }
  explicit operator bool() const { return bool(impl_); }

  template <class I = Impl, class... Args>
  auto operator()(Args&&... args) const -> decltype(std::declval<I&>().forward(std::forward<Args>(args)...)) {
    return get()->forward(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<Impl> impl_;
};

template <class Impl>
std::ostream& operator<<(std::ostream& os, const ModuleHolder<Impl>& m) {
  return os << *m;
}

// EMBER_MODULE(Linear): `Linear` as the holder of `LinearImpl`.
#define EMBER_MODULE(Name)                                       \
  class Name : public ::ember::nn::ModuleHolder<Name##Impl> {    \
   public:                                                       \
    using ::ember::nn::ModuleHolder<Name##Impl>::ModuleHolder;   \
  }

}  // namespace ember::nn
