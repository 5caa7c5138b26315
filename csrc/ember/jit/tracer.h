#pragma once
// Recording eager execution into a jit::Graph. Generated op entries call TracedCall when any
// thread is tracing (one relaxed load and a not-taken branch otherwise); the Python layer and C++
// callers open a Tracer around the function they trace.
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/core/macros.h"
#include "ember/core/tensor.h"
#include "ember/jit/ir.h"

namespace ember::jit {

EMBER_API extern std::atomic<int> g_active_tracers;
inline bool tracing() { return g_active_tracers.load(std::memory_order_relaxed) != 0; }

struct TracingState;

// One op entry while tracing. Only the outermost op of a call tree is recorded (the ops an op runs
// internally replay when it does); a throwing op records nothing.
class EMBER_API TracedCall {
 public:
  TracedCall(const char* op, Variant variant);
  ~TracedCall();
  TracedCall(const TracedCall&) = delete;
  TracedCall& operator=(const TracedCall&) = delete;
  bool recording() const { return state_ != nullptr; }

  void arg(const Tensor& t);
  void arg(const std::vector<Tensor>& ts);
  void arg(const Scalar& s);
  void arg(const std::optional<Scalar>& s);
  void arg(int64_t v);
  void arg(const std::optional<int64_t>& v);
  void arg(IntArrayRef v);
  void arg(const OptionalIntArrayRef& v);
  void arg(double v);
  void arg(const std::optional<double>& v);
  void arg(bool v);
  void arg(const std::optional<bool>& v);
  void arg(std::string_view v);
  void arg(const std::optional<std::string_view>& v);
  void arg(ScalarType v);
  void arg(const std::optional<ScalarType>& v);
  void arg(Generator* g);
  void arg(const TensorOptions& o);
  void arg(const std::optional<MemoryFormat>& m);

  void result(const Tensor& t) { finish(&t, 1); }
  void result(const std::vector<Tensor>& ts) { finish(ts.data(), ts.size()); }
  template <class... Ts>
  void result(const std::tuple<Ts...>& t) {
    std::apply([this](const auto&... xs) {
      const Tensor items[] = {xs...};
      finish(items, sizeof...(xs));
    }, t);
  }
  void result_void() { finish(nullptr, 0); }

 private:
  void finish(const Tensor* outs, size_t n);
  TracingState* state_ = nullptr;
  bool entered_ = false;
  Node node_;
};

// While alive, nothing that runs on this thread is recorded: printing inside traced code, the
// tracer's own copies, a binding that reads values already guarded.
class EMBER_API TracePause {
 public:
  TracePause();
  ~TracePause();
  TracePause(const TracePause&) = delete;
  TracePause& operator=(const TracePause&) = delete;

 private:
  TracingState* state_;
};

// Traces what runs on this thread between construction and finish(). Nested tracers are refused.
class EMBER_API Tracer {
 public:
  Tracer();
  ~Tracer();  // an unfinished trace is discarded
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  void add_input(const Tensor& t, std::string name);
  void add_param(std::string name, const Tensor& t);  // module parameters/buffers, by state_dict name
  int64_t value_of(const Tensor& t);                  // for outputs: an id (constants captured)
  // Ends the trace. Raises RuntimeError if the traced code did something a graph cannot replay.
  std::shared_ptr<Graph> finish(OutputSpec output);
  // Why the trace cannot be used (empty when it can); set by what the tracer saw.
  const std::string& poisoned() const;
  // Discards the trace (the traced code raised). Idempotent; the destructor does the same.
  void abort();

 private:
  TracingState* state_;
};

// Hooks called by the core and the Python layer (cheap when nothing traces).
// The values of t were read (item(), bool(), tolist(), numpy()): replay guards on them.
EMBER_API void on_values_read(const Tensor& t, const char* what);
// The shape of t was read into Python: the graph becomes static-shaped if t depends on an input.
EMBER_API void on_shape_read(const Tensor& t, const char* what);
// Something a graph cannot express happened (backward() inside the traced code, ...).
EMBER_API void on_untraceable(const std::string& why);
// t.detach(): recorded as prim::detach.
EMBER_API void on_detach(const Tensor& self, const Tensor& result);

}  // namespace ember::jit
