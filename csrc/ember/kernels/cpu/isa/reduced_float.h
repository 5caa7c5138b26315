#pragma once
// float16 / bfloat16 elementwise loops. PyTorch's semantics are "convert each operand to float,
// compute in float, round the result once"; doing that as whole-tensor casts costs two extra
// passes and two temporaries. Here each inner run is cut into blocks that fit L1: the operands'
// 16-bit values are widened into float buffers (F16C's vcvtph2ps on the AVX2/AVX-512 builds), the
// float functor runs over the buffers (and vectorizes), and the block is narrowed on store. The
// values are those of the whole-tensor route, bit for bit: the same float computation, rounded to
// nearest even once.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "ember/core/half.h"
#include "ember/kernels/cpu/isa/loops.h"

#if defined(__F16C__)
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push  // GCC bug 105593 in the intrinsic headers (see vec_math.h)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif

namespace ember::EMBER_CPU_NS {

constexpr int64_t kReducedBlock = 1024;  // elements per block: 4 KiB of floats per operand

inline void half_to_float(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
#endif
  for (; i < n; i++) dst[i] = Half::to_float(src[i]);
}

inline void float_to_half(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; i++) dst[i] = Half::from_float(src[i]);
}

// bfloat16 is float's upper half: widening is a shift, narrowing an integer rounding; both vectorize.
inline void bf16_to_float(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = bits_to_float(uint32_t(src[i]) << 16);
}
inline void float_to_bf16(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] = BFloat16::from_float(src[i]);
}

// One value of dt (half or bfloat16) as float, and a float rounded (to nearest even) to dt's bits.
inline float widen_one(ScalarType dt, uint16_t bits) {
  return dt == kHalf ? Half::to_float(bits) : bits_to_float(uint32_t(bits) << 16);
}
inline uint16_t narrow_one(ScalarType dt, float v) { return dt == kHalf ? Half::from_float(v) : BFloat16::from_float(v); }
// n contiguous values of dt widened to float, and n floats narrowed to dt
inline void widen_array(ScalarType dt, const uint16_t* src, float* dst, int64_t n) {
  if (dt == kHalf) half_to_float(src, dst, n);
  else bf16_to_float(src, dst, n);
}
inline void narrow_array(ScalarType dt, const float* src, uint16_t* dst, int64_t n) {
  if (dt == kHalf) float_to_half(src, dst, n);
  else float_to_bf16(src, dst, n);
}

// v rounded to half or bfloat16, as a float
inline float round_to_reduced(ScalarType dt, float v) { return widen_one(dt, narrow_one(dt, v)); }

// One operand value of dtype dt (half, bfloat16 or float) at p, as float.
inline float load_one(ScalarType dt, const char* p) {
  return dt == kFloat ? *reinterpret_cast<const float*>(p) : widen_one(dt, *reinterpret_cast<const uint16_t*>(p));
}

// nextafter among half/bfloat16 values: the neighbour of x toward y (x and y are values of dt, widened
// exactly; the float nextafter would step a float ulp that rounds back to x)
inline float next_reduced(ScalarType dt, float x, float y) {
  if (x != x || y != y) return x + y;
  if (x == y) return y;
  uint16_t bits = narrow_one(dt, x);
  if (x == 0) bits = uint16_t(y > 0 ? 0x0001 : 0x8001);  // the smallest subnormal on y's side
  else if ((x < y) == (x > 0)) bits++;                     // away from zero
  else bits--;
  return widen_one(dt, bits);
}

// m values of an operand of dtype `dt` (half, bfloat16 or float) at byte stride `stride`, as floats:
// the operand itself when it is contiguous float, else widened into `buf` (`tmp` gathers strided
// 16-bit values so that the widening stays a vector loop).
inline const float* load_floats(ScalarType dt, const char* p, int64_t stride, int64_t m, float* buf, uint16_t* tmp) {
  if (stride == 0) {  // a broadcast operand (x * 2.5): widen once
    std::fill(buf, buf + m, load_one(dt, p));
    return buf;
  }
  if (dt == kFloat) {
    if (stride == int64_t(sizeof(float))) return reinterpret_cast<const float*>(p);
    for (int64_t j = 0; j < m; j++) buf[j] = *reinterpret_cast<const float*>(p + j * stride);
    return buf;
  }
  const uint16_t* src = reinterpret_cast<const uint16_t*>(p);
  if (stride != 2) {
    for (int64_t j = 0; j < m; j++) tmp[j] = *reinterpret_cast<const uint16_t*>(p + j * stride);
    src = tmp;
  }
  widen_array(dt, src, buf, m);
  return buf;
}

