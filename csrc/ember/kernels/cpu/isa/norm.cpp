// Layer norm and batch norm kernels. Statistics accumulate in double for float inputs (two-pass
// mean then variance), so large rows and channels stay accurate.
#include <cmath>
#include <vector>

#include "ember/kernels/cpu/isa/loops.h"
#include "ember/parallel/parallel.h"

namespace ember::EMBER_CPU_NS {

namespace {
template <class T>
void row_stats(const T* x, int64_t n, double* mean_out, double* var_out) {
  double m = n ? lane_sum<double>(n, [&](int64_t i) { return double(x[i]); }) / double(n) : 0.0;
  double v = lane_sum<double>(n, [&](int64_t i) {
    double d = double(x[i]) - m;
    return d * d;
  });
  *mean_out = m;
  *var_out = n ? v / double(n) : 0.0;
}
}  // namespace

void layer_norm_kernel(ScalarType dt, const void* xv, const void* wv, const void* bv, void* yv, void* meanv,
                       void* rstdv, int64_t rows, int64_t cols, double eps) {
  dispatch_compute<kFloats>(dt, "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(xv);
    const T* w = static_cast<const T*>(wv);
    const T* b = static_cast<const T*>(bv);
    T* y = static_cast<T*>(yv);
    T* mean = static_cast<T*>(meanv);
    T* rstd = static_cast<T*>(rstdv);
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; r++) {
        const T* xr = x + r * cols;
        T* yr = y + r * cols;
        double m, v;
        row_stats(xr, cols, &m, &v);
        double rs = 1.0 / std::sqrt(v + eps);
        mean[r] = T(m);
        rstd[r] = T(rs);
        const T tm = T(m), trs = T(rs);
        if (w && b) for (int64_t i = 0; i < cols; i++) yr[i] = (xr[i] - tm) * trs * w[i] + b[i];
        else if (w) for (int64_t i = 0; i < cols; i++) yr[i] = (xr[i] - tm) * trs * w[i];
        else if (b) for (int64_t i = 0; i < cols; i++) yr[i] = (xr[i] - tm) * trs + b[i];
        else for (int64_t i = 0; i < cols; i++) yr[i] = (xr[i] - tm) * trs;
      }
    });
  });
}

void layer_norm_backward_kernel(ScalarType dt, const void* dyv, const void* xv, const void* meanv, const void* rstdv,
                                const void* wv, void* dxv, void* dwv, void* dbv, int64_t rows, int64_t cols) {
  dispatch_compute<kFloats>(dt, "layer_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = static_cast<const T*>(dyv);
    const T* x = static_cast<const T*>(xv);
    const T* mean = static_cast<const T*>(meanv);
    const T* rstd = static_cast<const T*>(rstdv);
    const T* w = static_cast<const T*>(wv);
    T* dx = static_cast<T*>(dxv);
    if (dx) {
      parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)), [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; r++) {
          const T* dyr = dy + r * cols;
          const T* xr = x + r * cols;
          T* dxr = dx + r * cols;
          double m = double(mean[r]), rs = double(rstd[r]);
          // dxhat = dy * w; dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
          double s1, s2;
          if (w) {
            s1 = lane_sum<double>(cols, [&](int64_t i) { return double(dyr[i]) * double(w[i]); });
            s2 = lane_sum<double>(cols, [&](int64_t i) { return double(dyr[i]) * double(w[i]) * (double(xr[i]) - m); });
          } else {
            s1 = lane_sum<double>(cols, [&](int64_t i) { return double(dyr[i]); });
            s2 = lane_sum<double>(cols, [&](int64_t i) { return double(dyr[i]) * (double(xr[i]) - m); });
          }
          s2 *= rs;
          double inv_n = 1.0 / double(cols);
          const T a = T(rs), c1 = T(s1 * inv_n), c2 = T(s2 * inv_n), tm = T(m);
          if (w) for (int64_t i = 0; i < cols; i++) dxr[i] = a * (dyr[i] * w[i] - c1 - (xr[i] - tm) * a * c2);
          else for (int64_t i = 0; i < cols; i++) dxr[i] = a * (dyr[i] - c1 - (xr[i] - tm) * a * c2);
        }
      });
    }
    if (dwv || dbv) {
      // column sums over rows, in double, one pass over the rows per thread-chunk of columns
      T* dw = static_cast<T*>(dwv);
      T* db = static_cast<T*>(dbv);
      parallel_for(0, cols, 64, [&](int64_t c0, int64_t c1) {
        std::vector<double> sw(size_t(c1 - c0), 0.0), sb(size_t(c1 - c0), 0.0);
        for (int64_t r = 0; r < rows; r++) {
          const T* dyr = dy + r * cols;
          const T* xr = x + r * cols;
          double m = double(mean[r]), rs = double(rstd[r]);
          for (int64_t i = c0; i < c1; i++) {
            sw[i - c0] += double(dyr[i]) * (double(xr[i]) - m) * rs;
            sb[i - c0] += double(dyr[i]);
          }
        }
        for (int64_t i = c0; i < c1; i++) {
          if (dw) dw[i] = T(sw[i - c0]);
          if (db) db[i] = T(sb[i - c0]);
        }
      });
    }
  });
}

