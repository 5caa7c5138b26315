#pragma once
// Vector transcendental math from SLEEF for the contiguous float32/float64 paths of the AVX2 and
// AVX-512 builds (1-ULP variants, as PyTorch uses). Other builds and strided loops fall back to libm.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ember/kernels/cpu/isa/loops.h"

#if defined(EMBER_USE_SLEEF) && (defined(__AVX2__) || defined(__AVX512F__))
// GCC 12.2's intrinsics feed _mm512_undefined_*() (a deliberate `__Y = __Y`) into max/min/extract, and
// after inlining it reports those as uninitialized in every caller (GCC bug 105593, fixed in 12.3/13).
// The pragma covers only the intrinsic headers' own lines: our code stays checked.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#include <sleef.h>
#define EMBER_HAVE_VEC_MATH 1
#endif

namespace ember::EMBER_CPU_NS {

// erf^-1 by Giles' single-precision approximation refined with two Newton steps on erf.
inline double erfinv_double(double y) {
  if (!(y > -1 && y < 1)) {
    if (y == 1) return std::numeric_limits<double>::infinity();
    if (y == -1) return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  double w = -std::log((1.0 - y) * (1.0 + y)), x;
  if (w < 5.0) {
    w -= 2.5;
    x = 2.81022636e-08;
    x = 3.43273939e-07 + x * w; x = -3.5233877e-06 + x * w; x = -4.39150654e-06 + x * w;
    x = 0.00021858087 + x * w;  x = -0.00125372503 + x * w; x = -0.00417768164 + x * w;
    x = 0.246640727 + x * w;    x = 1.50140941 + x * w;
  } else {
    w = std::sqrt(w) - 3.0;
    x = -0.000200214257;
    x = 0.000100950558 + x * w; x = 0.00134934322 + x * w; x = -0.00367342844 + x * w;
    x = 0.00573950773 + x * w;  x = -0.0076224613 + x * w; x = 0.00943887047 + x * w;
    x = 1.00167406 + x * w;     x = 2.83297682 + x * w;
  }
  x *= y;
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 2; i++) x -= (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
  return x;
}

#ifdef EMBER_HAVE_VEC_MATH
#ifdef __AVX512F__
#define EMBER_VF(name) Sleef_##name##f16_u10avx512f
#define EMBER_VD(name) Sleef_##name##d8_u10avx512f
using vfloat = __m512; using vdouble = __m512d;
constexpr int kVF = 16, kVD = 8;
inline vfloat vloadf(const float* p) { return _mm512_loadu_ps(p); }
inline void vstoref(float* p, vfloat v) { _mm512_storeu_ps(p, v); }
inline vdouble vloadd(const double* p) { return _mm512_loadu_pd(p); }
inline void vstored(double* p, vdouble v) { _mm512_storeu_pd(p, v); }
inline vfloat vfmodf(vfloat a, vfloat b) { return Sleef_fmodf16_avx512f(a, b); }  // exact, as libm's
inline vdouble vfmodd(vdouble a, vdouble b) { return Sleef_fmodd8_avx512f(a, b); }
#else
#define EMBER_VF(name) Sleef_##name##f8_u10avx2
#define EMBER_VD(name) Sleef_##name##d4_u10avx2
using vfloat = __m256; using vdouble = __m256d;
constexpr int kVF = 8, kVD = 4;
inline vfloat vloadf(const float* p) { return _mm256_loadu_ps(p); }
inline void vstoref(float* p, vfloat v) { _mm256_storeu_ps(p, v); }
inline vdouble vloadd(const double* p) { return _mm256_loadu_pd(p); }
inline void vstored(double* p, vdouble v) { _mm256_storeu_pd(p, v); }
inline vfloat vfmodf(vfloat a, vfloat b) { return Sleef_fmodf8_avx2(a, b); }  // exact, as libm's
inline vdouble vfmodd(vdouble a, vdouble b) { return Sleef_fmodd4_avx2(a, b); }
#endif

// one spelling for both widths: EMBER_V(add, ps) is _mm512_add_ps or _mm256_add_ps
#ifdef __AVX512F__
#define EMBER_V(op, suf) _mm512_##op##_##suf
#else
#define EMBER_V(op, suf) _mm256_##op##_##suf
#endif
template <template <class> class F> struct VecFn { static constexpr bool ok = false; };
#define EMBER_VEC(F, sleef_name)                                         \
  template <> struct VecFn<F> {                                          \
    static constexpr bool ok = true;                                     \
    static vfloat f(vfloat x) { return EMBER_VF(sleef_name)(x); }        \
    static vdouble d(vdouble x) { return EMBER_VD(sleef_name)(x); }      \
  };
template <class T> struct Exp; template <class T> struct Log; template <class T> struct Sin;
template <class T> struct Cos; template <class T> struct Tanh; template <class T> struct Expm1;
template <class T> struct Log1p; template <class T> struct Log2; template <class T> struct Log10;
template <class T> struct Exp2; template <class T> struct Tan; template <class T> struct Asin;
template <class T> struct Acos; template <class T> struct Atan; template <class T> struct Sinh;
template <class T> struct Cosh; template <class T> struct Asinh; template <class T> struct Acosh;
template <class T> struct Atanh; template <class T> struct Erf; template <class T> struct Erfc;
EMBER_VEC(Exp, exp) EMBER_VEC(Log, log) EMBER_VEC(Sin, sin) EMBER_VEC(Cos, cos) EMBER_VEC(Tanh, tanh)
EMBER_VEC(Expm1, expm1) EMBER_VEC(Log2, log2) EMBER_VEC(Log10, log10)
EMBER_VEC(Exp2, exp2) EMBER_VEC(Tan, tan) EMBER_VEC(Asin, asin) EMBER_VEC(Acos, acos) EMBER_VEC(Atan, atan)
EMBER_VEC(Sinh, sinh) EMBER_VEC(Cosh, cosh) EMBER_VEC(Atanh, atanh)
EMBER_VEC(Erf, erf)
#undef EMBER_VEC

// SLEEF's asinh/acosh overflow past |x| ~ 1.8e19 (float) / 1.3e154 (double) and its float log1p past
// ~1e38, where the answers are finite: those lanes take log|x| + ln 2 (asinh, acosh) or log x (log1p),
// exact there (the dropped terms are below an ulp).
struct LargeArg {
  static constexpr float kF = 1e18f, kF_log1p = 1e30f;
  static constexpr double kD = 1e150, kLn2 = 0.6931471805599453;
};
// Signed (asinh): lanes with |x| > th get sign(x) (log|x| + ln 2); unsigned (acosh): lanes with x > th
// get log x + ln 2 (a negative x stays NaN).
#ifdef __AVX512F__
template <bool Signed>
inline vfloat log2x_f(vfloat x, vfloat r, float th) {
  const vfloat ax = _mm512_abs_ps(x);
  const __mmask16 big = _mm512_cmp_ps_mask(Signed ? ax : x, _mm512_set1_ps(th), _CMP_GT_OQ);
  if (!big) return r;
  vfloat l = _mm512_add_ps(Sleef_logf16_u10avx512f(ax), _mm512_set1_ps(float(LargeArg::kLn2)));
  if (Signed) l = _mm512_mask_sub_ps(l, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), _mm512_setzero_ps(), l);
  return _mm512_mask_blend_ps(big, r, l);
}
template <bool Signed>
inline vdouble log2x_d(vdouble x, vdouble r, double th) {
  const vdouble ax = _mm512_abs_pd(x);
  const __mmask8 big = _mm512_cmp_pd_mask(Signed ? ax : x, _mm512_set1_pd(th), _CMP_GT_OQ);
  if (!big) return r;
  vdouble l = _mm512_add_pd(Sleef_logd8_u10avx512f(ax), _mm512_set1_pd(LargeArg::kLn2));
  if (Signed) l = _mm512_mask_sub_pd(l, _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ), _mm512_setzero_pd(), l);
  return _mm512_mask_blend_pd(big, r, l);
}
inline vfloat log1p_big_f(vfloat x, vfloat r) {
  const __mmask16 big = _mm512_cmp_ps_mask(x, _mm512_set1_ps(LargeArg::kF_log1p), _CMP_GT_OQ);
  return big ? _mm512_mask_blend_ps(big, r, Sleef_logf16_u10avx512f(x)) : r;
}
#else
template <bool Signed>
inline vfloat log2x_f(vfloat x, vfloat r, float th) {
  const vfloat sign = _mm256_set1_ps(-0.0f);
  const vfloat ax = _mm256_andnot_ps(sign, x);
  const vfloat big = _mm256_cmp_ps(Signed ? ax : x, _mm256_set1_ps(th), _CMP_GT_OQ);
  if (!_mm256_movemask_ps(big)) return r;
  vfloat l = _mm256_add_ps(Sleef_logf8_u10avx2(ax), _mm256_set1_ps(float(LargeArg::kLn2)));
  if (Signed) l = _mm256_or_ps(l, _mm256_and_ps(sign, x));  // log|x| + ln 2 > 0: copy x's sign onto it
  return _mm256_blendv_ps(r, l, big);
}
template <bool Signed>
inline vdouble log2x_d(vdouble x, vdouble r, double th) {
  const vdouble sign = _mm256_set1_pd(-0.0);
  const vdouble ax = _mm256_andnot_pd(sign, x);
  const vdouble big = _mm256_cmp_pd(Signed ? ax : x, _mm256_set1_pd(th), _CMP_GT_OQ);
  if (!_mm256_movemask_pd(big)) return r;
  vdouble l = _mm256_add_pd(Sleef_logd4_u10avx2(ax), _mm256_set1_pd(LargeArg::kLn2));
  if (Signed) l = _mm256_or_pd(l, _mm256_and_pd(sign, x));
  return _mm256_blendv_pd(r, l, big);
}
inline vfloat log1p_big_f(vfloat x, vfloat r) {
  const vfloat big = _mm256_cmp_ps(x, _mm256_set1_ps(LargeArg::kF_log1p), _CMP_GT_OQ);
  return _mm256_movemask_ps(big) ? _mm256_blendv_ps(r, Sleef_logf8_u10avx2(x), big) : r;
}
#endif
template <> struct VecFn<Asinh> {
  static constexpr bool ok = true;
  static vfloat f(vfloat x) { return log2x_f<true>(x, EMBER_VF(asinh)(x), LargeArg::kF); }
  static vdouble d(vdouble x) { return log2x_d<true>(x, EMBER_VD(asinh)(x), LargeArg::kD); }
};
template <> struct VecFn<Acosh> {  // (x < 1 is NaN either way: only large positive lanes are big)
  static constexpr bool ok = true;
  static vfloat f(vfloat x) { return log2x_f<false>(x, EMBER_VF(acosh)(x), LargeArg::kF); }
  static vdouble d(vdouble x) { return log2x_d<false>(x, EMBER_VD(acosh)(x), LargeArg::kD); }
};
template <> struct VecFn<Log1p> {
  static constexpr bool ok = true;
  static vfloat f(vfloat x) { return log1p_big_f(x, EMBER_VF(log1p)(x)); }
  static vdouble d(vdouble x) { return EMBER_VD(log1p)(x); }
};
template <> struct VecFn<Erfc> {  // SLEEF's erfc is a 1.5-ULP variant
  static constexpr bool ok = true;
#ifdef __AVX512F__
  static vfloat f(vfloat x) { return Sleef_erfcf16_u15avx512f(x); }
  static vdouble d(vdouble x) { return Sleef_erfcd8_u15avx512f(x); }
#else
  static vfloat f(vfloat x) { return Sleef_erfcf8_u15avx2(x); }
  static vdouble d(vdouble x) { return Sleef_erfcd4_u15avx2(x); }
#endif
};

