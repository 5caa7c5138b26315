#include "ember/autograd/grad_mode.h"

#include <atomic>

namespace ember::autograd {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference = false;
std::atomic<bool> g_anomaly{false};  // global, as torch.autograd.set_detect_anomaly
std::atomic<bool> g_anomaly_check_nan{true};
}  // namespace

bool grad_enabled() { return t_grad_enabled; }
void set_grad_enabled(bool enabled) { t_grad_enabled = enabled; }
bool inference_mode_enabled() { return t_inference; }
void set_inference_mode(bool enabled) { t_inference = enabled; }
bool anomaly_enabled() { return g_anomaly.load(std::memory_order_relaxed); }
void set_anomaly_enabled(bool enabled, bool check_nan) {
  g_anomaly.store(enabled);
  g_anomaly_check_nan.store(check_nan);
}
bool anomaly_check_nan() { return g_anomaly_check_nan.load(std::memory_order_relaxed); }

}  // namespace ember::autograd
