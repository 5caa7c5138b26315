// softmax / log_softmax: max, exp (SLEEF), sum and scale in three passes over each row, rows in
// parallel. With inner > 1 the same passes run across the inner dim, vectorized over it.
#include <cmath>
#include <limits>
#include <vector>

#include "ember/kernels/cpu/isa/loops.h"
#include "ember/kernels/cpu/isa/vec_math.h"
#include "ember/parallel/parallel.h"

namespace ember::EMBER_CPU_NS {

namespace {

template <class T>
T row_sum(const T* x, int64_t n) {
  return lane_sum<T, 32>(n, [&](int64_t i) { return x[i]; });
}

template <class T>
void softmax_rows(bool log, const T* in, T* out, int64_t rows, int64_t d) {
  parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; r++) {
      const T* x = in + r * d;
      T* y = out + r * d;
      // NaNs are skipped by the max but still poison the sum of exponentials, so a row with a NaN
      // comes out all NaN, as in PyTorch
      T m = row_max_vec(x, d);
      if (std::isinf(m) && m < 0) m = 0;  // an all -inf row gives nan like torch: exp(-inf - 0) = 0, 0/0
      if (log) {  // x - m - log(sum(exp(x - m))), the exponentials never stored
        T lse = m + std::log(exp_sub_sum(x, m, static_cast<T*>(nullptr), d));
        for (int64_t i = 0; i < d; i++) y[i] = x[i] - lse;
      } else {
        T inv = T(1) / exp_sub_sum(x, m, y, d);
        for (int64_t i = 0; i < d; i++) y[i] *= inv;
      }
    }
  });
}

template <class T>
void softmax_inner(bool log, const T* in, T* out, int64_t outer, int64_t d, int64_t inner) {
  parallel_for(0, outer, 1, [&](int64_t b, int64_t e) {
    std::vector<T> m(static_cast<size_t>(inner)), s(static_cast<size_t>(inner));
    for (int64_t o = b; o < e; o++) {
      const T* x = in + o * d * inner;
      T* y = out + o * d * inner;
      for (int64_t i = 0; i < inner; i++) m[i] = -std::numeric_limits<T>::infinity();
      for (int64_t k = 0; k < d; k++)
        for (int64_t i = 0; i < inner; i++) {
          T v = x[k * inner + i];
          m[i] = (v > m[i] || v != v) ? v : m[i];
        }
      for (int64_t i = 0; i < inner; i++) {
        if (std::isinf(m[i]) && m[i] < 0) m[i] = 0;
        s[i] = 0;
      }
      for (int64_t k = 0; k < d; k++) {
        T* yk = y + k * inner;
        const T* xk = x + k * inner;
        for (int64_t i = 0; i < inner; i++) yk[i] = xk[i] - m[i];
        exp_array(yk, inner);
        for (int64_t i = 0; i < inner; i++) s[i] += yk[i];
      }
      for (int64_t k = 0; k < d; k++) {
        T* yk = y + k * inner;
        const T* xk = x + k * inner;
        if (log)
          for (int64_t i = 0; i < inner; i++) yk[i] = xk[i] - m[i] - std::log(s[i]);
        else
          for (int64_t i = 0; i < inner; i++) yk[i] /= s[i];
      }
    }
  });
}

template <class T>
void softmax_backward_impl(bool log, const T* g, const T* y, T* gi, int64_t outer, int64_t d, int64_t inner) {
  if (inner == 1) {
    parallel_for(0, outer, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d, 1)), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; r++) {
        const T* gr = g + r * d;
        const T* yr = y + r * d;
        T* o = gi + r * d;
        if (log) {
          exp_scale_sub(yr, gr, row_sum(gr, d), o, d);
        } else {
          T s = lane_sum<T>(d, [&](int64_t i) { return gr[i] * yr[i]; });
          for (int64_t i = 0; i < d; i++) o[i] = yr[i] * (gr[i] - s);
        }
      }
    });
    return;
  }
  parallel_for(0, outer, 1, [&](int64_t b, int64_t e) {
    std::vector<T> s(static_cast<size_t>(inner));
    for (int64_t o = b; o < e; o++) {
      const T* go = g + o * d * inner;
      const T* yo = y + o * d * inner;
      T* out = gi + o * d * inner;
      for (int64_t i = 0; i < inner; i++) s[i] = 0;
      for (int64_t k = 0; k < d; k++)
        for (int64_t i = 0; i < inner; i++) s[i] += log ? go[k * inner + i] : go[k * inner + i] * yo[k * inner + i];
      for (int64_t k = 0; k < d; k++)
        for (int64_t i = 0; i < inner; i++) {
          int64_t p = k * inner + i;
          out[p] = log ? go[p] - std::exp(yo[p]) * s[i] : yo[p] * (go[p] - s[i]);
        }
    }
  });
}

}  // namespace

void softmax_kernel(bool log, ScalarType dt, const void* in, void* out, int64_t outer, int64_t dim, int64_t inner) {
  dispatch_compute<kFloats>(dt, log ? "log_softmax" : "softmax", [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1) softmax_rows<T>(log, static_cast<const T*>(in), static_cast<T*>(out), outer, dim);
    else softmax_inner<T>(log, static_cast<const T*>(in), static_cast<T*>(out), outer, dim, inner);
  });
}

void softmax_backward_kernel(bool log, ScalarType dt, const void* grad, const void* out, void* grad_in, int64_t outer,
                             int64_t dim, int64_t inner) {
  dispatch_compute<kFloats>(dt, log ? "log_softmax_backward" : "softmax_backward", [&](auto tag) {
    using T = decltype(tag);
    softmax_backward_impl<T>(log, static_cast<const T*>(grad), static_cast<const T*>(out), static_cast<T*>(grad_in),
                             outer, dim, inner);
  });
}

}  // namespace ember::EMBER_CPU_NS