// Writes m floats to an operand of dtype half, bfloat16 or float, rounding to nearest even.
inline void store_floats(ScalarType dt, char* p, int64_t stride, int64_t m, const float* buf, uint16_t* tmp) {
  if (dt == kFloat) {
    if (stride == int64_t(sizeof(float))) std::memcpy(p, buf, size_t(m) * sizeof(float));
    else for (int64_t j = 0; j < m; j++) *reinterpret_cast<float*>(p + j * stride) = buf[j];
    return;
  }
  uint16_t* dst = stride == 2 ? reinterpret_cast<uint16_t*>(p) : tmp;
  narrow_array(dt, buf, dst, m);
  if (stride != 2)
    for (int64_t j = 0; j < m; j++) *reinterpret_cast<uint16_t*>(p + j * stride) = tmp[j];
}

// One inner run (the iterator's data pointers, byte strides, length) of an op whose compute dtype is
// half/bfloat16: operand k (1..N) is half, bfloat16 or float (PyTorch keeps some scalar operands
// unrounded); the output is half, bfloat16 or float (R = float) or bool (R = bool).
// block(x, out, m) computes out[j] from x[0..N-1][j], j < m.
template <int N, class R, class Block>
void reduced_float_run(const ScalarType* dts, char** d, const int64_t* s, int64_t n, const Block& block) {
  static_assert(std::is_same_v<R, float> || std::is_same_v<R, bool>, "a float or bool result");
  alignas(64) float in[N][kReducedBlock];
  alignas(64) R out[kReducedBlock];
  alignas(64) uint16_t tmp[kReducedBlock];
  const float* x[N];
  for (int k = 0; k < N; k++)  // a broadcast operand (x * 2.5) is widened once for the whole run
    if (s[k + 1] == 0) x[k] = load_floats(dts[k + 1], d[k + 1], 0, std::min(kReducedBlock, n), in[k], tmp);
  for (int64_t i0 = 0; i0 < n; i0 += kReducedBlock) {
    const int64_t m = std::min(kReducedBlock, n - i0);
    for (int k = 0; k < N; k++)
      if (s[k + 1] != 0) x[k] = load_floats(dts[k + 1], d[k + 1] + i0 * s[k + 1], s[k + 1], m, in[k], tmp);
    block(x, out, m);
    char* o = d[0] + i0 * s[0];
    if constexpr (std::is_same_v<R, bool>) {
      if (s[0] == 1) std::memcpy(o, out, size_t(m));
      else for (int64_t j = 0; j < m; j++) *reinterpret_cast<bool*>(o + j * s[0]) = out[j];
    } else {
      store_floats(dts[0], o, s[0], m, out, tmp);
    }
  }
}

template <int N, class R, class Block>
void reduced_float_loop(const TensorIter& it, const Block& block) {
  ScalarType dts[N + 1];
  for (int k = 0; k <= N; k++) dts[k] = it.dtype(k);
  it.for_each([&](char** d, const int64_t* s, int64_t n) { reduced_float_run<N, R>(dts, d, s, n, block); });
}

