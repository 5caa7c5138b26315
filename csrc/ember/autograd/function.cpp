// The non-template half of autograd::Function<T> (function.h): wiring a finished forward into the graph.
#include "ember/autograd/function.h"

#include "ember/generated/ops.h"

namespace ember::autograd {

variable_list AutogradContext::get_saved_variables() const {
  variable_list r;
  auto node = node_.lock();
  for (const auto& s : saved_) r.push_back(s.unpack(node));
  return r;
}

namespace detail {

static bool contains(const variable_list& ts, const Tensor& t) {
  for (const Tensor& x : ts)
    if (x.defined() && x.is_same(t)) return true;
  return false;
}

void finish_function(const std::shared_ptr<Node>& node, AutogradContext& ctx, const variable_list& inputs,
                     variable_list& outputs) {
  bool record = grad_enabled() && any_requires_grad_list(inputs);
  if (record) collect_next_edges_list(*node, inputs);
  node->output_meta.resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); i++) {
    Tensor& t = outputs[i];
    if (!t.defined()) continue;
    node->output_meta[i] = {DimVector(t.sizes()), t.dtype(), t.device()};
    if (!record || contains(ctx.non_diff_, t)) continue;
    if (contains(ctx.dirty_, t)) {
      check_inplace(t, true);
      rebase_history(t, node);
      continue;
    }
    if (contains(inputs, t)) t = ember::alias(t);  // an input returned as is becomes a new output
    set_history(t, node, uint32_t(i));
  }
  for (const Tensor& t : ctx.to_save_) ctx.saved_.emplace_back(t, contains(outputs, t));
  ctx.to_save_.clear();
}

}  // namespace detail
}  // namespace ember::autograd
