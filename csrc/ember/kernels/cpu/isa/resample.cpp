// Resampling's inner loops, compiled per ISA: uint8 images (ops/interp.cpp's fixed-point weights, int32
// multiply-adds) and float/double (and their adjoint, for backward), all across contiguous lanes, which
// the compiler vectorizes with the ISA's width.
#include <algorithm>
#include <cstdint>

#include "ember/kernels/cpu/isa/loops.h"  // EMBER_CPU_NS
#include "ember/kernels/kernels.h"

namespace ember::EMBER_CPU_NS {

namespace {
// One or two taps over a chunk of lanes, kept out of line: inlined, GCC unrolls-and-jams the tap loop
// into a loop over several taps that it leaves scalar (measured: 60% of the time there, 3-5x slower).
// (restrict: uint8_t may alias anything, which otherwise costs runtime overlap checks.)
__attribute__((noinline)) void mac(int32_t* __restrict acc, const uint8_t* __restrict xr, int32_t wt, int64_t n) {
  for (int64_t i = 0; i < n; i++) acc[i] += int32_t(xr[i]) * wt;
}

__attribute__((noinline)) void mac2(int32_t* __restrict acc, const uint8_t* __restrict xa,
                                    const uint8_t* __restrict xb, int32_t wa, int32_t wb, int64_t n) {
  for (int64_t i = 0; i < n; i++) acc[i] += int32_t(xa[i]) * wa + int32_t(xb[i]) * wb;
}

inline void store(uint8_t* __restrict yr, const int32_t* __restrict acc, int precision, int64_t n) {
  for (int64_t i = 0; i < n; i++) yr[i] = uint8_t(std::clamp(acc[i] >> precision, 0, 255));
}

template <class T>
__attribute__((noinline)) void scale_row(T* __restrict y, const T* __restrict x, T w, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = x[i] * w;
}

template <class T>
__attribute__((noinline)) void axpy_row(T* __restrict y, const T* __restrict x, T w, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] += x[i] * w;
}

template <class T>
void resample_rows(const T* x, T* y, int64_t lanes, const int64_t* start, const int64_t* idx, const T* w,
                   int64_t rows) {
  for (int64_t j = 0; j < rows; j++) {
    T* yr = y + j * lanes;
    if (start[j] == start[j + 1]) {
      for (int64_t i = 0; i < lanes; i++) yr[i] = T(0);
      continue;
    }
    scale_row(yr, x + idx[start[j]] * lanes, w[start[j]], lanes);
    for (int64_t t = start[j] + 1; t < start[j + 1]; t++) axpy_row(yr, x + idx[t] * lanes, w[t], lanes);
  }
}

template <class T>
void resample_rows_adjoint(const T* x, T* y, int64_t lanes, const int64_t* start, const int64_t* idx, const T* w,
                           int64_t rows) {
  for (int64_t j = 0; j < rows; j++)
    for (int64_t t = start[j]; t < start[j + 1]; t++) axpy_row(y + idx[t] * lanes, x + j * lanes, w[t], lanes);
}

template <class T>
void resample_typed(const void* x, void* y, int64_t lanes, const int64_t* start, const int64_t* idx, const void* w,
                    int64_t rows, bool adjoint) {
  auto* xs = static_cast<const T*>(x);
  auto* ys = static_cast<T*>(y);
  auto* ws = static_cast<const T*>(w);
  if (adjoint) resample_rows_adjoint(xs, ys, lanes, start, idx, ws, rows);
  else resample_rows(xs, ys, lanes, start, idx, ws, rows);
}
}  // namespace

void resample_float_kernel(ScalarType dt, const void* x, void* y, int64_t lanes, const int64_t* start,
                           const int64_t* idx, const void* w, int64_t rows, bool adjoint) {
  if (dt == kDouble) resample_typed<double>(x, y, lanes, start, idx, w, rows, adjoint);
  else resample_typed<float>(x, y, lanes, start, idx, w, rows, adjoint);
}

void resample_u8_kernel(const uint8_t* x, uint8_t* y, int64_t lanes, const int64_t* start, const int64_t* idx,
                        const int16_t* w16, int64_t rows, int precision) {
  constexpr int64_t kChunk = 256;  // the accumulators of one chunk of lanes stay in L1
  int32_t acc[kChunk];
  const int32_t half = int32_t(1) << (precision - 1);
  for (int64_t l0 = 0; l0 < lanes; l0 += kChunk) {
    const int64_t n = std::min(kChunk, lanes - l0);
    for (int64_t j = 0; j < rows; j++) {
      for (int64_t i = 0; i < n; i++) acc[i] = half;
      int64_t t = start[j];
      for (; t + 1 < start[j + 1]; t += 2)
        mac2(acc, x + idx[t] * lanes + l0, x + idx[t + 1] * lanes + l0, w16[t], w16[t + 1], n);
      if (t < start[j + 1]) mac(acc, x + idx[t] * lanes + l0, w16[t], n);
      store(y + j * lanes + l0, acc, precision, n);
    }
  }
}

}  // namespace ember::EMBER_CPU_NS
