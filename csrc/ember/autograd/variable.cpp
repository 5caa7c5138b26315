// Tensor's autograd methods (declared in core/tensor.h, implemented here so the core does not
// depend on autograd).
#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/generated/ops.h"
#include "ember/jit/tracer.h"
#include "ember/sparse/sparse_ops.h"

namespace ember {

bool Tensor::requires_grad() const { return autograd::requires_grad(*this); }
const Tensor& Tensor::requires_grad_(bool r) const {
  autograd::set_requires_grad(*this, r);
  return *this;
}
bool Tensor::is_leaf() const { return autograd::is_leaf(*this); }
Tensor Tensor::grad() const {
  auto* m = autograd::meta(*this);
  if (!m) return Tensor();
  return m->retained_grad ? *m->retained_grad : m->grad;
}
std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  return autograd::grad_fn(*this);
}
void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, gradient.defined() ? std::vector<Tensor>{gradient} : std::vector<Tensor>{}, retain_graph,
                     create_graph);
}
Tensor Tensor::detach() const {
  if (EMBER_UNLIKELY(is_sparse())) return sparse::shallow_copy(*this);
  Tensor r = make_view(*this, sizes(), strides(), storage_offset());
  if (EMBER_UNLIKELY(jit::tracing())) jit::on_detach(*this, r);
  return r;
}
void Tensor::retain_grad() const {
  auto& m = autograd::materialize_meta(*this);
  EMBER_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  std::shared_ptr<autograd::Node> fn = autograd::grad_fn(*this);
  if (!fn || m.retained_grad) return;
  auto slot = std::make_shared<Tensor>();
  m.retained_grad = slot;
  fn->extras().retained_grads.push_back({m.output_nr, slot});  // filled by the engine, after the tensor's hooks
}

}  // namespace ember
