// CPU kernel of searchsorted / bucketize (kernels/search.h): a binary search per value, values in parallel.
#include <type_traits>

#include "ember/kernels/search.h"
#include "ember/parallel/parallel.h"

namespace ember {
namespace {

void searchsorted_cpu(const Tensor& out, const Tensor& b, const Tensor& v, const Tensor& so, bool right) {
  const int64_t* sp = so.defined() ? static_cast<const int64_t*>(so.data_ptr()) : nullptr;
  int64_t* op = static_cast<int64_t*>(out.data_ptr());
  const bool one_row = b.dim() == 1;
  int64_t m = b.sizes().back(), nv = v.numel();
  int64_t per_row = v.dim() ? v.sizes().back() : 1;
  EMBER_DISPATCH_ALL(b.dtype(), "searchsorted_out_cpu", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>) {
      EMBER_FAIL(Runtime, "searchsorted: unexpected dtype");
    } else {
      const T* bp = static_cast<const T*>(b.data_ptr());
      const T* vp = static_cast<const T*>(v.data_ptr());
      parallel_for(0, nv, 2048, [&](int64_t lo_i, int64_t hi_i) {
        for (int64_t i = lo_i; i < hi_i; i++) {
          int64_t row = one_row ? 0 : i / per_row;
          const T* bd = bp + row * m;
          const int64_t* sr = sp ? sp + row * m : nullptr;
          T val = vp[i];
          int64_t start = 0, end = m;
          while (start < end) {
            int64_t mid = start + ((end - start) >> 1);
            T mv = sr ? bd[sr[mid]] : bd[mid];
            bool go_right = right ? !(mv > val) : !(mv >= val);
            if (go_right) start = mid + 1;
            else end = mid;
          }
          op[i] = start;
        }
      });
    }
  });
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(searchsorted_stub, CPU, &ember::searchsorted_cpu);
