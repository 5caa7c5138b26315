// cdist: p-norm distances between the rows of two batches of matrices. Euclidean distances of
// many rows take PyTorch's matrix-product form (a composite); the others are computed pair by pair
// in kernels/cpu/distance.cpp.
#include <cmath>

#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/distance.h"

EMBER_DEFINE_STUB(cdist_stub)

namespace ember::native {

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<std::string_view> compute_mode) {
  int64_t mode = 0;
  if (compute_mode && *compute_mode != "use_mm_for_euclid_dist_if_necessary") {
    if (*compute_mode == "use_mm_for_euclid_dist") mode = 1;
    else if (*compute_mode == "donot_use_mm_for_euclid_dist") mode = 2;
    else EMBER_FAIL(Value, *compute_mode, " is not a valid value for compute_mode");
  }
  EMBER_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: ", x1.dim(), "D");
  EMBER_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: ", x2.dim(), "D");
  EMBER_CHECK(x1.sizes().back() == x2.sizes().back(), "X1 and X2 must have the same number of columns. X1: ",
              x1.sizes().back(), " X2: ", x2.sizes().back());
  EMBER_CHECK(is_floating(x1.dtype()), "cdist only supports floating-point dtypes, X1 got: ", x1.dtype());
  EMBER_CHECK(is_floating(x2.dtype()), "cdist only supports floating-point dtypes, X2 got: ", x2.dtype());
  EMBER_CHECK(p >= 0, "cdist only supports non-negative p values");
  EMBER_CHECK_KIND(!is_reduced_float(x1.dtype()), NotImplemented, "\"cdist\" not implemented for '", x1.dtype(), "'");
  EMBER_CHECK(x1.dtype() == x2.dtype(), "expected scalar type ", x1.dtype(), " but found ", x2.dtype());
  check_same_device("cdist", x1.device(), {&x2});
  int64_t r1 = x1.sizes()[x1.dim() - 2], r2 = x2.sizes()[x2.dim() - 2], c = x1.sizes().back();
  DimVector b1(IntArrayRef(x1.sizes().data(), size_t(x1.dim() - 2))), b2(IntArrayRef(x2.sizes().data(), size_t(x2.dim() - 2)));
  DimVector batch = broadcast_shapes(b1, b2);
  DimVector s1(batch), s2(batch);
  s1.push_back(r1);
  s1.push_back(c);
  s2.push_back(r2);
  s2.push_back(c);
  Tensor a = x1.expand(s1), b = x2.expand(s2);
  if (p == 2 && (mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25))) && a.numel() && b.numel()) {
    // PyTorch's matrix-product form: |a|^2 + |b|^2 - 2 a.b, clamped and square-rooted
    const std::vector<int64_t> last = {-1};
    Tensor an = ember::sum(a * a, last, true, std::nullopt), bn = ember::sum(b * b, last, true, std::nullopt);
    Tensor a_ = ember::cat({a * -2, an, ember::ones_like(an, {})}, -1);
    Tensor b_ = ember::cat({b, ember::ones_like(bn, {}), bn}, -1);
    return ember::clamp_min(ember::matmul(a_, b_.mT()), scalar_to_tensor(1e-30)).sqrt();
  }
  auto kernel = cdist_stub(x1.device(), "cdist");
  // the direct form, pair by pair (a [..., r1, r2, c] difference tensor would not fit large inputs)
  int64_t nb = 1;
  for (int64_t v : batch) nb *= v;
  Tensor ac = a.contiguous().reshape({nb, r1, c}), bc = b.contiguous().reshape({nb, r2, c});
  DimVector out_shape(batch);
  out_shape.push_back(r1);
  out_shape.push_back(r2);
  Tensor out = empty_tensor({nb, r1, r2}, x1.dtype(), x1.device());
  kernel(out, ac, bc, p);
  return out.reshape(out_shape);
}

}  // namespace ember::native
