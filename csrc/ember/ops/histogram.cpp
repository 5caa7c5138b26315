// Histograms: histc (equal-width bins over a range) and bincount (counts, or weight sums, per
// non-negative integer). The counting loops live in kernels/cpu/histogram.cpp.
#include <cmath>
#include <limits>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/histogram.h"

EMBER_DEFINE_STUB(histc_stub)
EMBER_DEFINE_STUB(bincount_stub)

namespace ember::native {

Tensor histc(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  EMBER_CHECK_KIND(is_floating(self.dtype()), NotImplemented, "\"histogram_cpu\" not implemented for '", self.dtype(), "'");
  EMBER_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  if (self.is_meta()) return empty_tensor({bins}, self.dtype(), self.device());  // the counts' shape only
  auto kernel = histc_stub(self.device(), "histc");
  double left = min.to_double(), right = max.to_double();
  if (left == right && self.numel() > 0) {
    left = ember::amin(self, {}, false).item().to_double();
    right = ember::amax(self, {}, false).item().to_double();
  }
  if (left == right) {
    left -= 1;
    right += 1;
  }
  EMBER_CHECK(!(std::isinf(left) || std::isinf(right) || std::isnan(left) || std::isnan(right)),
              "torch.histc: range of [", left, ", ", right, "] is not finite");
  EMBER_CHECK(left < right, "torch.histc: max must be larger than min");
  // the edges are the input dtype's values of left and right; positions computed in that precision
  Tensor edges = ember::full({2}, 0.0, TensorOptions(self.dtype()));
  edges.select(0, 0).fill_(left);
  edges.select(0, 1).fill_(right);
  double lo = edges.select(0, 0).item().to_double(), hi = edges.select(0, 1).item().to_double();
  check_output_size({bins}, 8, "histc");
  Tensor counts = ember::zeros({bins}, TensorOptions(kLong).device(self.device()));
  kernel(counts, self.to(kDouble).contiguous(), lo, hi, self.dtype());
  return counts.to(self.dtype());
}
const Tensor& histc_out(const Tensor& out, const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::histc(self, bins, min, max), true);
}

Tensor bincount(const Tensor& self, const Tensor& weights, int64_t minlength) {
  EMBER_CHECK_KIND(is_integral(self.dtype(), false), NotImplemented, "\"bincount_cpu\" not implemented for '",
                   self.dtype(), "'");
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  check_same_device("bincount", self.device(), {&weights});
  auto kernel = bincount_stub(self.device(), "bincount");
  if (self.dim() == 1 && self.numel() == 0) return ember::zeros({minlength}, TensorOptions(kLong).device(self.device()));
  // the largest value sizes the output; a non-1-d input is refused by the same check as a negative value
  int64_t mx = -1, mn = 0;
  if (self.dim() == 1) {
    mx = ember::amax(self, {}, false).item().to_long();
    mn = std::min<int64_t>(0, ember::amin(self, {}, false).item().to_long());
  }
  EMBER_CHECK(self.dim() == 1 && mn >= 0, "bincount only supports 1-d non-negative integral inputs.");
  EMBER_CHECK(!(weights.defined() && (weights.dim() != 1 || weights.sizes()[0] != self.sizes()[0])),
              "weights should be 1-d and have the same length as input");
  EMBER_CHECK(mx < std::numeric_limits<int64_t>::max(), "maximum value of input overflowed, it should be < ",
              std::numeric_limits<int64_t>::max(), " but got ", mx);  // (mx + 1 bins would wrap negative)
  int64_t nbins = std::max(mx + 1, minlength);
  ScalarType od = !weights.defined() ? kLong : weights.dtype() == kFloat ? kFloat : kDouble;
  Tensor out = ember::zeros({nbins}, TensorOptions(od).device(self.device()));
  kernel(out, self.to(kLong).contiguous(), weights.defined() ? weights.to(od).contiguous() : Tensor());
  return out;
}

}  // namespace ember::native
