#include "ember/nn/module.h"

#include <algorithm>
#include <ostream>
#include <set>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/generated/ops.h"

namespace ember::nn {

Module::Module(std::string name) : name_(std::move(name)) {}
Module::~Module() = default;

void Module::check_name(const std::string& name, const char* what) const {
  EMBER_CHECK_KIND(!name.empty(), Value, what, " name can't be empty string \"\"");
  EMBER_CHECK_KIND(name.find('.') == std::string::npos, Value, what, " name can't contain \".\"");
  auto taken = [&](const auto& list) {
    return std::any_of(list.begin(), list.end(), [&](const auto& kv) { return kv.first == name; });
  };
  EMBER_CHECK_KIND(!taken(params_) && !taken(buffers_) && !taken(children_), Value, "attribute '", name,
                   "' already exists");
}

Tensor Module::register_parameter(const std::string& name, Tensor tensor, bool requires_grad) {
  check_name(name, "parameter");
  if (!tensor.defined()) return tensor;  // bias=false: nothing registered, as Python's None
  // a parameter is a leaf: keep the data, drop any history
  if (tensor.grad_fn()) tensor = tensor.detach();
  tensor.requires_grad_(requires_grad);
  params_.emplace_back(name, tensor);
  return tensor;
}

Tensor Module::register_buffer(const std::string& name, Tensor tensor, bool persistent) {
  check_name(name, "buffer");
  if (!tensor.defined()) return tensor;
  buffers_.emplace_back(name, tensor);
  buffer_persistent_.push_back(persistent);
  return tensor;
}

void Module::register_module_impl(const std::string& name, std::shared_ptr<Module> module) {
  check_name(name, "module");
  EMBER_CHECK_KIND(module != nullptr, Value, "register_module('", name, "'): the module is empty");
  children_.emplace_back(name, std::move(module));
}

void Module::collect(NamedTensors& out, const std::string& prefix, bool params, bool recurse,
                     bool persistent_only) const {
  if (params) {
    for (auto& [n, t] : params_) out.emplace_back(prefix + n, t);
  } else {
    for (size_t i = 0; i < buffers_.size(); i++)
      if (!persistent_only || buffer_persistent_[i]) out.emplace_back(prefix + buffers_[i].first, buffers_[i].second);
  }
  if (!recurse) return;
  for (auto& [n, c] : children_) c->collect(out, prefix + n + ".", params, true, persistent_only);
}

// Shared modules or tensors registered twice appear once, as in Python.
static NamedTensors dedup(NamedTensors in) {
  std::set<TensorImpl*> seen;
  NamedTensors out;
  for (auto& kv : in)
    if (seen.insert(kv.second.impl()).second) out.push_back(std::move(kv));
  return out;
}

static std::vector<Tensor> values(const NamedTensors& named) {
  std::vector<Tensor> out;
  out.reserve(named.size());
  for (auto& kv : named) out.push_back(kv.second);
  return out;
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect(out, "", true, recurse, false);
  return dedup(std::move(out));
}
std::vector<Tensor> Module::parameters(bool recurse) const { return values(named_parameters(recurse)); }

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect(out, "", false, recurse, false);
  return dedup(std::move(out));
}
std::vector<Tensor> Module::buffers(bool recurse) const { return values(named_buffers(recurse)); }

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& kv : children_) out.push_back(kv.second);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) {
  std::vector<std::shared_ptr<Module>> out;
  if (include_self) out.push_back(shared_from_this());
  for (auto& kv : children_) {
    auto sub = kv.second->modules(true);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& kv : children_) kv.second->apply(fn);
  fn(*this);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& kv : children_) kv.second->train(on);
}

