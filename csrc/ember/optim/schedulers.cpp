#include "ember/optim/schedulers.h"

#include <cmath>

namespace ember::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) { base_lrs_ = current_lrs(); }
LRScheduler::~LRScheduler() = default;

std::vector<double> LRScheduler::current_lrs() const {
  std::vector<double> out;
  for (auto& g : optimizer_.param_groups()) out.push_back(g.options().get_lr());
  return out;
}

void LRScheduler::initial_step() {
  last_epoch_ = 0;
  last_lr_ = current_lrs();
}

void LRScheduler::step() {
  last_epoch_++;
  std::vector<double> lrs = get_lr();
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size() && i < lrs.size(); i++) groups[i].options().set_lr(lrs[i]);
  last_lr_ = current_lrs();
}

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  EMBER_CHECK_KIND(step_size > 0, Value, "StepLR: step_size must be positive, got ", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (auto& lr : lrs) lr *= gamma_;
  return lrs;
}

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  EMBER_CHECK_KIND(T_max > 0, Value, "CosineAnnealingLR: T_max must be positive, got ", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lr() {
  std::vector<double> lrs = current_lrs();
  if (last_epoch_ == 0) return lrs;
  const double pi = M_PI, T = double(T_max_);
  for (size_t i = 0; i < lrs.size(); i++) {
    if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0)
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2;
    else
      lrs[i] = (1 + std::cos(pi * double(last_epoch_) / T)) / (1 + std::cos(pi * double(last_epoch_ - 1) / T)) *
                   (lrs[i] - eta_min_) + eta_min_;
  }
  return lrs;
}

}  // namespace ember::optim
