#pragma once
// Sequential and ModuleList. A Sequential keeps, next to each child, a type-erased call of its
// single-tensor forward (captured at push_back, so no virtual forward is imposed on modules whose
// forward takes other arguments, such as LSTM). Children are named "0", "1", ... as in Python.
// C++ evaluates the arguments of Sequential(a, b, ...) in an unspecified order, so the layers'
// random initialisation may run out of order: push_back them one by one to draw the same initial
// weights as Python for a given seed.
#include "ember/nn/module.h"

namespace ember::nn {

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

}  // namespace ember::nn
