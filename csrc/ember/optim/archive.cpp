// Optimizers to and from archives (layout in serialize/archive.h): the optimizer's kind, each param
// group's options and size, and every parameter's state tensors numbered across the groups. Loading
// checks the whole archive against the optimizer before it changes anything.
#include "ember/serialize/archive.h"

#include <functional>

namespace ember::optim {
namespace {

using DoubleField = std::function<void(const char*, double&)>;
using BoolField = std::function<void(const char*, bool&)>;

// The optimizer's name and each of its options' fields, by reference (read or written by the caller).
const char* visit_options(optim::OptimizerOptions& options, const DoubleField& num, const BoolField& flag) {
  if (auto* o = dynamic_cast<optim::SGDOptions*>(&options)) {
    num("lr", o->lr()), num("momentum", o->momentum()), num("dampening", o->dampening());
    num("weight_decay", o->weight_decay()), flag("nesterov", o->nesterov()), flag("maximize", o->maximize());
    return "SGD";
  }
  auto adam_like = [&](auto* o) {
    num("lr", o->lr()), num("betas.0", std::get<0>(o->betas())), num("betas.1", std::get<1>(o->betas()));
    num("eps", o->eps()), num("weight_decay", o->weight_decay());
    flag("amsgrad", o->amsgrad()), flag("maximize", o->maximize());
  };
  if (auto* o = dynamic_cast<optim::AdamWOptions*>(&options)) return adam_like(o), "AdamW";
  if (auto* o = dynamic_cast<optim::AdamOptions*>(&options)) return adam_like(o), "Adam";
  if (auto* o = dynamic_cast<optim::RMSpropOptions*>(&options)) {
    num("lr", o->lr()), num("alpha", o->alpha()), num("eps", o->eps()), num("weight_decay", o->weight_decay());
    num("momentum", o->momentum()), flag("centered", o->centered()), flag("maximize", o->maximize());
    return "RMSprop";
  }
  EMBER_FAIL(Runtime, "saving or loading this optimizer's options is not supported (only SGD, Adam, AdamW, RMSprop)");
}

const char* kind_of(const optim::Optimizer& optimizer) {
  auto copy = optimizer.defaults().clone();
  return visit_options(*copy, [](const char*, double&) {}, [](const char*, bool&) {});
}

}  // namespace
}  // namespace ember::optim

namespace ember::serialize {

OutputArchive& operator<<(OutputArchive& archive, const optim::Optimizer& optimizer) {
  optimizer.save(archive);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, optim::Optimizer& optimizer) {
  optimizer.load(archive);
  return archive;
}

}  // namespace ember::serialize

namespace ember::optim {

using serialize::InputArchive;

void Optimizer::save(serialize::OutputArchive& archive) const {
  const Optimizer& optimizer = *this;
  archive.write("optimizer", std::string(kind_of(optimizer)));
  const auto& groups = optimizer.param_groups();
  archive.write("param_groups.size", static_cast<int64_t>(groups.size()));
  int64_t n = 0;
  for (size_t g = 0; g < groups.size(); g++) {
    std::string prefix = "param_groups." + std::to_string(g) + ".";
    archive.write(prefix + "params", static_cast<int64_t>(groups[g].params().size()));
    auto options = groups[g].options().clone();
    visit_options(*options, [&](const char* name, double& v) { archive.write(prefix + name, v); },
                  [&](const char* name, bool& v) { archive.write(prefix + name, v); });
    for (auto& p : groups[g].params()) {
      if (const optim::ParamState* state = optimizer.find_state(p))
        for (auto& [name, t] : *state)
          if (t.defined()) archive.write("state." + std::to_string(n) + "." + name, t);
      n++;
    }
  }
}

void Optimizer::load(serialize::InputArchive& archive) {
  Optimizer& optimizer = *this;
  std::string kind, own = kind_of(optimizer);
  archive.read("optimizer", kind);
  EMBER_CHECK(kind == own, "the archive holds the state of a ", kind, " optimizer, not of a ", own);
  auto& groups = optimizer.param_groups();
  int64_t count = 0;
  archive.read("param_groups.size", count);
  EMBER_CHECK(count == static_cast<int64_t>(groups.size()), "loaded optimizer state has ", count,
              " parameter groups, the optimizer has ", groups.size());

  // Read everything into new options and states first, so a bad archive leaves the optimizer as it was.
  std::vector<std::unique_ptr<optim::OptimizerOptions>> options;
  std::vector<optim::ParamState> states;
  int64_t n = 0;
  for (size_t g = 0; g < groups.size(); g++) {
    std::string prefix = "param_groups." + std::to_string(g) + ".";
    int64_t size = 0;
    archive.read(prefix + "params", size);
    EMBER_CHECK(size == static_cast<int64_t>(groups[g].params().size()), "loaded optimizer state: parameter group ",
                g, " has ", size, " parameters, the optimizer's has ", groups[g].params().size());
    options.push_back(groups[g].options().clone());
    visit_options(*options.back(), [&](const char* name, double& v) { archive.read(prefix + name, v); },
                  [&](const char* name, bool& v) { archive.read(prefix + name, v); });
    for (auto& p : groups[g].params()) {
      optim::ParamState state;
      InputArchive entries;
      if (archive.try_read("state." + std::to_string(n), entries)) {
        for (auto& [name, stored] : entries.tensors()) {
          EMBER_CHECK(name.find('.') == std::string::npos, "loaded optimizer state: unexpected key state.", n, ".",
                      name);
          EMBER_CHECK(name == "step" || stored.sizes() == p.sizes(), "loaded optimizer state: state.", n, ".", name,
                      " has shape ", stored.sizes(), ", its parameter has shape ", p.sizes());
          state[name] = stored.device() == p.device() ? stored : stored.to(p.device());
        }
      }
      states.push_back(std::move(state));
      n++;
    }
  }
  n = 0;
  for (size_t g = 0; g < groups.size(); g++) {
    groups[g].set_options(std::move(options[g]));
    for (auto& p : groups[g].params()) optimizer.state(p) = std::move(states[n++]);
  }
}

}  // namespace ember::optim
