// LSTM / GRU pointwise math on the GPU with the CPU kernels' formulas (kernels/cpu/isa/rnn.cpp): the
// cells, and one time step of a whole-sequence LSTM layer and of its backward (the step's GEMMs run on
// cuBLAS between these launches, kernels/cuda/rnn.cpp). One thread per (row, hidden unit).
#include <cmath>

#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

template <class T>
__device__ inline T sigmoid_of(T x) { return T(1) / (T(1) + std::exp(-x)); }
template <class T>
__device__ inline T tanh_of(T x) { return std::tanh(x); }

// d pre-activations of one unit from i f g o, tanh(c_t), c_{t-1}, dh and dc (dc becomes d c_{t-1});
// d's gates are H apart
template <class T>
__device__ inline void gate_grads(T i, T f, T g, T o, T tc, T c0, T dh, T& dc, T* d, int64_t H) {
  const T dcj = dc + dh * o * (T(1) - tc * tc);
  d[0] = dcj * g * i * (T(1) - i);
  d[H] = dcj * c0 * f * (T(1) - f);
  d[2 * H] = dcj * i * (T(1) - g * g);
  d[3 * H] = dh * tc * o * (T(1) - o);
  dc = dcj * f;
}

template <class T>
__global__ void __launch_bounds__(kThreads) lstm_cell_kernel(const T* gates, const T* cx, T* hy, T* cy, int64_t rows,
                                                             int64_t H) {
  for (int64_t x = int64_t(blockIdx.x) * kThreads + threadIdx.x; x < rows * H; x += int64_t(gridDim.x) * kThreads) {
    const int64_t r = x / H, j = x % H;
    const T* g = gates + r * 4 * H + j;
    const T i = sigmoid_of(g[0]), f = sigmoid_of(g[H]), gg = tanh_of(g[2 * H]), o = sigmoid_of(g[3 * H]);
    const T c1 = f * cx[x] + i * gg;
    cy[x] = c1;
    hy[x] = o * tanh_of(c1);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) lstm_cell_backward_kernel(const T* dhy, const T* dcy, const T* gates,
                                                                      const T* cx, const T* cy, T* dgates, T* dcx,
                                                                      int64_t rows, int64_t H) {
  for (int64_t x = int64_t(blockIdx.x) * kThreads + threadIdx.x; x < rows * H; x += int64_t(gridDim.x) * kThreads) {
    const int64_t r = x / H, j = x % H;
    const T* g = gates + r * 4 * H + j;
    const T i = sigmoid_of(g[0]), f = sigmoid_of(g[H]), gg = tanh_of(g[2 * H]), o = sigmoid_of(g[3 * H]);
    T dc = dcy ? dcy[x] : T(0);
    gate_grads(i, f, gg, o, tanh_of(cy[x]), cx[x], dhy ? dhy[x] : T(0), dc, dgates + r * 4 * H + j, H);
    if (dcx) dcx[x] = dc;
  }
}

// step t of a layer: acts_t and c_t, h_t from the pre-activations g_t (x W_ih^T + b + h_{t-1} W_hh^T)
template <class T>
__global__ void __launch_bounds__(kThreads) lstm_step_kernel(const T* g, const T* c0, T* acts, T* hy, T* cy, int64_t B,
                                                             int64_t H) {
  for (int64_t x = int64_t(blockIdx.x) * kThreads + threadIdx.x; x < B * H; x += int64_t(gridDim.x) * kThreads) {
    const int64_t r = x / H, j = x % H;
    const T* gr = g + r * 4 * H + j;
    T* a = acts + r * 4 * H + j;
    const T i = sigmoid_of(gr[0]), f = sigmoid_of(gr[H]), gg = tanh_of(gr[2 * H]), o = sigmoid_of(gr[3 * H]);
    a[0] = i;
    a[H] = f;
    a[2 * H] = gg;
    a[3 * H] = o;
    const T c1 = f * c0[x] + i * gg;
    cy[x] = c1;
    hy[x] = o * tanh_of(c1);
  }
}

// step t of the backward: dh += dhs_t, dc += dcs_t, then d gates_t (and d c_{t-1} into dc); dgin: the
// gradients reaching the activations themselves (double backward)
template <class T>
__global__ void __launch_bounds__(kThreads) lstm_step_backward_kernel(const T* dhs, const T* dcs, const T* dgin,
                                                                      const T* acts, const T* c_t, const T* c_prev,
                                                                      T* dg, T* dh, T* dc, int64_t B, int64_t H) {
  for (int64_t x = int64_t(blockIdx.x) * kThreads + threadIdx.x; x < B * H; x += int64_t(gridDim.x) * kThreads) {
    const int64_t r = x / H, j = x % H;
    const T* a = acts + r * 4 * H + j;
    if (dhs) dh[x] += dhs[x];
    if (dcs) dc[x] += dcs[x];
    T* d = dg + r * 4 * H + j;
    T dcx = dc[x];
    gate_grads(a[0], a[H], a[2 * H], a[3 * H], tanh_of(c_t[x]), c_prev[x], dh[x], dcx, d, H);
    dc[x] = dcx;
    if (dgin) {
      const T* da = dgin + r * 4 * H + j;
      for (int q = 0; q < 4; q++) {
        const T v = a[q * H];
        d[q * H] += da[q * H] * (q == 2 ? T(1) - v * v : v * (T(1) - v));
      }
    }
  }
}

// GRU unit x = (row, j): r, z from gi + gh, n = tanh(gi_n + r * gh_n)
template <class T>
__device__ inline void gru_gates(const T* gi, const T* gh, int64_t x, int64_t H, T& rr, T& z, T& n) {
  const int64_t r = x / H, j = x % H;
  const T* a = gi + r * 3 * H + j;
  const T* b = gh + r * 3 * H + j;
  rr = sigmoid_of(a[0] + b[0]);
  z = sigmoid_of(a[H] + b[H]);
  n = tanh_of(a[2 * H] + rr * b[2 * H]);
}

template <class T>
__global__ void __launch_bounds__(kThreads) gru_cell_kernel(const T* gi, const T* gh, const T* hx, T* hy, int64_t rows,
                                                            int64_t H) {
  for (int64_t x = int64_t(blockIdx.x) * kThreads + threadIdx.x; x < rows * H; x += int64_t(gridDim.x) * kThreads) {
    T rr, z, n;
    gru_gates(gi, gh, x, H, rr, z, n);
    hy[x] = n + z * (hx[x] - n);
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) gru_cell_backward_kernel(const T* dhy, const T* gi, const T* gh,
                                                                     const T* hx, T* dgi, T* dgh, T* dhx,
                                                                     int64_t rows, int64_t H) {
  for (int64_t x = int64_t(blockIdx.x) * kThreads + threadIdx.x; x < rows * H; x += int64_t(gridDim.x) * kThreads) {
    const int64_t r = x / H, j = x % H;
    const T* b = gh + r * 3 * H + j;
    T rr, z, n;
    gru_gates(gi, gh, x, H, rr, z, n);
    const T d = dhy[x];
    const T dn = d * (T(1) - z) * (T(1) - n * n);
    const T dz = d * (hx[x] - n) * z * (T(1) - z);
    const T dr = dn * b[2 * H] * rr * (T(1) - rr);
    T* ga = dgi + r * 3 * H + j;
    T* gb = dgh + r * 3 * H + j;
    ga[0] = dr;
    ga[H] = dz;
    ga[2 * H] = dn;
    gb[0] = dr;
    gb[H] = dz;
    gb[2 * H] = dn * rr;
    if (dhx) dhx[x] = d * z;
  }
}

}  // namespace

#define EMBER_RNN_LAUNCH(kernel, n, ...)                                                     \
  do {                                                                                      \
    if ((n) == 0) return kOk;                                                               \
    kernel<T><<<grid_stride_blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(__VA_ARGS__); \
    return launch_ok() ? kOk : kCudaError;                                                  \
  } while (0)

Status lstm_cell(int dtype, const void* gates, const void* cx, void* hy, void* cy, int64_t rows, int64_t H,
                 void* stream) {
  return dispatch<kFloats>(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    EMBER_RNN_LAUNCH(lstm_cell_kernel, rows * H, static_cast<const T*>(gates), static_cast<const T*>(cx),
                     static_cast<T*>(hy), static_cast<T*>(cy), rows, H);
  });
}

