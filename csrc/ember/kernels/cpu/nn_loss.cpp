// CPU entries of the loss kernels (kernels/nn_loss.h).
#include <type_traits>

#include "ember/kernels/nn_loss.h"

namespace ember {

namespace {

// f(i, t_i, w[t_i]) for each row i whose target is not ignore_index, after checking every target.
template <class F>
void for_each_target(const Tensor& target, const Tensor& weight, int64_t n_classes, int64_t ignore_index, F f) {
  const int64_t R = target.numel();
  const int64_t* tp = static_cast<const int64_t*>(target.data_ptr());
  for (int64_t i = 0; i < R; i++)
    EMBER_CHECK_KIND(tp[i] == ignore_index || (tp[i] >= 0 && tp[i] < n_classes), Index, "Target ", tp[i],
                     " is out of bounds.");
  const double* wp = weight.defined() ? static_cast<const double*>(weight.data_ptr()) : nullptr;
  for (int64_t i = 0; i < R; i++) {
    if (tp[i] == ignore_index) continue;
    f(i, tp[i], wp ? wp[tp[i]] : 1.0);
  }
}

void nll_pick_cpu(const Tensor& out, const Tensor& self, const Tensor& target, const Tensor& weight,
                  int64_t ignore_index) {
  EMBER_DISPATCH_ALL(self.dtype(), "nll_loss", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* xp = static_cast<const T*>(self.data_ptr());  // any strides: one element read per row
      T* op = static_cast<T*>(out.data_ptr());
      const int64_t s0 = self.strides()[0], s1 = self.strides()[1];
      for_each_target(target, weight, self.size(1), ignore_index,
                      [&](int64_t i, int64_t t, double w) { op[i] = T(-w * double(xp[i * s0 + t * s1])); });
    }
  });
}

void nll_pick_backward_cpu(const Tensor& grad_input, const Tensor& grad_output, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index) {
  const double* gp = static_cast<const double*>(grad_output.data_ptr());
  const int64_t C = grad_input.size(1);
  EMBER_DISPATCH_ALL(grad_input.dtype(), "nll_loss_backward", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = static_cast<T*>(grad_input.data_ptr());
      for_each_target(target, weight, C, ignore_index,
                      [&](int64_t i, int64_t t, double w) { p[i * C + t] = T(-w * gp[i]); });
    }
  });
}

}  // namespace

}  // namespace ember

EMBER_REGISTER_KERNEL(nll_pick_stub, CPU, &ember::nll_pick_cpu);
EMBER_REGISTER_KERNEL(nll_pick_backward_stub, CPU, &ember::nll_pick_backward_cpu);