void batch_norm_stats_kernel(ScalarType dt, const void* xv, double* mean, double* var, int64_t n, int64_t c, int64_t s) {
  dispatch_compute<kFloats>(dt, "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(xv);
    parallel_for(0, c, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ch++) {
        double sum = 0;
        for (int64_t i = 0; i < n; i++) {
          const T* p = x + (i * c + ch) * s;
          sum += lane_sum<double>(s, [&](int64_t j) { return double(p[j]); });
        }
        double cnt = double(n * s);
        double m = cnt ? sum / cnt : 0.0;
        double v = 0;
        for (int64_t i = 0; i < n; i++) {
          const T* p = x + (i * c + ch) * s;
          v += lane_sum<double>(s, [&](int64_t j) {
            double d = double(p[j]) - m;
            return d * d;
          });
        }
        mean[ch] = m;
        var[ch] = cnt ? v / cnt : 0.0;
      }
    });
  });
}

void batch_norm_apply_kernel(ScalarType dt, const void* xv, const double* a, const double* b, void* yv, int64_t n,
                             int64_t c, int64_t s) {
  dispatch_compute<kFloats>(dt, "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(xv);
    T* y = static_cast<T*>(yv);
    parallel_for(0, n * c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(s, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; p++) {
        int64_t ch = p % c;
        const T ta = T(a[ch]), tb = T(b[ch]);
        const T* xp = x + p * s;
        T* yp = y + p * s;
        for (int64_t j = 0; j < s; j++) yp[j] = xp[j] * ta + tb;
      }
    });
  });
}

void batch_norm_backward_reduce_kernel(ScalarType dt, const void* dyv, const void* xv, const double* mean,
                                       double* sum_dy, double* sum_dy_xmu, int64_t n, int64_t c, int64_t s) {
  dispatch_compute<kFloats>(dt, "batch_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = static_cast<const T*>(dyv);
    const T* x = static_cast<const T*>(xv);
    parallel_for(0, c, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ch++) {
        double s1 = 0, s2 = 0, m = mean[ch];
        for (int64_t i = 0; i < n; i++) {
          const T* dp = dy + (i * c + ch) * s;
          const T* xp = x + (i * c + ch) * s;
          s1 += lane_sum<double>(s, [&](int64_t j) { return double(dp[j]); });
          s2 += lane_sum<double>(s, [&](int64_t j) { return double(dp[j]) * (double(xp[j]) - m); });
        }
        sum_dy[ch] = s1;
        sum_dy_xmu[ch] = s2;
      }
    });
  });
}

void batch_norm_backward_apply_kernel(ScalarType dt, const void* dyv, const void* xv, const double* mean,
                                      const double* k1, const double* k2, const double* k3, void* dxv, int64_t n,
                                      int64_t c, int64_t s) {
  dispatch_compute<kFloats>(dt, "batch_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = static_cast<const T*>(dyv);
    const T* x = static_cast<const T*>(xv);
    T* dx = static_cast<T*>(dxv);
    parallel_for(0, n * c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(s, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; p++) {
        int64_t ch = p % c;
        const T a = T(k1[ch]), bb = T(k2[ch]), cc = T(k3[ch]), m = T(mean[ch]);
        const T* dp = dy + p * s;
        const T* xp = x + p * s;
        T* o = dx + p * s;
        for (int64_t j = 0; j < s; j++) o[j] = dp[j] * a + (xp[j] - m) * bb + cc;
      }
    });
  });
}

}  // namespace ember::EMBER_CPU_NS
