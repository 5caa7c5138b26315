#pragma once
// Sequential and ModuleList. A Sequential keeps, next to each child, a type-erased call of its
// single-tensor forward (captured at push_back, so no virtual forward is imposed on modules whose
// forward takes other arguments, such as LSTM). Children are named "0", "1", ... as in Python.
// C++ evaluates the arguments of Sequential(a, b, ...) in an unspecified order, so the layers'
// random initialisation may run out of order: push_back them one by one to draw the same initial
// weights as Python for a given seed.
#include <typeinfo>

#include "ember/nn/module.h"

namespace ember::nn {

namespace detail {
// Whether Impl::forward takes N tensors (so AnyModule calls it with that many).
template <class T, class = void>
struct IsHolder : std::false_type {};
template <class T>
struct IsHolder<T, std::void_t<typename T::ImplType>> : std::true_type {};
template <size_t>
using TensorArg = const Tensor&;
template <class Impl, class Seq, class = void>
struct ForwardTakes : std::false_type {};
template <class Impl, size_t... I>
struct ForwardTakes<Impl, std::index_sequence<I...>,
                    std::void_t<decltype(Tensor(std::declval<Impl&>().forward(std::declval<TensorArg<I>>()...)))>>
    : std::true_type {};
}  // namespace detail

// Any module behind one type, called with tensors: AnyModule(Linear(3, 4)).forward(x). Modules whose
// forward takes one to three tensors and returns a tensor can be held.
class AnyModule {
 public:
  AnyModule() = default;
  template <class Impl, class = std::enable_if_t<std::is_base_of_v<Module, Impl>>>
  AnyModule(std::shared_ptr<Impl> module)  // NOLINT: implicit, as libtorch's
      : module_(module), type_(&typeid(Impl)), call_([raw = module.get()](const std::vector<Tensor>& a) {
          return call<Impl>(*raw, a);
        }) {}
  template <class Impl>
  AnyModule(const ModuleHolder<Impl>& holder) : AnyModule(holder.ptr()) {}  // NOLINT
  template <class Impl, class = std::enable_if_t<std::is_base_of_v<Module, std::decay_t<Impl>>>>
  AnyModule(Impl&& module) : AnyModule(std::make_shared<std::decay_t<Impl>>(std::forward<Impl>(module))) {}  // NOLINT

  template <class... Tensors>
  Tensor forward(const Tensors&... inputs) const {
    EMBER_CHECK(!is_empty(), "cannot call forward() on an empty AnyModule");
    return call_({Tensor(inputs)...});
  }
  bool is_empty() const { return module_ == nullptr; }
  const std::shared_ptr<Module>& ptr() const { return module_; }
  template <class Impl>
  std::shared_ptr<Impl> ptr() const {
    check_type(typeid(Impl));
    return std::static_pointer_cast<Impl>(module_);
  }
  // get<Linear>() gives the holder, get<LinearImpl>() a reference to the module
  template <class T>
  decltype(auto) get() const {
    if constexpr (detail::IsHolder<T>::value) return T(ptr<typename T::ImplType>());
    else return static_cast<T&>(*ptr<T>());
  }
  const std::type_info& type_info() const {
    EMBER_CHECK(!is_empty(), "type_info() of an empty AnyModule");
    return *type_;
  }

 private:
  template <class Impl>
  static Tensor call(Impl& m, const std::vector<Tensor>& a) {
    switch (a.size()) {
      case 1: if constexpr (detail::ForwardTakes<Impl, std::make_index_sequence<1>>::value) return m.forward(a[0]); break;
      case 2: if constexpr (detail::ForwardTakes<Impl, std::make_index_sequence<2>>::value) return m.forward(a[0], a[1]); break;
      case 3: if constexpr (detail::ForwardTakes<Impl, std::make_index_sequence<3>>::value) return m.forward(a[0], a[1], a[2]); break;
      default: break;
    }
    EMBER_FAIL(Type, m.name(), "'s forward() does not take ", a.size(), " tensor argument(s)");
  }
  void check_type(const std::type_info& want) const {
    EMBER_CHECK(!is_empty(), "accessing an empty AnyModule");
    EMBER_CHECK_KIND(*type_ == want, Value, "AnyModule holds ", module_->name(), ", not the requested type");
  }

