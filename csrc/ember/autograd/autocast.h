#pragma once
// Autocast (torch.autocast): the thread-local mixed-precision state and the casts that the
// generated entries of the ops marked `autocast:` in ops.yaml apply before running the op.
//
// With autocast off an entry pays one relaxed load of a global counter and a not-taken branch
// (`maybe_active()`), as with jit::tracing(). When some thread has CPU autocast on, the entry reads
// this thread's state; an active entry opens a Redispatch, which picks the target dtype, turns
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

// The device types torch.autocast accepts. Ember computes on the CPU only; the others keep their
// state (enabled, dtype) so that torch.is_autocast_enabled("cuda") and friends answer as PyTorch's.
enum class Device : int8_t { CPU = 0, CUDA, XLA, IPU, XPU, MPS, HPU, MTIA, MAIA, PrivateUse1, Count };

// How an op treats its floating inputs (torch's CastPolicy): cast to the autocast dtype, cast to
// float32, or cast to the widest floating dtype among the inputs. Disabled casts nothing, only keeps
// autocast away from the op's body: for ops that PyTorch runs as one kernel (in their inputs' dtype)
// while Ember composes them from autocast ops (mv and dot from matmul, ...).
enum class Policy : int8_t { LowerPrecisionFp, Fp32, Promote, Disabled };

// Threads whose CPU autocast is enabled. Nonzero only while some autocast region is open.
EMBER_API extern std::atomic<int> g_cpu_enabled_threads;
inline bool maybe_active() { return g_cpu_enabled_threads.load(std::memory_order_relaxed) != 0; }
// This thread's CPU autocast is enabled and not suspended by an op's re-call.
EMBER_API bool cpu_active();

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

// One autocast re-call of an op: chosen dtype, casts, and autocast suspended until destruction.
// `tensors` and `lists` are the op's inputs, read by Promote only (the widest floating dtype).
class EMBER_API Redispatch {
 public:
  Redispatch(Policy policy, std::initializer_list<const Tensor*> tensors,
             std::initializer_list<const std::vector<Tensor>*> lists = {});
  ~Redispatch();
  Redispatch(const Redispatch&) = delete;
  Redispatch& operator=(const Redispatch&) = delete;

  Tensor cast(const Tensor& t) const;
  std::vector<Tensor> cast(const std::vector<Tensor>& ts) const;

 private:
  ScalarType to_;
  bool lower_;  // to_ is the autocast dtype: leaf weights may come from the cache
  bool disabled_;  // Policy::Disabled: no casts
};

}  // namespace ember::autocast