void Module::convert(const std::function<Tensor(const Tensor&)>& fn, bool floating_only) {
  autograd::NoGradGuard no_grad;
  auto swap_in = [&](const Tensor& t) {
    if (floating_only && !t.is_floating_point()) return;
    Tensor src = fn(t);
    if (src.is_same(t)) return;
    // replace the data under the same TensorImpl, as Python's `param.data = ...`
    t.impl()->set_storage(src.impl()->storage());
    t.impl()->set_dtype(src.dtype());
    t.impl()->set_sizes_and_strides(src.sizes(), src.strides(), src.storage_offset());
    Tensor g = t.grad();
    if (g.defined()) {
      Tensor gs = fn(g);
      g.impl()->set_storage(gs.impl()->storage());
      g.impl()->set_dtype(gs.dtype());
      g.impl()->set_sizes_and_strides(gs.sizes(), gs.strides(), gs.storage_offset());
    }
  };
  for (auto& kv : params_) swap_in(kv.second);
  for (auto& kv : buffers_) swap_in(kv.second);
  for (auto& kv : children_) kv.second->convert(fn, floating_only);
}

void Module::to(ScalarType dtype) {
  EMBER_CHECK_KIND(is_floating(dtype), Type, "nn.Module.to only accepts floating point dtypes, but got desired dtype=",
                   dtype);
  convert([&](const Tensor& t) { return t.to(dtype); }, true);
}

void Module::to(Device device, std::optional<ScalarType> dtype) {
  convert([&](const Tensor& t) { return t.to(device, t.is_floating_point() ? dtype : std::nullopt); }, false);
}

void Module::zero_grad(bool set_to_none) {
  for (auto& p : parameters()) {
    auto* m = autograd::meta(p);
    if (!m || !m->grad.defined()) continue;
    if (set_to_none) m->grad = Tensor();
    else m->grad = m->grad.detach().zero_();
  }
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  collect(out, "", true, false, true);
  collect(out, "", false, false, true);
  for (auto& [n, c] : children_) {
    for (auto& kv : c->state_dict()) out.emplace_back(n + "." + kv.first, kv.second);
  }
  return out;
}

serialize::LoadResult Module::load_state_dict(const NamedTensors& state, bool strict) {
  NamedTensors own = state_dict();
  serialize::LoadResult res;
  std::set<std::string> given;
  for (auto& kv : state) given.insert(kv.first);
  std::map<std::string, Tensor> own_map(own.begin(), own.end());
  for (auto& kv : own)
    if (!given.count(kv.first)) res.missing_keys.push_back(kv.first);
  for (auto& kv : state)
    if (!own_map.count(kv.first)) res.unexpected_keys.push_back(kv.first);
  if (strict && (!res.missing_keys.empty() || !res.unexpected_keys.empty())) {
    std::string msg = "Error(s) in loading state_dict for " + name_ + ":";
    auto list = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size(); i++) s += (i ? ", \"" : "\"") + v[i] + "\"";
      return s;
    };
    if (!res.missing_keys.empty()) msg += " Missing key(s) in state_dict: " + list(res.missing_keys) + ".";
    if (!res.unexpected_keys.empty()) msg += " Unexpected key(s) in state_dict: " + list(res.unexpected_keys) + ".";
    EMBER_FAIL(Runtime, msg);
  }
  // check every shape before writing anything
  for (auto& kv : state) {
    auto it = own_map.find(kv.first);
    if (it == own_map.end()) continue;
    EMBER_CHECK(it->second.sizes() == kv.second.sizes(), "Error(s) in loading state_dict for ", name_,
                ": size mismatch for ", kv.first, ": copying a param with shape ", kv.second.sizes(),
                " from checkpoint, the shape in current model is ", it->second.sizes(), ".");
  }
  autograd::NoGradGuard no_grad;
  for (auto& kv : state) {
    auto it = own_map.find(kv.first);
    if (it != own_map.end()) it->second.copy_(kv.second);
  }
  return res;
}

serialize::LoadResult Module::load_state_dict(const TensorDict& state, bool strict) {
  return load_state_dict(NamedTensors(state.begin(), state.end()), strict);
}

void Module::pretty_print(std::ostream& os) const { os << name_ << "()"; }

static void print_tree(std::ostream& os, const Module& m, int indent) {
  if (m.named_children().empty()) {
    m.pretty_print(os);
    return;
  }
  os << m.name() << "(\n";
  for (auto& [n, c] : m.named_children()) {
    os << std::string(indent + 2, ' ') << "(" << n << "): ";
    print_tree(os, *c, indent + 2);
    os << "\n";
  }
  os << std::string(indent, ' ') << ")";
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  print_tree(os, m, 0);
  return os;
}

}  // namespace ember::nn
