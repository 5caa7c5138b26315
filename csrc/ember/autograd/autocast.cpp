#include "ember/autograd/autocast.h"

#include <unordered_map>
#include <utility>

#include "ember/autograd/node.h"
#include "ember/core/error.h"

namespace ember::autocast {

std::atomic<int> g_enabled_threads{0};

namespace {

constexpr int kCPU = int(Device::CPU);
constexpr int kCUDA = int(Device::CUDA);
bool counted(Device d) { return d == Device::CPU || d == Device::CUDA; }  // the devices whose ops autocast

struct ThreadState {
  bool enabled[int(Device::Count)] = {};
  // PyTorch's default autocast dtype of each device type, in Device's order
  ScalarType dtype[int(Device::Count)] = {kBFloat16, kHalf, kBFloat16, kHalf, kHalf,
                                          kHalf,     kBFloat16, kHalf, kBFloat16, kHalf};
  bool cache_enabled = true;
  int64_t nesting = 0;
  int suspended = 0;  // > 0 while an autocast op re-calls itself on the cast arguments
  // leaf weight -> its lower-precision copy; the source is held so that its address stays unique
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> cache;

  ~ThreadState() {
    const int on = int(enabled[kCPU]) + int(enabled[kCUDA]);
    if (on) g_enabled_threads.fetch_sub(on, std::memory_order_relaxed);
  }
};

thread_local ThreadState t_state;

// A floating input (float64 aside) on the op's autocast device.
bool eligible(const Tensor& t, Device d) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == kDouble) return false;
  return d == Device::CUDA ? t.is_cuda() : t.device().is_cpu();
}

// The widest floating dtype among the inputs, as torch's promote policy: float32 wins over the
// autocast dtype; float64 inputs are left alone and do not take part.
ScalarType prioritize(ScalarType current, const Tensor& t, ScalarType lower, Device d) {
  if (!eligible(t, d)) return current;
  ScalarType next = t.dtype();
  if (current == kFloat || next == kFloat) return kFloat;
  if (current == lower && next == lower) return lower;
  // two different 16-bit types (float16 and bfloat16): PyTorch refuses to pick one
  EMBER_FAIL(Runtime, "Unexpected floating ScalarType in at::autocast::prioritize");
}

// A float32 leaf that requires grad: a weight, cast once per autocast region when caching is on.
bool cacheable(const Tensor& t) {
  if (!t_state.cache_enabled || t.dtype() != kFloat) return false;
  auto* m = autograd::meta(t);
  return m && m->requires_grad && !m->grad_fn && !m->is_view;
}

}  // namespace

bool cpu_active() { return t_state.enabled[kCPU] && t_state.suspended == 0; }
bool active() { return (t_state.enabled[kCPU] || t_state.enabled[kCUDA]) && t_state.suspended == 0; }

Device device_of(std::initializer_list<const Tensor*> tensors, std::initializer_list<const std::vector<Tensor>*> lists) {
  for (const Tensor* t : tensors)
    if (t->defined() && t->is_cuda()) return Device::CUDA;
  for (const auto* l : lists)
    for (const Tensor& t : *l)
      if (t.defined() && t.is_cuda()) return Device::CUDA;
  return Device::CPU;
}

Policy policy_for(Device d, Policy cpu, Policy cuda) {
  if (!t_state.enabled[int(d)]) return Policy::None;
  return d == Device::CUDA ? cuda : cpu;
}

void banned(const char* op, Device d) {
  EMBER_FAIL(Runtime, "ember.nn.functional.", op, " and ember.nn.BCELoss are unsafe to autocast.\n"
             "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
             "In this case, combine the two layers using ember.nn.functional.binary_cross_entropy_with_logits\n"
             "or ember.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
             "safe to autocast. (", d == Device::CUDA ? "cuda" : "cpu", " autocast)");
}

bool is_enabled(Device d) { return t_state.enabled[int(d)]; }

void set_enabled(Device d, bool enabled) {
  bool& slot = t_state.enabled[int(d)];
  if (counted(d) && slot != enabled) g_enabled_threads.fetch_add(enabled ? 1 : -1, std::memory_order_relaxed);
  slot = enabled;
}

ScalarType get_dtype(Device d) { return t_state.dtype[int(d)]; }
void set_dtype(Device d, ScalarType t) { t_state.dtype[int(d)] = t; }
bool is_cache_enabled() { return t_state.cache_enabled; }
void set_cache_enabled(bool enabled) { t_state.cache_enabled = enabled; }
int64_t increment_nesting() { return ++t_state.nesting; }
int64_t decrement_nesting() { return --t_state.nesting; }
void clear_cache() { t_state.cache.clear(); }

void suspend() { ++t_state.suspended; }
void resume() { --t_state.suspended; }

Redispatch::Redispatch(Policy policy, Device d, std::initializer_list<const Tensor*> tensors,
                       std::initializer_list<const std::vector<Tensor>*> lists)
    : device_(d) {
  const ScalarType lower = t_state.dtype[int(d)];
  to_ = policy == Policy::Fp32 ? kFloat : lower;
  if (policy == Policy::Promote) {
    for (const Tensor* t : tensors) to_ = prioritize(to_, *t, lower, d);
    for (const auto* l : lists)
      for (const Tensor& t : *l) to_ = prioritize(to_, t, lower, d);
  }
  lower_ = to_ == lower;
  disabled_ = policy != Policy::LowerPrecisionFp && policy != Policy::Fp32 && policy != Policy::Promote;
  ++t_state.suspended;
}

Redispatch::~Redispatch() { --t_state.suspended; }

Tensor Redispatch::cast(const Tensor& t) const {
  if (disabled_ || !eligible(t, device_) || t.dtype() == to_) return t;
  if (lower_ && cacheable(t)) {
    auto it = t_state.cache.find(t.impl());
    if (it != t_state.cache.end()) return it->second.second;
    Tensor low = t.to(to_);
    t_state.cache.emplace(t.impl(), std::make_pair(t, low));
    return low;
  }
  return t.to(to_);
}

std::vector<Tensor> Redispatch::cast(const std::vector<Tensor>& ts) const {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(cast(t));
  return out;
}

}  // namespace ember::autocast