// Register-wide widening and narrowing, for ops simple enough to fuse: load, widen, compute, narrow
// and store one vector at a time, with no float buffers in between (L1's store bandwidth is what the
// blocked loop spends most).
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__F16C__))
#if defined(__AVX512F__)
using vwide = __m512;
constexpr int kWide = 16;
inline vwide widen(ScalarType dt, const uint16_t* p) {
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return dt == kHalf ? _mm512_cvtph_ps(h) : _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
inline void narrow(ScalarType dt, uint16_t* p, vwide v) {
  __m256i h;
  if (dt == kHalf) {
    h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {  // BFloat16::from_float: round to nearest even on the integer bits, NaN -> 0x7fc0
    const __m512i u = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_set1_epi32(0x7fc0));
    h = _mm512_cvtepi32_epi16(r);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
}
inline vwide vbroadcast(float v) { return _mm512_set1_ps(v); }
inline vwide mul_add(float a, vwide b, vwide c) { return _mm512_fmadd_ps(_mm512_set1_ps(a), b, c); }
#else
using vwide = __m256;
constexpr int kWide = 8;
inline vwide widen(ScalarType dt, const uint16_t* p) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return dt == kHalf ? _mm256_cvtph_ps(h) : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
inline void narrow(ScalarType dt, uint16_t* p, vwide v) {
  __m128i h;
  if (dt == kHalf) {
    h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  } else {  // BFloat16::from_float: round to nearest even on the integer bits, NaN -> 0x7fc0
    const __m256i u = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
    // 32 -> 16 bits: packus works within 128-bit lanes, the permute joins the two halves
    h = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08));
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
}
inline vwide vbroadcast(float v) { return _mm256_set1_ps(v); }
inline vwide mul_add(float a, vwide b, vwide c) { return _mm256_fmadd_ps(_mm256_set1_ps(a), b, c); }
#endif
#else
// The baseline build: one value at a time, and (as PyTorch's baseline kernels) no fused multiply-add.
using vwide = float;
constexpr int kWide = 1;
inline vwide widen(ScalarType dt, const uint16_t* p) { return widen_one(dt, *p); }
inline void narrow(ScalarType dt, uint16_t* p, vwide v) { *p = narrow_one(dt, v); }
inline vwide vbroadcast(float v) { return v; }
inline vwide mul_add(float a, vwide b, vwide c) { return a * b + c; }
#endif

// PyTorch's CPU loops run whole chunks of 32 16-bit values (with AVX-512 and with AVX2, measured
// against torch 2.13) through its vectorized code, and tails, strided runs and short tensors through
// scalar code. For add/sub with alpha the two differ in the last bit (fma(alpha, b, a) in float against
// 16-bit steps, a + (alpha * b)); the fused loop follows the same split to give PyTorch's bits.
constexpr int64_t kTorchChunk = 32;

// z = op(x, y) over half/bfloat16 operands of the output's dtype, each contiguous or a broadcast
// scalar (which may also be an unrounded float). op is a generic lambda that GCC's vector extensions
// let take both vwide and float; tail_op(x, y) computes the elements PyTorch leaves to scalar code
// (the tail of a run, and runs of other layouts).
template <class Op, class TailOp>
void fused_reduced_binary(const TensorIter& it, const Op& op, const TailOp& tail_op) {
  const ScalarType dts[3] = {it.dtype(0), it.dtype(1), it.dtype(2)};
  const ScalarType dt = dts[0];
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    const bool dense0 = s[0] == 2, dense1 = s[1] == 2 && dts[1] == dt, dense2 = s[2] == 2 && dts[2] == dt;
    uint16_t* o = reinterpret_cast<uint16_t*>(d[0]);
    const uint16_t* a = reinterpret_cast<const uint16_t*>(d[1]);
    const uint16_t* b = reinterpret_cast<const uint16_t*>(d[2]);
    const int64_t nvec = n - n % kTorchChunk;  // (a multiple of kWide)
    int64_t i = 0;
    if (dense0 && dense1 && dense2) {
      for (; i < nvec; i += kWide) narrow(dt, o + i, op(widen(dt, a + i), widen(dt, b + i)));
    } else if (dense0 && dense1 && s[2] == 0) {
      const vwide vb = vbroadcast(load_one(dts[2], d[2]));
      for (; i < nvec; i += kWide) narrow(dt, o + i, op(widen(dt, a + i), vb));
    } else if (dense0 && s[1] == 0 && dense2) {
      const vwide va = vbroadcast(load_one(dts[1], d[1]));
      for (; i < nvec; i += kWide) narrow(dt, o + i, op(va, widen(dt, b + i)));
    }
    if (i == n) return;
    char* rest[3] = {d[0] + i * s[0], d[1] + i * s[1], d[2] + i * s[2]};  // the tail, or another layout
    reduced_float_run<2, float>(dts, rest, s, n - i, [&](const float* const* x, float* out, int64_t m) {
      for (int64_t j = 0; j < m; j++) out[j] = tail_op(x[0][j], x[1][j]);
    });
  });
}

// The common case: a float functor applied element by element.
template <int N, class F>
void reduced_float_map(const TensorIter& it, const F& f) {
  if constexpr (N == 1) {
    using R = std::conditional_t<std::is_same_v<decltype(f(0.f)), bool>, bool, float>;
    reduced_float_loop<1, R>(it, [&](const float* const* x, R* out, int64_t m) {
      const float* a = x[0];
      for (int64_t j = 0; j < m; j++) out[j] = f(a[j]);
    });
  } else if constexpr (N == 2) {
    using R = std::conditional_t<std::is_same_v<decltype(f(0.f, 0.f)), bool>, bool, float>;
    reduced_float_loop<2, R>(it, [&](const float* const* x, R* out, int64_t m) {
      const float *a = x[0], *b = x[1];
      for (int64_t j = 0; j < m; j++) out[j] = f(a[j], b[j]);
    });
  } else {
    using R = std::conditional_t<std::is_same_v<decltype(f(0.f, 0.f, 0.f)), bool>, bool, float>;
    reduced_float_loop<3, R>(it, [&](const float* const* x, R* out, int64_t m) {
      const float *a = x[0], *b = x[1], *c = x[2];
      for (int64_t j = 0; j < m; j++) out[j] = f(a[j], b[j], c[j]);
    });
  }
}

}  // namespace ember::EMBER_CPU_NS