// sigmoid as the scalar functor spells it, 1 / (1 + exp(-x)), on SLEEF's exp
template <class T> struct Sigmoid;
template <> struct VecFn<Sigmoid> {
  static constexpr bool ok = true;
  static vfloat f(vfloat x) {
    const vfloat one = EMBER_V(set1, ps)(1.f);
    return EMBER_V(div, ps)(one, EMBER_V(add, ps)(one, EMBER_VF(exp)(EMBER_V(sub, ps)(EMBER_V(setzero, ps)(), x))));
  }
  static vdouble d(vdouble x) {
    const vdouble one = EMBER_V(set1, pd)(1.);
    return EMBER_V(div, pd)(one, EMBER_V(add, pd)(one, EMBER_VD(exp)(EMBER_V(sub, pd)(EMBER_V(setzero, pd)(), x))));
  }
};

// Contiguous float/double unary op through SLEEF; false if this op/dtype/layout has no vector path.
template <template <class> class F, class T>
bool try_vec_unary(TensorIter& it) {
  if constexpr (!VecFn<F>::ok || !(std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    return false;
  } else {
    if (it.dtype(0) != it.dtype(1)) return false;
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      T* o = reinterpret_cast<T*>(d[0]);
      const T* x = reinterpret_cast<const T*>(d[1]);
      int64_t i = 0;
      if (s[0] == sizeof(T) && s[1] == sizeof(T)) {
        if constexpr (std::is_same_v<T, float>) {
          for (; i + kVF <= n; i += kVF) vstoref(o + i, VecFn<F>::f(vloadf(x + i)));
        } else {
          for (; i + kVD <= n; i += kVD) vstored(o + i, VecFn<F>::d(vloadd(x + i)));
        }
        F<T> f;
        for (; i < n; i++) o[i] = f(x[i]);
      } else {
        F<T> f;
        for (; i < n; i++) *reinterpret_cast<T*>(d[0] + i * s[0]) = f(*reinterpret_cast<const T*>(d[1] + i * s[1]));
      }
    });
    return true;
  }
}
// fmod of contiguous float/double arrays, into `out` (n elements): libm's scalar fmod walks the
// exponent difference bit by bit, SLEEF's vector one does not (remainder, fmod and floor_divide of
// floats are built on it: kernels/cpu/isa/binary.cpp).
template <class T>
void fmod_array(const T* a, const T* b, T* out, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
    for (; i + kVF <= n; i += kVF) vstoref(out + i, vfmodf(vloadf(a + i), vloadf(b + i)));
  } else {
    for (; i + kVD <= n; i += kVD) vstored(out + i, vfmodd(vloadd(a + i), vloadd(b + i)));
  }
  for (; i < n; i++) out[i] = std::fmod(a[i], b[i]);
}

