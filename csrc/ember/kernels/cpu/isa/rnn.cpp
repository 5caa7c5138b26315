// Fused pointwise LSTM / GRU cell math (forward and backward) over contiguous [rows, H] blocks:
// one pass per row instead of a dozen elementwise ops per time step.
#include <algorithm>
#include <cmath>
#include <vector>

#include <omp.h>

#include "ember/kernels/cpu/isa/vec_math.h"
#include "ember/ops/gemm.h"
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

// Threads for a whole-sequence recurrence: each owns a block of hidden units (all four gates of them),
// so a time step needs one barrier instead of a fork / join per GEMM and per cell. Double stays on one
// thread (OpenBLAS's nested-threading behaviour is not ours to rely on).
int seq_threads(ScalarType dt, int64_t B, int64_t H) {
  if (dt != kFloat || in_parallel_region() || B * H < 2048) return 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), H / 16)));
}

// [j0, j1): the hidden units of thread tid of nth, in multiples of 16
std::pair<int64_t, int64_t> unit_block(int64_t H, int tid, int nth) {
  int64_t chunk = (H + nth - 1) / nth;
  if (nth > 1) chunk = (chunk + 15) / 16 * 16;
  int64_t j0 = std::min<int64_t>(H, tid * chunk);
  return {j0, std::min<int64_t>(H, j0 + chunk)};
}

// d pre-activations of one row block (n units; d's gates are H apart) from activations i f g o,
// tanh(c), c_{t-1}, dh and dc; dc becomes d c_{t-1}. Restrict pointers keep the loop vectorized.
template <class T>
void lstm_gate_grads(const T* __restrict i, const T* __restrict f, const T* __restrict g, const T* __restrict o,
                     const T* __restrict tc, const T* __restrict c0, const T* __restrict dh, T* __restrict dc,
                     T* __restrict d, int64_t n, int64_t H) {
  for (int64_t j = 0; j < n; j++) {
    T dcj = dc[j] + dh[j] * o[j] * (T(1) - tc[j] * tc[j]);
    d[j] = dcj * g[j] * i[j] * (T(1) - i[j]);
    d[H + j] = dcj * c0[j] * f[j] * (T(1) - f[j]);
    d[2 * H + j] = dcj * i[j] * (T(1) - g[j] * g[j]);
    d[3 * H + j] = dh[j] * tc[j] * o[j] * (T(1) - o[j]);
    dc[j] = dcj * f[j];
  }
}

int64_t step_time(int64_t s, int64_t T, bool reverse) { return reverse ? T - 1 - s : s; }

// body(tid, nth) on nt threads; one thread runs it inline (an OpenMP team of one would not count as a
// parallel region, so the GEMMs inside would each open a nested team).
template <class F>
void run_team(int nt, const F& body) {
  if (nt <= 1) {
    body(0, 1);
    return;
  }
#pragma omp parallel num_threads(nt)
  body(omp_get_thread_num(), omp_get_num_threads());
}

// the per-step sync of a team (none for one thread: an orphaned barrier would bind to a caller's team)
inline void team_barrier(int nth) {
  if (nth > 1) {
#pragma omp barrier
  }
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
      std::vector<T> act(size_t(4 * H)), tc(static_cast<size_t>(H)), dh(static_cast<size_t>(H)),
          dc(static_cast<size_t>(H));
      for (int64_t r = lo; r < hi; r++) {
        lstm_activations(gates + r * 4 * H, act.data(), H);
        tanh_array(cy + r * H, tc.data(), H);
        for (int64_t j = 0; j < H; j++) {
          dh[size_t(j)] = dhy ? dhy[r * H + j] : T(0);
          dc[size_t(j)] = dcy ? dcy[r * H + j] : T(0);
        }
        const T* i = act.data();
        lstm_gate_grads(i, i + H, i + 2 * H, i + 3 * H, tc.data(), cx + r * H, dh.data(), dc.data(),
                        dgates + r * 4 * H, H, H);
        if (dcx) std::copy(dc.begin(), dc.end(), dcx + r * H);
      }
    });
  });
}

