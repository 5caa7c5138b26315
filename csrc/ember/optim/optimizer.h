#pragma once
// ember::optim: SGD, Adam, AdamW, RMSprop for C++ with the math of the Python optimizers: both call
// the same fused update ops (_fused_sgd_, _fused_adam_, _fused_rmsprop_ in ops/optim.cpp), with
// the same state (step counters, moment buffers) per parameter, so trajectories agree bit for bit.
//   optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3).weight_decay(1e-4));
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ember/nn/module.h"

namespace ember::optim {

using Betas = std::tuple<double, double>;

// Options of one param group. lr is common to all optimizers (schedulers read and write it).
struct EMBER_API OptimizerOptions {
  virtual ~OptimizerOptions();
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
};

template <class Derived>
struct OptimizerCloneableOptions : OptimizerOptions {
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return static_cast<const Derived&>(*this).lr(); }
  void set_lr(double lr) override { static_cast<Derived&>(*this).lr(lr); }
};

// A list of parameters with (optionally) its own options; missing options come from the defaults.
class EMBER_API OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: implicit, as a list of tensors
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;
  bool has_options() const { return bool(options_); }
  OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

// Per-parameter state, named as in Python's optimizer.state[p] ("step", "exp_avg", ...).
using ParamState = std::map<std::string, Tensor>;

class EMBER_API Optimizer {
 public:
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter with a gradient. closure (optional) re-evaluates the model and
  // returns the loss, which step returns (undefined without closure).
  virtual Tensor step(const std::function<Tensor()>& closure = nullptr) = 0;
  // Drop every parameter's .grad (set_to_none) or zero it.
  void zero_grad(bool set_to_none = true);
  void add_param_group(const OptimizerParamGroup& group);

  std::vector<OptimizerParamGroup>& param_groups() { return groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return groups_; }
  const OptimizerOptions& defaults() const { return *defaults_; }
  std::vector<Tensor> parameters() const;
  // The state of one parameter (empty until its first step).
  ParamState& state(const Tensor& param) { return state_[param.impl()]; }
  // The state of one parameter, or null before its first step (read-only: creates nothing; used
  // when saving an optimizer).
  const ParamState* find_state(const Tensor& param) const {
    auto it = state_.find(param.impl());
    return it == state_.end() ? nullptr : &it->second;
  }
  size_t size() const;  // number of parameters
  // Options and per-parameter state into / out of an archive (layout in serialize/archive.h);
  // load checks the whole archive against this optimizer before changing anything.
  void save(serialize::OutputArchive& archive) const;
  void load(serialize::InputArchive& archive);

 protected:
  Optimizer(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
  // The group's parameters that have a gradient, and those gradients.
  static void params_with_grad(const OptimizerParamGroup& group, std::vector<Tensor>& params,
                               std::vector<Tensor>& grads);
  // state[name] of each parameter, created as zeros_like(param) when missing
  std::vector<Tensor> state_list(const std::vector<Tensor>& params, const char* name);
  // the 0-d step counters, created as zeros in the default float dtype (Python's _scalar_step)
  std::vector<Tensor> step_list(const std::vector<Tensor>& params);
  Tensor run_closure(const std::function<Tensor()>& closure);

  std::unique_ptr<OptimizerOptions> defaults_;
  std::vector<OptimizerParamGroup> groups_;
  std::unordered_map<TensorImpl*, ParamState> state_;
};

struct EMBER_API SGDOptions : OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT
  EMBER_ARG(double, lr);
  EMBER_ARG(double, momentum) = 0;
  EMBER_ARG(double, dampening) = 0;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, nesterov) = false;
  EMBER_ARG(bool, maximize) = false;
};

class EMBER_API SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> groups, const SGDOptions& defaults);
  SGD(std::vector<Tensor> params, const SGDOptions& defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(const std::function<Tensor()>& closure = nullptr) override;
};

struct EMBER_API AdamOptions : OptimizerCloneableOptions<AdamOptions> {
  AdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  EMBER_ARG(double, lr);
  EMBER_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, amsgrad) = false;
  EMBER_ARG(bool, maximize) = false;
};

// AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay), default weight_decay 1e-2.
struct EMBER_API AdamWOptions : OptimizerCloneableOptions<AdamWOptions> {
  AdamWOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT
  EMBER_ARG(double, lr);
  EMBER_ARG(Betas, betas) = std::make_tuple(0.9, 0.999);
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 1e-2;
  EMBER_ARG(bool, amsgrad) = false;
  EMBER_ARG(bool, maximize) = false;
};

class EMBER_API Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> groups, const AdamOptions& defaults = {});
  Adam(std::vector<Tensor> params, const AdamOptions& defaults = {})
      : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(const std::function<Tensor()>& closure = nullptr) override;

 protected:
  Adam(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults);
};

class EMBER_API AdamW : public Adam {
 public:
  AdamW(std::vector<OptimizerParamGroup> groups, const AdamWOptions& defaults = {});
  AdamW(std::vector<Tensor> params, const AdamWOptions& defaults = {})
      : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
};

struct EMBER_API RMSpropOptions : OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT
  EMBER_ARG(double, lr);
  EMBER_ARG(double, alpha) = 0.99;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, momentum) = 0;
  EMBER_ARG(bool, centered) = false;
  EMBER_ARG(bool, maximize) = false;
};

class EMBER_API RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<OptimizerParamGroup> groups, const RMSpropOptions& defaults = {});
  RMSprop(std::vector<Tensor> params, const RMSpropOptions& defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(const std::function<Tensor()>& closure = nullptr) override;
};

}  // namespace ember::optim
