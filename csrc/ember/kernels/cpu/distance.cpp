// CPU kernel of cdist's direct form (kernels/distance.h): pair by pair, rows of a in parallel.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ember/kernels/distance.h"
#include "ember/parallel/parallel.h"

namespace ember {
namespace {

void cdist_cpu(const Tensor& out, const Tensor& ac, const Tensor& bc, double p) {
  const int64_t nb = ac.sizes()[0], r1 = ac.sizes()[1], c = ac.sizes()[2], r2 = bc.sizes()[1];
  EMBER_DISPATCH_ALL(ac.dtype(), "cdist", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      const T* ap = static_cast<const T*>(ac.data_ptr());
      const T* bp = static_cast<const T*>(bc.data_ptr());
      T* op = static_cast<T*>(out.data_ptr());
      const T tp = T(p);
      parallel_for(0, nb * r1, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, r2 * c)), [&](int64_t lo, int64_t hi) {
        for (int64_t row = lo; row < hi; row++) {
          const T* x = ap + row * c;
          const T* yb = bp + (row / r1) * r2 * c;
          for (int64_t j = 0; j < r2; j++) {
            const T* y = yb + j * c;
            T acc = 0;
            if (p == 0) {
              for (int64_t k = 0; k < c; k++) acc += T(x[k] != y[k]);
            } else if (p == 1) {
              for (int64_t k = 0; k < c; k++) acc += std::abs(x[k] - y[k]);
            } else if (p == 2) {
              for (int64_t k = 0; k < c; k++) acc += (x[k] - y[k]) * (x[k] - y[k]);
              acc = std::sqrt(acc);
            } else if (std::isinf(p)) {
              for (int64_t k = 0; k < c; k++) acc = std::max(acc, std::abs(x[k] - y[k]));
            } else {
              for (int64_t k = 0; k < c; k++) acc += std::pow(std::abs(x[k] - y[k]), tp);
              acc = std::pow(acc, T(1) / tp);
            }
            op[row * r2 + j] = acc;
          }
        }
      });
    }
  });
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(cdist_stub, CPU, &ember::cdist_cpu);
