#include "ember/autograd/autocast.h"

#include <unordered_map>
#include <utility>

#include "ember/autograd/node.h"
#include "ember/core/error.h"

namespace ember::autocast {

std::atomic<int> g_cpu_enabled_threads{0};

namespace {

constexpr int kCPU = int(Device::CPU);

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
    if (enabled[kCPU]) g_cpu_enabled_threads.fetch_sub(1, std::memory_order_relaxed);
  }
};

thread_local ThreadState t_state;

bool eligible(const Tensor& t) {
  return t.defined() && t.is_floating_point() && t.device().is_cpu() && t.dtype() != kDouble;
}

// The widest floating dtype among the inputs, as torch's promote policy: float32 wins over the
// autocast dtype; float64 inputs are left alone and do not take part.
ScalarType prioritize(ScalarType current, const Tensor& t, ScalarType lower) {
  if (!eligible(t)) return current;
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

bool is_enabled(Device d) { return t_state.enabled[int(d)]; }

void set_enabled(Device d, bool enabled) {
  bool& slot = t_state.enabled[int(d)];
  if (d == Device::CPU && slot != enabled)
    g_cpu_enabled_threads.fetch_add(enabled ? 1 : -1, std::memory_order_relaxed);
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

Redispatch::Redispatch(Policy policy, std::initializer_list<const Tensor*> tensors,
                       std::initializer_list<const std::vector<Tensor>*> lists) {
  const ScalarType lower = t_state.dtype[kCPU];
  to_ = policy == Policy::Fp32 ? kFloat : lower;
  if (policy == Policy::Promote) {
    for (const Tensor* t : tensors) to_ = prioritize(to_, *t, lower);
    for (const auto* l : lists)
      for (const Tensor& t : *l) to_ = prioritize(to_, t, lower);
  }
  lower_ = to_ == lower;
  disabled_ = policy == Policy::Disabled;
  ++t_state.suspended;
}

Redispatch::~Redispatch() { --t_state.suspended; }

Tensor Redispatch::cast(const Tensor& t) const {
  if (disabled_ || !eligible(t) || t.dtype() == to_) return t;
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
