// Fused pointwise LSTM / GRU cell math (forward and backward) over contiguous [rows, H] blocks:
// one pass per row instead of a dozen elementwise ops per time step.
#include <cmath>
#include <vector>

#include "ember/kernels/cpu/vec_math.h"
#include "ember/parallel/parallel.h"

namespace ember::EMBER_CPU_NS {

namespace {
// y[i] = sigmoid(x[i]) and y[i] = tanh(x[i]) over n contiguous values (SLEEF where available).
template <class T>
void sigmoid_array(const T* x, T* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = -x[i];
  exp_array(y, n);
  for (int64_t i = 0; i < n; i++) y[i] = T(1) / (T(1) + y[i]);
}

template <class T>
void tanh_array(const T* x, T* y, int64_t n) {
  int64_t i = 0;
#ifdef EMBER_HAVE_VEC_MATH
  if constexpr (std::is_same_v<T, float>) {
    for (; i + kVF <= n; i += kVF) vstoref(y + i, EMBER_VF(tanh)(vloadf(x + i)));
  } else {
    for (; i + kVD <= n; i += kVD) vstored(y + i, EMBER_VD(tanh)(vloadd(x + i)));
  }
#endif
  for (; i < n; i++) y[i] = std::tanh(x[i]);
}

// rows per parallel chunk: about kGrainSize values
int64_t row_grain(int64_t width) { return std::max<int64_t>(1, kGrainSize / std::max<int64_t>(width, 1)); }

// act = [sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)] of one row of LSTM gates (4H values)
template <class T>
void lstm_activations(const T* g, T* act, int64_t H) {
  sigmoid_array(g, act, 2 * H);
  tanh_array(g + 2 * H, act + 2 * H, H);
  sigmoid_array(g + 3 * H, act + 3 * H, H);
}

// GRU row: r, z (act[0:2H]) and n (act[2H:3H]); hn = gh's n part
template <class T>
void gru_activations(const T* gi, const T* gh, T* act, int64_t H) {
  for (int64_t j = 0; j < 2 * H; j++) act[j] = gi[j] + gh[j];
  sigmoid_array(act, act, 2 * H);
  for (int64_t j = 0; j < H; j++) act[2 * H + j] = gi[2 * H + j] + act[j] * gh[2 * H + j];
  tanh_array(act + 2 * H, act + 2 * H, H);
}
}  // namespace

void lstm_cell_kernel(ScalarType dt, const void* gatesv, const void* cxv, void* hyv, void* cyv, int64_t rows,
                      int64_t H) {
  dispatch_compute<kFloats>(dt, "_lstm_cell", [&](auto tag) {
    using T = decltype(tag);
    const T* gates = static_cast<const T*>(gatesv);
    const T* cx = static_cast<const T*>(cxv);
    T* hy = static_cast<T*>(hyv);
    T* cy = static_cast<T*>(cyv);
    parallel_for(0, rows, row_grain(4 * H), [&](int64_t lo, int64_t hi) {
      std::vector<T> act(size_t(4 * H)), tc(static_cast<size_t>(H));
      for (int64_t r = lo; r < hi; r++) {
        lstm_activations(gates + r * 4 * H, act.data(), H);
        const T *i = act.data(), *f = i + H, *g = f + H;
        const T* c0 = cx + r * H;
        T* c1 = cy + r * H;
        for (int64_t j = 0; j < H; j++) c1[j] = f[j] * c0[j] + i[j] * g[j];
        tanh_array(c1, tc.data(), H);
        const T* o = g + H;
        T* h1 = hy + r * H;
        for (int64_t j = 0; j < H; j++) h1[j] = o[j] * tc[j];
      }
    });
  });
}

void lstm_cell_backward_kernel(ScalarType dt, const void* dhyv, const void* dcyv, const void* gatesv, const void* cxv,
                               const void* cyv, void* dgatesv, void* dcxv, int64_t rows, int64_t H) {
  dispatch_compute<kFloats>(dt, "_lstm_cell_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dhy = static_cast<const T*>(dhyv);
    const T* dcy = static_cast<const T*>(dcyv);
    const T* gates = static_cast<const T*>(gatesv);
    const T* cx = static_cast<const T*>(cxv);
    const T* cy = static_cast<const T*>(cyv);
    T* dgates = static_cast<T*>(dgatesv);
    T* dcx = static_cast<T*>(dcxv);
    parallel_for(0, rows, row_grain(4 * H), [&](int64_t lo, int64_t hi) {
      std::vector<T> act(size_t(4 * H)), tc(static_cast<size_t>(H));
      for (int64_t r = lo; r < hi; r++) {
        lstm_activations(gates + r * 4 * H, act.data(), H);
        tanh_array(cy + r * H, tc.data(), H);
        const T *i = act.data(), *f = i + H, *g = f + H, *o = g + H;
        const T* c0 = cx + r * H;
        T* dg = dgates + r * 4 * H;
        for (int64_t j = 0; j < H; j++) {
          T dh = dhy ? dhy[r * H + j] : T(0);
          T dc = (dcy ? dcy[r * H + j] : T(0)) + dh * o[j] * (T(1) - tc[j] * tc[j]);
          dg[j] = dc * g[j] * i[j] * (T(1) - i[j]);
          dg[H + j] = dc * c0[j] * f[j] * (T(1) - f[j]);
          dg[2 * H + j] = dc * i[j] * (T(1) - g[j] * g[j]);
          dg[3 * H + j] = dh * tc[j] * o[j] * (T(1) - o[j]);
          if (dcx) dcx[r * H + j] = dc * f[j];
        }
      }
    });
  });
}

