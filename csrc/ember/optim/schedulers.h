#pragma once
// Learning-rate schedulers with the update rules of ember.optim.lr_scheduler (and torch's): call
// step() once per epoch, after the optimizer's steps.
#include <vector>

#include "ember/optim/optimizer.h"

namespace ember::optim {

class EMBER_API LRScheduler {
 public:
  virtual ~LRScheduler();
  void step();
  std::vector<double> get_last_lr() const { return last_lr_; }
  int64_t last_epoch() const { return last_epoch_; }

 protected:
  // records each group's initial lr; the subclass constructor then calls initial_step()
  explicit LRScheduler(Optimizer& optimizer);
  void initial_step();
  // the new lr of every group at last_epoch_ (recursive forms read the groups' current lr)
  virtual std::vector<double> get_lr() = 0;
  std::vector<double> current_lrs() const;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_, last_lr_;
  int64_t last_epoch_ = -1;
};

// lr *= gamma every step_size epochs.
class EMBER_API StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
 protected:
  std::vector<double> get_lr() override;
 private:
  int64_t step_size_;
  double gamma_;
};

// Cosine from the initial lr to eta_min over T_max epochs (torch's recursive form).
class EMBER_API CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0.0);
 protected:
  std::vector<double> get_lr() override;
 private:
  int64_t T_max_;
  double eta_min_;
};

}  // namespace ember::optim