// In-place y[i] = exp(y[i]) over a contiguous array.
inline void exp_array(float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kVF <= n; i += kVF) vstoref(y + i, EMBER_VF(exp)(vloadf(y + i)));
  for (; i < n; i++) y[i] = std::exp(y[i]);
}
inline void exp_array(double* y, int64_t n) {
  int64_t i = 0;
  for (; i + kVD <= n; i += kVD) vstored(y + i, EMBER_VD(exp)(vloadd(y + i)));
  for (; i < n; i++) y[i] = std::exp(y[i]);
}
// y[i] = exp(x[i] - m) (y may be null: not stored); returns the sum of the exponentials.
#ifdef __AVX512F__
inline float vsumf(vfloat v) { return _mm512_reduce_add_ps(v); }
inline double vsumd(vdouble v) { return _mm512_reduce_add_pd(v); }
#else
inline float vsumf(vfloat v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
inline double vsumd(vdouble v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
#endif
// (a macro, not a template over function pointers: intrinsics must stay inlined)
#define EMBER_EXP_SUB_SUM(T, V, LANES, SUF, LOAD, STORE, EXP, SUM)   \
  inline T exp_sub_sum(const T* x, T m, T* y, int64_t n) {           \
    V vm = EMBER_V(set1, SUF)(m), acc = EMBER_V(setzero, SUF)();     \
    int64_t i = 0;                                                   \
    for (; i + LANES <= n; i += LANES) {                             \
      V e = EXP(EMBER_V(sub, SUF)(LOAD(x + i), vm));                 \
      if (y) STORE(y + i, e);                                        \
      acc = EMBER_V(add, SUF)(acc, e);                               \
    }                                                                \
    T s = SUM(acc);                                                  \
    for (; i < n; i++) {                                             \
      T e = std::exp(x[i] - m);                                      \
      if (y) y[i] = e;                                               \
      s += e;                                                        \
    }                                                                \
    return s;                                                        \
  }
// o[i] = g[i] - exp(y[i]) * s: log_softmax's backward in one pass
#define EMBER_EXP_SCALE_SUB(T, V, LANES, SUF, LOAD, STORE, EXP)                 \
  inline void exp_scale_sub(const T* y, const T* g, T s, T* o, int64_t n) {     \
    V vs = EMBER_V(set1, SUF)(s);                                             \
    int64_t i = 0;                                                            \
    for (; i + LANES <= n; i += LANES)                                        \
      STORE(o + i, EMBER_V(fnmadd, SUF)(EXP(LOAD(y + i)), vs, LOAD(g + i)));  \
    for (; i < n; i++) o[i] = g[i] - std::exp(y[i]) * s;                      \
  }
EMBER_EXP_SCALE_SUB(float, vfloat, kVF, ps, vloadf, vstoref, EMBER_VF(exp))
EMBER_EXP_SCALE_SUB(double, vdouble, kVD, pd, vloadd, vstored, EMBER_VD(exp))
#undef EMBER_EXP_SCALE_SUB
EMBER_EXP_SUB_SUM(float, vfloat, kVF, ps, vloadf, vstoref, EMBER_VF(exp), vsumf)
EMBER_EXP_SUB_SUM(double, vdouble, kVD, pd, vloadd, vstored, EMBER_VD(exp), vsumd)
#undef EMBER_EXP_SUB_SUM
// max / min of a row; NaNs are skipped (max_ps/min_ps return their second operand when either is NaN)
#define EMBER_ROW_EXT(NAME, OP, CMP, INIT, T, V, LANES, SUF, LOAD)                           \
  inline T NAME(const T* x, int64_t n) {                                                    \
    V acc = EMBER_V(set1, SUF)(INIT);                                                       \
    int64_t i = 0;                                                                          \
    for (; i + LANES <= n; i += LANES) acc = EMBER_V(OP, SUF)(LOAD(x + i), acc);            \
    alignas(64) T lanes[LANES];                                                             \
    EMBER_V(store, SUF)(lanes, acc);                                                        \
    T m = lanes[0];                                                                         \
    for (int j = 1; j < LANES; j++) m = lanes[j] CMP m ? lanes[j] : m;                      \
    for (; i < n; i++) m = x[i] CMP m ? x[i] : m;                                           \
    return m;                                                                               \
  }
EMBER_ROW_EXT(row_max_vec, max, >, -std::numeric_limits<float>::infinity(), float, vfloat, kVF, ps, vloadf)
EMBER_ROW_EXT(row_max_vec, max, >, -std::numeric_limits<double>::infinity(), double, vdouble, kVD, pd, vloadd)
EMBER_ROW_EXT(row_min_vec, min, <, std::numeric_limits<float>::infinity(), float, vfloat, kVF, ps, vloadf)
EMBER_ROW_EXT(row_min_vec, min, <, std::numeric_limits<double>::infinity(), double, vdouble, kVD, pd, vloadd)
#undef EMBER_ROW_EXT
#undef EMBER_V
#else
template <template <class> class F, class T>
bool try_vec_unary(TensorIter&) { return false; }
template <class T>
inline void exp_array(T* y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = std::exp(y[i]);
}
template <class T>
inline void exp_scale_sub(const T* y, const T* g, T s, T* o, int64_t n) {
  for (int64_t i = 0; i < n; i++) o[i] = g[i] - std::exp(y[i]) * s;
}
template <class T>
inline T row_max_vec(const T* x, int64_t n) {
  T m = -std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
  return m;
}
template <class T>
inline T row_min_vec(const T* x, int64_t n) {
  T m = std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < n; i++) m = x[i] < m ? x[i] : m;
  return m;
}
template <class T>
inline T exp_sub_sum(const T* x, T m, T* y, int64_t n) {
  return lane_sum<T>(n, [&](int64_t i) {
    T e = std::exp(x[i] - m);
    if (y) y[i] = e;
    return e;
  });
}
#endif

}  // namespace ember::EMBER_CPU_NS
