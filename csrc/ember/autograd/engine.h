#pragma once
// The backward engine: iterative (no recursion, so 100k-deep graphs are fine), driven by
// dependency counts, nodes run in decreasing sequence number (reverse creation order).
#include <functional>

#include "ember/autograd/node.h"

namespace ember::autograd {

// Hook the Python layer installs to release/acquire the GIL around the whole run.
using NodeCallback = std::function<void(Node&)>;

struct BackwardOptions {
  bool keep_graph = false;
  bool create_graph = false;
  bool accumulate_grad = true;   // false: autograd.grad (return gradients, leave .grad alone)
  bool allow_unused = false;
  bool materialize_unused = false;  // return zeros instead of None for unused inputs
};

// Run backward from `roots` seeded with `grad_roots` (one per root). With inputs given, only the
// paths to them run: gradients are accumulated into those leaves (accumulate_grad) or returned.
EMBER_API variable_list run_backward(const variable_list& roots, const variable_list& grad_roots,
                                     const variable_list& inputs, const BackwardOptions& opts);

// Runs `fn` once the current backward run (on this thread) has finished every node, before it
// returns: DDP waits for its gradient buckets there. Raises outside a backward run.
EMBER_API void queue_callback(std::function<void()> fn);

// tensor.backward(gradient, retain_graph, create_graph, inputs)
EMBER_API void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
                        std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                        const variable_list& inputs = {});
// ember::autograd::grad(outputs, inputs, grad_outputs, ...)
EMBER_API variable_list grad(const variable_list& outputs, const variable_list& inputs,
                             const variable_list& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                             bool create_graph = false, bool allow_unused = false);

// torch.autograd.set_multithreading_enabled: with false, a backward from device roots runs on the calling
// thread instead of the device's worker (per thread, as PyTorch's).
EMBER_API void set_multithreading_enabled(bool enabled);
EMBER_API bool multithreading_enabled();
// Runs once at the start of every device worker thread: the Python layer gives the worker a Python thread
// state of its own there (as PyTorch's device threads), so hooks keep their threading.local values.
EMBER_API void set_device_thread_init(void (*fn)());

// Reduce a broadcast gradient to `sizes` (sum over the broadcast dims).
EMBER_API Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

}  // namespace ember::autograd
