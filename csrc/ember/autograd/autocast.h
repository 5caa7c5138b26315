#pragma once
// Autocast (torch.autocast): the thread-local mixed-precision state and the casts that the
// generated entries of the ops marked `autocast:` in ops.yaml apply before running the op.
//
// With autocast off an entry pays one relaxed load of a global counter and a not-taken branch
// (`maybe_active()`), as with jit::tracing(). When some thread has CPU or CUDA autocast on, the entry
// reads this thread's state and the op's policy on its inputs' device (CUDA when one is on a GPU, else
// the CPU: each device has its own op lists, as in PyTorch); an active entry opens a Redispatch, which
// picks the target dtype, turns
// autocast off for the re-call (the ops the op runs inside are not cast again, as PyTorch's
// autocast kernels exclude their own dispatch key), and casts the floating Tensor arguments.
// The casts are ordinary differentiable to_dtype calls, so gradients reach each input in its dtype.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ember/core/macros.h"
#include "ember/core/tensor.h"

namespace ember::autocast {

// The device types torch.autocast accepts. CPU and CUDA autocast ops; the others keep their state
// (enabled, dtype) so that torch.is_autocast_enabled("xpu") and friends answer as PyTorch's.
enum class Device : int8_t { CPU = 0, CUDA, XLA, IPU, XPU, MPS, HPU, MTIA, MAIA, PrivateUse1, Count };

// How an op treats its floating inputs (torch's CastPolicy): cast to the autocast dtype, cast to
// float32, or cast to the widest floating dtype among the inputs. Disabled casts nothing, only keeps
// autocast away from the op's body: for ops that PyTorch runs as one kernel (in their inputs' dtype)
// while Ember composes them from autocast ops (mv and dot from matmul, ...). None: the op is not on
// that device's lists (it runs as called; the ops inside it may still autocast). Banned: the op raises
// inside autocast (binary_cross_entropy on CUDA, as PyTorch).
enum class Policy : int8_t { LowerPrecisionFp, Fp32, Promote, Disabled, None, Banned };

// (thread, device) pairs with CPU or CUDA autocast enabled. Nonzero only while some region is open.
EMBER_API extern std::atomic<int> g_enabled_threads;
inline bool maybe_active() { return g_enabled_threads.load(std::memory_order_relaxed) != 0; }
// This thread's CPU autocast is enabled and not suspended by an op's re-call.
EMBER_API bool cpu_active();
// This thread's CPU or CUDA autocast is enabled and not suspended.
EMBER_API bool active();
// The device whose autocast state an op follows: CUDA when one of its inputs is on a GPU, else the CPU.
EMBER_API Device device_of(std::initializer_list<const Tensor*> tensors,
                           std::initializer_list<const std::vector<Tensor>*> lists = {});
// An op's policy on `d` (`cpu` or `cuda`), or None when that device's autocast is off.
EMBER_API Policy policy_for(Device d, Policy cpu, Policy cuda);
// PyTorch's error for an op banned from autocast on `d`.
[[noreturn]] EMBER_API void banned(const char* op, Device d);

EMBER_API bool is_enabled(Device d);
EMBER_API void set_enabled(Device d, bool enabled);
EMBER_API ScalarType get_dtype(Device d);
EMBER_API void set_dtype(Device d, ScalarType t);
EMBER_API bool is_cache_enabled();
EMBER_API void set_cache_enabled(bool enabled);
// The nesting counter of autocast regions (the cache is dropped when the outermost one exits).
EMBER_API int64_t increment_nesting();
EMBER_API int64_t decrement_nesting();
// Drops the cached lower-precision copies of leaf weights.
EMBER_API void clear_cache();

// Autocast suspended on this thread between suspend() and resume() (counted), or for a Suspend
// guard's scope (the body of a Disabled op).
EMBER_API void suspend();
EMBER_API void resume();
struct Suspend {
  Suspend() { suspend(); }
  ~Suspend() { resume(); }
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;
};

// One autocast re-call of an op on device `d`: chosen dtype, casts of the floating inputs on `d`, and
// autocast suspended until destruction. `tensors` and `lists` are the op's inputs, read by Promote only
// (the widest floating dtype).
class EMBER_API Redispatch {
 public:
  Redispatch(Policy policy, Device d, std::initializer_list<const Tensor*> tensors,
             std::initializer_list<const std::vector<Tensor>*> lists = {});
  ~Redispatch();
  Redispatch(const Redispatch&) = delete;
  Redispatch& operator=(const Redispatch&) = delete;

  Tensor cast(const Tensor& t) const;
  std::vector<Tensor> cast(const std::vector<Tensor>& ts) const;

 private:
  ScalarType to_;
  Device device_;
  bool lower_;  // to_ is the autocast dtype: leaf weights may come from the cache
  bool disabled_;  // Policy::Disabled: no casts
};

}  // namespace ember::autocast