void gru_cell_kernel(ScalarType dt, const void* giv, const void* ghv, const void* hxv, void* hyv, int64_t rows,
                     int64_t H) {
  dispatch_compute<kFloats>(dt, "_gru_cell", [&](auto tag) {
    using T = decltype(tag);
    const T* gi = static_cast<const T*>(giv);
    const T* gh = static_cast<const T*>(ghv);
    const T* hx = static_cast<const T*>(hxv);
    T* hy = static_cast<T*>(hyv);
    parallel_for(0, rows, row_grain(3 * H), [&](int64_t lo, int64_t hi) {
      std::vector<T> act(size_t(3 * H));
      for (int64_t r = lo; r < hi; r++) {
        gru_activations(gi + r * 3 * H, gh + r * 3 * H, act.data(), H);
        const T *z = act.data() + H, *n = z + H;
        const T* h0 = hx + r * H;
        T* h1 = hy + r * H;
        for (int64_t j = 0; j < H; j++) h1[j] = n[j] + z[j] * (h0[j] - n[j]);
      }
    });
  });
}

void gru_cell_backward_kernel(ScalarType dt, const void* dhyv, const void* giv, const void* ghv, const void* hxv,
                              void* dgiv, void* dghv, void* dhxv, int64_t rows, int64_t H) {
  dispatch_compute<kFloats>(dt, "_gru_cell_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dhy = static_cast<const T*>(dhyv);
    const T* gi = static_cast<const T*>(giv);
    const T* gh = static_cast<const T*>(ghv);
    const T* hx = static_cast<const T*>(hxv);
    T* dgi = static_cast<T*>(dgiv);
    T* dgh = static_cast<T*>(dghv);
    T* dhx = static_cast<T*>(dhxv);
    parallel_for(0, rows, row_grain(3 * H), [&](int64_t lo, int64_t hi) {
      std::vector<T> act(size_t(3 * H));
      for (int64_t r = lo; r < hi; r++) {
        const T* ghr = gh + r * 3 * H;
        gru_activations(gi + r * 3 * H, ghr, act.data(), H);
        const T *rr = act.data(), *z = rr + H, *n = z + H;
        const T* h0 = hx + r * H;
        T* a = dgi + r * 3 * H;
        T* b = dgh + r * 3 * H;
        for (int64_t j = 0; j < H; j++) {
          T d = dhy[r * H + j];
          T dn = d * (T(1) - z[j]) * (T(1) - n[j] * n[j]);
          T dz = d * (h0[j] - n[j]) * z[j] * (T(1) - z[j]);
          T dr = dn * ghr[2 * H + j] * rr[j] * (T(1) - rr[j]);
          a[j] = dr;
          a[H + j] = dz;
          a[2 * H + j] = dn;
          b[j] = dr;
          b[H + j] = dz;
          b[2 * H + j] = dn * rr[j];
          if (dhx) dhx[r * H + j] = d * z[j];
        }
      }
    });
  });
}

}  // namespace ember::EMBER_CPU_NS