void lstm_seq_kernel(ScalarType dt, void* gatesv, const void* w_tv, const void* h0v, const void* c0v, void* actsv,
                     void* hsv, void* csv, int64_t T, int64_t B, int64_t H, bool reverse) {
  dispatch_compute<kFloats>(dt, "_lstm_seq", [&](auto tag) {
    using T_ = decltype(tag);
    T_* gates = static_cast<T_*>(gatesv);
    T_* acts = static_cast<T_*>(actsv);
    const T_* w_t = static_cast<const T_*>(w_tv);
    T_* hs = static_cast<T_*>(hsv);
    T_* cs = static_cast<T_*>(csv);
    const int64_t G = 4 * H;
    run_team(seq_threads(dt, B, H), [&](int tid, int nth) {
      auto [j0, j1] = unit_block(H, tid, nth);
      const int64_t n = j1 - j0;
      std::vector<T_> tc(static_cast<size_t>(std::max<int64_t>(n, 1)));
      const T_* h = static_cast<const T_*>(h0v);
      const T_* c = static_cast<const T_*>(c0v);
      for (int64_t s = 0; s < T; s++) {
        int64_t t = step_time(s, T, reverse);
        T_* g = gates + t * B * G;
        T_* hy = hs + t * B * H;
        T_* cy = cs + t * B * H;
        if (n > 0) {
          for (int q = 0; q < 4; q++)  // this block's columns of each gate: += h W_hh^T
            native::gemm_nn(dt, B, n, H, h, H, w_t + q * H + j0, G, 1.0, g + q * H + j0, G);
          for (int64_t r = 0; r < B; r++) {
            const T_* gr = g + r * G + j0;
            T_* i = acts + t * B * G + r * G + j0;
            T_ *f = i + H, *gg = f + H, *o = gg + H;
            sigmoid_array(gr, i, n);
            sigmoid_array(gr + H, f, n);
            tanh_array(gr + 2 * H, gg, n);
            sigmoid_array(gr + 3 * H, o, n);
            const T_* c0 = c + r * H + j0;
            T_* c1 = cy + r * H + j0;
            for (int64_t j = 0; j < n; j++) c1[j] = f[j] * c0[j] + i[j] * gg[j];
            tanh_array(c1, tc.data(), n);
            T_* h1 = hy + r * H + j0;
            for (int64_t j = 0; j < n; j++) h1[j] = o[j] * tc[j];
          }
        }
        h = hy;
        c = cy;
        team_barrier(nth);
      }
    });
  });
}

void lstm_seq_backward_kernel(ScalarType dt, const void* dhsv, const void* dcsv, const void* dactsv,
                              const void* actsv, const void* w_hhv, const void* c0v, const void* csv, void* dgatesv,
                              void* dhv, void* dcv, int64_t T, int64_t B, int64_t H, bool reverse) {
  dispatch_compute<kFloats>(dt, "_lstm_seq_backward", [&](auto tag) {
    using T_ = decltype(tag);
    const T_* dhs = static_cast<const T_*>(dhsv);
    const T_* dcs = static_cast<const T_*>(dcsv);
    const T_* dgin = static_cast<const T_*>(dactsv);
    const T_* acts = static_cast<const T_*>(actsv);
    const T_* w_hh = static_cast<const T_*>(w_hhv);
    const T_* cs = static_cast<const T_*>(csv);
    T_* dgates = static_cast<T_*>(dgatesv);
    T_* dh = static_cast<T_*>(dhv);
    T_* dc = static_cast<T_*>(dcv);
    const int64_t G = 4 * H;
    run_team(seq_threads(dt, B, H), [&](int tid, int nth) {
      auto [j0, j1] = unit_block(H, tid, nth);
      const int64_t n = j1 - j0;
      std::vector<T_> tc(static_cast<size_t>(std::max<int64_t>(n, 1)));
      for (int64_t s = T - 1; s >= 0; s--) {
        int64_t t = step_time(s, T, reverse);
        const T_* c_prev = s == 0 ? static_cast<const T_*>(c0v) : cs + step_time(s - 1, T, reverse) * B * H;
        T_* dg = dgates + t * B * G;
        if (n > 0) {
          for (int64_t r = 0; r < B; r++) {
            const T_* i = acts + t * B * G + r * G + j0;
            tanh_array(cs + t * B * H + r * H + j0, tc.data(), n);
            const int64_t at = t * B * H + r * H + j0;
            T_* __restrict dhr = dh + r * H + j0;
            T_* __restrict dcr = dc + r * H + j0;
            if (dhs)
              for (int64_t j = 0; j < n; j++) dhr[j] += dhs[at + j];
            if (dcs)
              for (int64_t j = 0; j < n; j++) dcr[j] += dcs[at + j];
            T_* d = dg + r * G + j0;
            lstm_gate_grads(i, i + H, i + 2 * H, i + 3 * H, tc.data(), c_prev + r * H + j0, dhr, dcr, d, n, H);
            if (dgin)  // gradients reaching the activations themselves (double backward): through act'
              for (int q = 0; q < 4; q++) {
                const T_* a = i + q * H;
                const T_* da = dgin + t * B * G + r * G + q * H + j0;
                for (int64_t j = 0; j < n; j++)
                  d[q * H + j] += da[j] * (q == 2 ? T_(1) - a[j] * a[j] : a[j] * (T_(1) - a[j]));
              }
          }
        }
        team_barrier(nth);
        // every column of this step's d gates is written: d h_{t-1}[:, block] = dgates_t W_hh[:, block]
        if (n > 0) native::gemm_nn(dt, B, n, G, dg, G, w_hh + j0, H, 0.0, dh + j0, H);
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
