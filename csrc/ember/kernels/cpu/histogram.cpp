// CPU kernels of histc and bincount (kernels/histogram.h): serial counting loops.
#include <type_traits>

#include "ember/kernels/histogram.h"

namespace ember {
namespace {

void histc_cpu(const Tensor& counts, const Tensor& x, double lo, double hi, ScalarType dtype) {
  const int64_t bins = counts.numel();
  int64_t* c = static_cast<int64_t*>(counts.data_ptr());
  const double* xp = static_cast<const double*>(x.data_ptr());
  EMBER_DISPATCH_ALL(dtype, "histogram_cpu", [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_floating_point_v<S> || std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
      // each step rounded to the input dtype, as PyTorch computes the bin in that dtype (double
      // rounding from double is exact for +-*/ into float, half and bfloat16)
      auto q = [](double v) { return double(S(v)); };
      for (int64_t i = 0; i < x.numel(); i++) {
        double v = xp[i];
        if (!(v >= lo && v <= hi)) continue;  // outside the range, and NaN
        int64_t pos = int64_t(q(q(q(v - lo) * q(double(bins))) / q(hi - lo)));
        if (pos == bins) pos -= 1;
        c[pos]++;
      }
    }
  });
}

template <class W>
void bincount_into(const Tensor& out, const int64_t* v, int64_t n, const Tensor& weights) {
  W* o = static_cast<W*>(out.data_ptr());
  if (!weights.defined()) {
    for (int64_t i = 0; i < n; i++) o[v[i]]++;
    return;
  }
  const W* wp = static_cast<const W*>(weights.data_ptr());
  for (int64_t i = 0; i < n; i++) o[v[i]] += wp[i];
}

void bincount_cpu(const Tensor& out, const Tensor& x, const Tensor& weights) {
  const int64_t* v = static_cast<const int64_t*>(x.data_ptr());
  const int64_t n = x.numel();
  switch (out.dtype()) {
    case ScalarType::Long: return bincount_into<int64_t>(out, v, n, Tensor());
    case ScalarType::Float: return bincount_into<float>(out, v, n, weights);
    case ScalarType::Double: return bincount_into<double>(out, v, n, weights);
    default: EMBER_FAIL(Runtime, "bincount: unexpected output dtype ", out.dtype());
  }
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(histc_stub, CPU, &ember::histc_cpu);
EMBER_REGISTER_KERNEL(bincount_stub, CPU, &ember::bincount_cpu);
