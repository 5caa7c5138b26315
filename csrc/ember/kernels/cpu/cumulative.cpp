// CPU kernels of cummax/cummin and logcumsumexp (kernels/cumulative.h), row by row over contiguous
// [rows, n] blocks, rows in parallel.
#include <algorithm>
#include <cmath>
#include <limits>

#include "ember/kernels/cumulative.h"
#include "ember/parallel/parallel.h"

namespace ember {
namespace {

template <class T>
bool nan_of(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

void cum_extreme_cpu(const Tensor& vals, const Tensor& inds, const Tensor& x, bool is_max) {
  const int64_t n = x.sizes().back(), rows = n ? x.numel() / n : 0;
  int64_t* ip = static_cast<int64_t*>(inds.data_ptr());
  EMBER_DISPATCH_ALL(x.dtype(), is_max ? "cummax" : "cummin", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      EMBER_FAIL(Runtime, "cummax: unexpected reduced float");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* vp = static_cast<T*>(vals.data_ptr());
      parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; r++) {
          const T* row = xp + r * n;
          T best = row[0];
          int64_t bi = 0;
          for (int64_t i = 0; i < n; i++) {
            T v = row[i];
            // NaN wins and stays; ties move the index forward, as in PyTorch
            bool take = is_max ? (nan_of(v) || (!nan_of(best) && v >= best))
                               : (nan_of(v) || (!nan_of(best) && v <= best));
            if (take) { best = v; bi = i; }
            vp[r * n + i] = best;
            ip[r * n + i] = bi;
          }
        }
      });
    }
  });
}

void logcumsumexp_cpu(const Tensor& out, const Tensor& x) {
  const int64_t n = x.sizes().back(), rows = n ? x.numel() / n : 0;
  const double* xp = static_cast<const double*>(x.data_ptr());
  double* op = static_cast<double*>(out.data_ptr());
  parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      double acc = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < n; i++) {
        double v = xp[r * n + i];
        double lo = std::isnan(acc) ? acc : std::min(v, acc);
        double hi = std::isnan(acc) ? acc : std::max(v, acc);
        acc = (lo != hi || std::isfinite(lo)) ? std::log1p(std::exp(lo - hi)) + hi : v;
        op[r * n + i] = acc;
      }
    }
  });
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(cum_extreme_stub, CPU, &ember::cum_extreme_cpu);
EMBER_REGISTER_KERNEL(logcumsumexp_stub, CPU, &ember::logcumsumexp_cpu);