Status lstm_cell_backward(int dtype, const void* dhy, const void* dcy, const void* gates, const void* cx,
                          const void* cy, void* dgates, void* dcx, int64_t rows, int64_t H, void* stream) {
  return dispatch<kFloats>(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    EMBER_RNN_LAUNCH(lstm_cell_backward_kernel, rows * H, static_cast<const T*>(dhy), static_cast<const T*>(dcy),
                     static_cast<const T*>(gates), static_cast<const T*>(cx), static_cast<const T*>(cy),
                     static_cast<T*>(dgates), static_cast<T*>(dcx), rows, H);
  });
}

Status lstm_step(int dtype, const void* g, const void* c0, void* acts, void* hy, void* cy, int64_t B, int64_t H,
                 void* stream) {
  return dispatch<kFloats>(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    EMBER_RNN_LAUNCH(lstm_step_kernel, B * H, static_cast<const T*>(g), static_cast<const T*>(c0),
                     static_cast<T*>(acts), static_cast<T*>(hy), static_cast<T*>(cy), B, H);
  });
}

Status lstm_step_backward(int dtype, const void* dhs, const void* dcs, const void* dgin, const void* acts,
                          const void* c_t, const void* c_prev, void* dg, void* dh, void* dc, int64_t B, int64_t H,
                          void* stream) {
  return dispatch<kFloats>(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    EMBER_RNN_LAUNCH(lstm_step_backward_kernel, B * H, static_cast<const T*>(dhs), static_cast<const T*>(dcs),
                     static_cast<const T*>(dgin), static_cast<const T*>(acts), static_cast<const T*>(c_t),
                     static_cast<const T*>(c_prev), static_cast<T*>(dg), static_cast<T*>(dh), static_cast<T*>(dc),
                     B, H);
  });
}

Status gru_cell(int dtype, const void* gi, const void* gh, const void* hx, void* hy, int64_t rows, int64_t H,
                void* stream) {
  return dispatch<kFloats>(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    EMBER_RNN_LAUNCH(gru_cell_kernel, rows * H, static_cast<const T*>(gi), static_cast<const T*>(gh),
                     static_cast<const T*>(hx), static_cast<T*>(hy), rows, H);
  });
}

Status gru_cell_backward(int dtype, const void* dhy, const void* gi, const void* gh, const void* hx, void* dgi,
                         void* dgh, void* dhx, int64_t rows, int64_t H, void* stream) {
  return dispatch<kFloats>(dtype, [&](auto tag) -> Status {
    using T = decltype(tag);
    EMBER_RNN_LAUNCH(gru_cell_backward_kernel, rows * H, static_cast<const T*>(dhy), static_cast<const T*>(gi),
                     static_cast<const T*>(gh), static_cast<const T*>(hx), static_cast<T*>(dgi), static_cast<T*>(dgh),
                     static_cast<T*>(dhx), rows, H);
  });
}

#undef EMBER_RNN_LAUNCH

}  // namespace ember::cuda_kernels
