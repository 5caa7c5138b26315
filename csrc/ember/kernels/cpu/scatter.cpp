// CPU kernels of the scatter/gather family (kernels/scatter.h): gather, scatter, scatter_add and
// scatter_reduce, walking the index tensor's elements in row-major order.
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/kernels/scatter.h"

namespace ember {
namespace {

// Calls f(self_offset, src_offset, element_number) for each element of `index` (bounds-checked).
template <class F>
void for_each_index(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, F f) {
  const int64_t nd = index.dim();
  const int64_t n = index.numel();
  if (n == 0) return;
  const int64_t* ip = static_cast<const int64_t*>(index.data_ptr());
  int64_t size = self.dim() ? self.sizes()[dim] : 1;
  DimVector pos(static_cast<size_t>(std::max<int64_t>(nd, 1)), 0);
  for (int64_t e = 0; e < n; e++) {
    int64_t ioff = 0, soff = 0, roff = 0;
    for (int64_t d = 0; d < nd; d++) {
      ioff += pos[d] * index.strides()[d];
      if (d != dim) soff += pos[d] * self.strides()[d];
      if (src && src->dim()) roff += pos[d] * src->strides()[d];
    }
    int64_t v = ip[ioff];
    EMBER_CHECK(v >= 0 && v < size, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
    f(soff + v * (self.dim() ? self.strides()[dim] : 0), roff, e);
    for (int64_t d = nd - 1; d >= 0; d--) {
      if (++pos[d] < index.sizes()[d]) break;
      pos[d] = 0;
    }
  }
}

void gather_cpu(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t isz = self.element_size();
  const char* in = static_cast<const char*>(self.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  for_each_index(self, dim, index, nullptr, [&](int64_t soff, int64_t, int64_t e) {
    std::memcpy(o + e * isz, in + soff * isz, size_t(isz));
  });
}

void scatter_cpu(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& s, ScatterMode mode) {
  EMBER_DISPATCH_WITH_COMPLEX(self.dtype(), mode == ScatterMode::Set ? "scatter" : "scatter_add", [&](auto tag) {
    using T = decltype(tag);
    T* out = static_cast<T*>(self.data_ptr());
    const T* in = static_cast<const T*>(s.data_ptr());
    for_each_index(self, dim, index, &s, [&](int64_t soff, int64_t roff, int64_t) {
      if (mode == ScatterMode::Set) {
        out[soff] = in[roff];
      } else {
        if constexpr (std::is_same_v<T, bool>) out[soff] = out[soff] || in[roff];
        else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) out[soff] = T(float(out[soff]) + float(in[roff]));
        else out[soff] = wrapping_add(out[soff], in[roff]);  // integers wrap, as PyTorch's
      }
    });
  });
}

template <class T>
bool nan_of(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <class T>
T combine(ScatterReduce r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return (r == ScatterReduce::Prod || r == ScatterReduce::Amin) ? (a && b) : (a || b);
  } else {
    switch (r) {
      case ScatterReduce::Sum:
      case ScatterReduce::Mean: return T(a + b);
      case ScatterReduce::Prod: return T(a * b);
      case ScatterReduce::Amax: return nan_of(b) ? b : std::max(a, b);
      case ScatterReduce::Amin: return nan_of(b) ? b : std::min(a, b);
    }
    return a;
  }
}

template <class T>
T identity(ScatterReduce r) {
  if constexpr (std::is_same_v<T, bool>) {
    return r == ScatterReduce::Prod || r == ScatterReduce::Amin;
  } else {
    switch (r) {
      case ScatterReduce::Sum:
      case ScatterReduce::Mean: return T(0);
      case ScatterReduce::Prod: return T(1);
      case ScatterReduce::Amax:
        return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
      case ScatterReduce::Amin:
        return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    }
    return T(0);
  }
}

void scatter_reduce_cpu(const Tensor& work, int64_t dim, const Tensor& idx, const Tensor& s, ScatterReduce red,
                        bool include_self) {
  const int64_t nd = work.dim();
  const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
  int64_t n = idx.numel(), size = work.sizes()[dim];
  IntArrayRef isz = idx.sizes(), wst = work.strides(), sst = s.strides();
  std::vector<int64_t> woff(static_cast<size_t>(n)), soff(static_cast<size_t>(n));
  {
    DimVector pos(size_t(nd), 0);
    for (int64_t e = 0; e < n; e++) {
      int64_t v = ip[e];
      EMBER_CHECK(v >= 0 && v < size, "index ", v, " is out of bounds for dimension ", dim, " with size ", size);
      int64_t wo = 0, so = 0;
      for (int64_t d = 0; d < nd; d++) {
        wo += (d == dim ? v : pos[d]) * wst[d];
        so += pos[d] * sst[d];
      }
      woff[size_t(e)] = wo;
      soff[size_t(e)] = so;
      for (int64_t d = nd - 1; d >= 0; d--) {
        if (++pos[d] < isz[d]) break;
        pos[d] = 0;
      }
    }
  }
  std::vector<int64_t> count;
  if (red == ScatterReduce::Mean) {
    count.assign(size_t(work.numel()), include_self ? 1 : 0);
    for (int64_t e = 0; e < n; e++) count[size_t(woff[size_t(e)])]++;
  }
  if (is_complex(work.dtype())) {  // sums, products and means (complex numbers have no order)
    EMBER_CHECK_KIND(red != ScatterReduce::Amax && red != ScatterReduce::Amin, NotImplemented,
                     "\"scatter_reduce_cpu\" not implemented for '", work.dtype(), "' with amax/amin");
    auto run = [&](auto tag) {
      using T = decltype(tag);
      T* w = static_cast<T*>(work.data_ptr());
      const T* sp = static_cast<const T*>(s.data_ptr());
      if (!include_self)
        for (int64_t e = 0; e < n; e++) w[woff[size_t(e)]] = red == ScatterReduce::Prod ? T(1) : T(0);
      for (int64_t e = 0; e < n; e++) {
        T& dst = w[woff[size_t(e)]];
        dst = red == ScatterReduce::Prod ? dst * sp[soff[size_t(e)]] : dst + sp[soff[size_t(e)]];
      }
      if (red == ScatterReduce::Mean)
        for (int64_t i = 0; i < work.numel(); i++)
          w[i] /= typename T::value_type(std::max<int64_t>(count[size_t(i)], 1));
    };
    if (work.dtype() == kComplexFloat) run(std::complex<float>{});
    else run(std::complex<double>{});
    return;
  }
  EMBER_DISPATCH_ALL(work.dtype(), "scatter_reduce", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      EMBER_FAIL(Runtime, "scatter_reduce: unexpected reduced float");
    } else {
      T* w = static_cast<T*>(work.data_ptr());
      const T* sp = static_cast<const T*>(s.data_ptr());
      if (!include_self)
        for (int64_t e = 0; e < n; e++) w[woff[size_t(e)]] = identity<T>(red);
      for (int64_t e = 0; e < n; e++) {
        T& dst = w[woff[size_t(e)]];
        dst = combine<T>(red, dst, sp[soff[size_t(e)]]);
      }
      if (red == ScatterReduce::Mean) {
        for (int64_t i = 0; i < work.numel(); i++) {
          int64_t c = std::max<int64_t>(count[size_t(i)], 1);
          if constexpr (std::is_same_v<T, bool>) {
            // (a bool mean is the logical or of the values, as any value divided by a positive count)
          } else if constexpr (std::is_floating_point_v<T>) {
            w[i] = T(w[i] / T(c));
          } else {
            int64_t v = int64_t(w[i]), q = v / c;
            if ((v % c != 0) && ((v < 0) != (c < 0))) q--;  // floor division
            w[i] = T(q);
          }
        }
      }
    }
  });
}

}  // namespace
}  // namespace ember

EMBER_REGISTER_KERNEL(gather_stub, CPU, &ember::gather_cpu);
EMBER_REGISTER_KERNEL(scatter_stub, CPU, &ember::scatter_cpu);
EMBER_REGISTER_KERNEL(scatter_reduce_stub, CPU, &ember::scatter_reduce_cpu);
