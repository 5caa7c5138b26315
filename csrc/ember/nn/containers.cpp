#include "ember/nn/containers.h"

namespace ember::nn {

SequentialImpl::SequentialImpl() : Module("Sequential") {}

void SequentialImpl::add(const std::string& name, std::shared_ptr<Module> module,
                         std::function<Tensor(const Tensor&)> fn) {
  register_module(name, std::move(module));
  fns_.push_back(std::move(fn));
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (auto& f : fns_) x = f(x);
  return x;
}

std::shared_ptr<Module> SequentialImpl::operator[](size_t index) const {
  EMBER_CHECK_KIND(index < size(), Index, "index ", index, " is out of range for a Sequential of ", size(), " modules");
  return named_children()[index].second;
}

ModuleListImpl::ModuleListImpl() : Module("ModuleList") {}

void ModuleListImpl::push_back(std::shared_ptr<Module> module) {
  register_module(std::to_string(list_.size()), module);
  list_.push_back(std::move(module));
}

std::shared_ptr<Module> ModuleListImpl::operator[](size_t index) const {
  EMBER_CHECK_KIND(index < list_.size(), Index, "index ", index, " is out of range for a ModuleList of ",
                   list_.size(), " modules");
  return list_[index];
}

std::vector<std::shared_ptr<Module>>::const_iterator ModuleListImpl::begin() const { return list_.begin(); }
std::vector<std::shared_ptr<Module>>::const_iterator ModuleListImpl::end() const { return list_.end(); }

}  // namespace ember::nn