  std::shared_ptr<Module> module_;
  const std::type_info* type_ = nullptr;
  std::function<Tensor(const std::vector<Tensor>&)> call_;
};

class EMBER_API SequentialImpl : public Module {
 public:
  SequentialImpl();
  template <class... Modules>
  explicit SequentialImpl(Modules&&... modules) : SequentialImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  template <class M>
  void push_back(M&& module) {
    push_back(std::to_string(size()), std::forward<M>(module));
  }
  template <class Impl>
  void push_back(const std::string& name, const ModuleHolder<Impl>& holder) {
    push_back(name, holder.ptr());
  }
  void push_back(const std::string& name, const AnyModule& module) {
    add(name, module.ptr(), [module](const Tensor& x) -> Tensor { return module.forward(x); });
  }
  template <class Impl>
  void push_back(const std::string& name, std::shared_ptr<Impl> module) {
    Impl* raw = module.get();  // kept alive by the registered shared_ptr
    add(name, std::move(module), [raw](const Tensor& x) -> Tensor { return raw->forward(x); });
  }

  Tensor forward(const Tensor& input);
  size_t size() const { return fns_.size(); }
  bool is_empty() const { return fns_.empty(); }
  std::shared_ptr<Module> operator[](size_t index) const;
  template <class Impl>
  std::shared_ptr<Impl> ptr(size_t index) const { return std::dynamic_pointer_cast<Impl>((*this)[index]); }

 private:
  void add(const std::string& name, std::shared_ptr<Module> module, std::function<Tensor(const Tensor&)> fn);
  std::vector<std::function<Tensor(const Tensor&)>> fns_;
};
EMBER_MODULE(Sequential);

class EMBER_API ModuleListImpl : public Module {
 public:
  ModuleListImpl();
  template <class... Modules>
  explicit ModuleListImpl(Modules&&... modules) : ModuleListImpl() {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  template <class Impl>
  void push_back(const ModuleHolder<Impl>& holder) { push_back(std::shared_ptr<Module>(holder.ptr())); }
  void push_back(std::shared_ptr<Module> module);
  size_t size() const { return named_children().size(); }
  bool is_empty() const { return size() == 0; }
  std::shared_ptr<Module> operator[](size_t index) const;
  template <class Impl>
  std::shared_ptr<Impl> ptr(size_t index) const { return std::dynamic_pointer_cast<Impl>((*this)[index]); }
  std::vector<std::shared_ptr<Module>>::const_iterator begin() const;
  std::vector<std::shared_ptr<Module>>::const_iterator end() const;

 private:
  std::vector<std::shared_ptr<Module>> list_;
};
EMBER_MODULE(ModuleList);

// Named child modules in insertion order: dict["conv"], registered under their keys so parameter
// names read "conv.weight" as in Python.
class ModuleDictImpl : public Module {
 public:
  using Item = std::pair<std::string, std::shared_ptr<Module>>;
  ModuleDictImpl() : Module("ModuleDict") {}
  explicit ModuleDictImpl(const std::vector<Item>& items) : ModuleDictImpl() { update(items); }

  void insert(const std::string& key, std::shared_ptr<Module> module) {
    EMBER_CHECK(!contains(key), "ModuleDict already holds a module named '", key, "'");
    register_module(key, module);
  }
  template <class Impl>
  void insert(const std::string& key, const ModuleHolder<Impl>& holder) { insert(key, std::shared_ptr<Module>(holder.ptr())); }
  void update(const std::vector<Item>& items) {
    for (const auto& [key, module] : items) insert(key, module);
  }
  bool contains(const std::string& key) const { return find(key) != nullptr; }
  size_t size() const { return named_children().size(); }
  bool empty() const { return size() == 0; }
  std::shared_ptr<Module> operator[](const std::string& key) const {
    std::shared_ptr<Module> m = find(key);
    EMBER_CHECK_KIND(m != nullptr, Index, "ModuleDict has no module named '", key, "'");
    return m;
  }
  template <class Impl>
  std::shared_ptr<Impl> at(const std::string& key) const {
    auto m = std::dynamic_pointer_cast<Impl>((*this)[key]);
    EMBER_CHECK_KIND(m != nullptr, Value, "ModuleDict: module '", key, "' is not of the requested type");
    return m;
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& item : named_children()) out.push_back(item.first);
    return out;
  }
  std::vector<std::shared_ptr<Module>> values() const { return children(); }
  const std::vector<Item>& items() const { return named_children(); }
  std::vector<Item>::const_iterator begin() const { return named_children().begin(); }
  std::vector<Item>::const_iterator end() const { return named_children().end(); }

 private:
  std::shared_ptr<Module> find(const std::string& key) const {
    for (const auto& item : named_children())
      if (item.first == key) return item.second;
    return nullptr;
  }
};
EMBER_MODULE(ModuleDict);

}  // namespace ember::nn
