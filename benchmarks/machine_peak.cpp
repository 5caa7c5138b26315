// This machine's ceilings, to read Ember's figures against: FMA peak (GFLOP/s), memory bandwidth
// (GB/s), and sgemm from OpenBLAS and oneDNN side by side (GFLOP/s and % of the FMA peak).
//
//   cmake --build build --target machine_peak && OMP_NUM_THREADS=2 build/machine_peak
//
// FMA peak: each thread runs 16 independent chains of AVX-512 (else AVX2) FMAs on registers, far more
// than the FMA latency x throughput product, so the units never wait; 2 FLOP per lane per FMA.
// Bandwidth: STREAM-style copy (a = b: 2 x 8 bytes per element moved) and triad (a = b + s*c: 3 x 8)
// over arrays 16x larger than the last-level cache, first-touched by the threads that use them.
#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef EMBER_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <class F>
double median_time(F f, int reps = 7) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

__attribute__((target("avx512f"))) double fma_chains_avx512(long iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; i++) acc[i] = _mm512_set1_ps(float(i));
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  }
  float out[16];
  __m512 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm512_add_ps(s, acc[i]);
  _mm512_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx2,fma"))) double fma_chains_avx2(long iters) {
  __m256 acc[16];
  for (int i = 0; i < 16; i++) acc[i] = _mm256_set1_ps(float(i));
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; it++) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; i++) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  }
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < 16; i++) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0];
}

double fma_peak(int threads) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int lanes = avx512 ? 16 : 8;
  const long iters = 20'000'000;
  double sink = 0;
  double t = median_time([&] {
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += avx512 ? fma_chains_avx512(iters) : fma_chains_avx2(iters);
  }, 5);
  if (sink == 42) std::printf(" ");
  return 2.0 * lanes * 16 * double(iters) * threads / t / 1e9;
}

void bandwidth(int threads, double* copy_gbs, double* triad_gbs) {
  const size_t n = size_t(1) << 26;  // 512 MiB per array of doubles
  std::vector<double> a(n), b(n), c(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (size_t i = 0; i < n; i++) a[i] = 0, b[i] = 1, c[i] = 2;
  double tc = median_time([&] {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = b[i];
  }, 5);
  double tt = median_time([&] {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0 * c[i];
  }, 5);
  *copy_gbs = 2.0 * 8 * n / tc / 1e9;
  *triad_gbs = 3.0 * 8 * n / tt / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : omp_get_max_threads();
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  double peak = fma_peak(threads);
  double copy, triad;
  bandwidth(threads, &copy, &triad);
  std::printf("threads %d\nFMA peak (%s): %.0f GFLOP/s\nbandwidth: copy %.1f GB/s, triad %.1f GB/s\n", threads,
              __builtin_cpu_supports("avx512f") ? "AVX-512" : "AVX2", peak, copy, triad);
  std::printf("\n| sgemm n | OpenBLAS GFLOP/s | %% peak | oneDNN GFLOP/s | %% peak |\n|---|---|---|---|---|\n");
  for (int n : {256, 512, 1024, 2048, 4096}) {
    std::vector<float> a(size_t(n) * n, 1.f), b(size_t(n) * n, 1.f), c(size_t(n) * n);
    double flop = 2.0 * n * n * double(n);
    double tb = median_time([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    }, n >= 2048 ? 5 : 15);
    double gb = flop / tb / 1e9, gd = 0;
#ifdef EMBER_HAVE_ONEDNN
    double td = median_time([&] {
      dnnl_sgemm('N', 'N', n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
    }, n >= 2048 ? 5 : 15);
    gd = flop / td / 1e9;
#endif
    std::printf("| %d | %.0f | %.0f%% | %.0f | %.0f%% |\n", n, gb, 100 * gb / peak, gd, 100 * gd / peak);
  }
}
