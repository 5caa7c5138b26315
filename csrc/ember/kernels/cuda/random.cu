// uniform_ and normal_ on the GPU, reading the same Philox4x32-10 words as the CPU's samplers
// (random/generator.h's Philox::block, compiled for both): for a seed, ember.randn(n, device="cuda")
// draws the values ember.randn(n) does (normal's log/sin/cos in double on both, then rounded) up to the
// last bits: CUDA's double log/cos/sin may differ from glibc's by an ulp, and nvcc fuses the affine steps
// (lo + (hi - lo) * u, mean + std * z) into multiply-adds.
#include "ember/core/macros.h"
#include "ember/kernels/cuda/loops.cuh"
#include "ember/random/philox.h"

namespace ember::cuda_kernels {
namespace {

__device__ inline float u32_to_float(uint32_t w) { return float(w >> 8) * (1.0f / 16777216.0f); }         // [0, 1)
__device__ inline double u64_to_double(uint64_t w) { return double(w >> 11) * (1.0 / 9007199254740992.0); }  // [0, 1)

// One thread per counter: its 4 words give elements [c * per, c * per + per).
template <class F>
__global__ void __launch_bounds__(kThreads) philox_kernel(int64_t counters, uint64_t key, uint64_t first, F f) {
  const int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (c >= counters) return;
  uint32_t w[4];
  Philox::block(key, first + uint64_t(c), w);
  f(c, w);
}

template <class F>
Status launch_philox(int64_t counters, uint64_t key, uint64_t first, void* stream, F f) {
  if (counters == 0) return kOk;
  philox_kernel<<<blocks_for(counters), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      counters, key, first, f);
  return launch_ok() ? kOk : kCudaError;
}

}  // namespace

Status uniform(int dtype, void* out, int64_t n, double lo, double hi, uint64_t key, uint64_t first, void* stream) {
  const int64_t counters = philox_counters(dtype, n);
  if (dtype == Double) {
    double* p = static_cast<double*>(out);
    return launch_philox(counters, key, first, stream, [=] __device__(int64_t c, const uint32_t* w) {
      for (int j = 0; j < 2 && 2 * c + j < n; j++) {
        const uint64_t v = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
        p[2 * c + j] = lo + (hi - lo) * u64_to_double(v);
      }
    });
  }
  if (dtype != Float) return kBadDtype;
  float* p = static_cast<float*>(out);
  const float flo = float(lo), fr = float(hi - lo);
  return launch_philox(counters, key, first, stream, [=] __device__(int64_t c, const uint32_t* w) {
    for (int j = 0; j < 4 && 4 * c + j < n; j++) p[4 * c + j] = flo + fr * u32_to_float(w[j]);
  });
}

Status normal(int dtype, void* out, int64_t n, double mean, double std, uint64_t key, uint64_t first, void* stream) {
  const int64_t counters = philox_counters(dtype, n);
  const double two_pi = 6.283185307179586;
  if (dtype == Double) {
    double* p = static_cast<double*>(out);
    return launch_philox(counters, key, first, stream, [=] __device__(int64_t c, const uint32_t* w) {
      const double u1 = 1.0 - u64_to_double((uint64_t(w[0]) << 32) | w[1]);  // (0, 1]
      const double u2 = u64_to_double((uint64_t(w[2]) << 32) | w[3]);
      const double r = ::sqrt(-2.0 * ::log(u1));
      for (int j = 0; j < 2 && 2 * c + j < n; j++) p[2 * c + j] = mean + std * r * (j == 0 ? ::cos(two_pi * u2) : ::sin(two_pi * u2));
    });
  }
  if (dtype != Float) return kBadDtype;
  float* p = static_cast<float*>(out);
  return launch_philox(counters, key, first, stream, [=] __device__(int64_t c, const uint32_t* w) {
    for (int j = 0; j < 4 && 4 * c + j < n; j++) {
      const int pair = j / 2;
      const double u1 = 1.0 - double(u32_to_float(w[2 * pair]));
      const double u2 = double(u32_to_float(w[2 * pair + 1]));
      const double r = ::sqrt(-2.0 * ::log(u1));
      p[4 * c + j] = float(mean + std * r * ((j & 1) == 0 ? ::cos(two_pi * u2) : ::sin(two_pi * u2)));
    }
  });
}

namespace {

// One thread per row, the CPU's multinomial_cpu step for step (the same Philox counter per draw, the same
// double additions in the same order), so a seed gives the CPU's samples. A bad row records (row * 4 + code)
// in *bad with atomicMin: the host reports the first bad row's error, as the CPU's loop raises it.
__global__ void __launch_bounds__(kThreads) multinomial_kernel(const double* p, int64_t* out, double* scratch, int64_t rows,
                                                               int64_t cats, int64_t ns, bool replacement, uint64_t key,
                                                               uint64_t first, unsigned long long* bad) {
  const int64_t r = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (r >= rows) return;
  const double* pr = p + r * cats;
  double* w = replacement ? nullptr : scratch + r * cats;  // without replacement drawn weights drop to 0
  double total = 0;
  for (int64_t c = 0; c < cats; c++) {
    const double v = pr[c];
    if (!(isfinite(v) && v >= 0)) {
      atomicMin(bad, (unsigned long long)(r * 4 + 1));
      return;
    }
    if (w) w[c] = v;
    total += v;
  }
  if (!(total > 0)) {
    atomicMin(bad, (unsigned long long)(r * 4 + 2));
    return;
  }
  const double* wt = w ? w : pr;
  for (int64_t s = 0; s < ns; s++) {
    uint32_t bits[4];
    Philox::block(key, first + uint64_t(r * ns + s), bits);
    const double u = u64_to_double((uint64_t(bits[0]) << 32) | bits[1]) * total;
    int64_t pick = cats - 1;
    double acc = 0;
    for (int64_t c = 0; c < cats; c++) {
      acc += wt[c];
      if (u < acc && wt[c] > 0) {
        pick = c;
        break;
      }
    }
    while (wt[pick] == 0 && pick > 0) pick--;  // rounding at the top end
    out[r * ns + s] = pick;
    if (w) {
      total -= w[pick];
      w[pick] = 0;
      if (s + 1 < ns && !(total > 0)) {
        atomicMin(bad, (unsigned long long)(r * 4 + 3));
        return;
      }
    }
  }
}

}  // namespace

Status multinomial(const double* p, int64_t* out, double* scratch, int64_t rows, int64_t cats, int64_t ns,
                   bool replacement, uint64_t key, uint64_t first, int64_t* bad, void* stream) {
  if (rows == 0) return kOk;
  multinomial_kernel<<<blocks_for(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      p, out, scratch, rows, cats, ns, replacement, key, first, reinterpret_cast<unsigned long long*>(bad));
  return launch_ok() ? kOk : kCudaError;
}

}  // namespace ember::cuda_kernels
