// Copy with casting between any two dtypes (the engine of copy_, to(), contiguous()), and fill.
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ember/kernels/cpu/isa/loops.h"
#include "ember/kernels/cpu/isa/reduced_float.h"
#include "ember/parallel/parallel.h"

namespace ember::EMBER_CPU_NS {

template <class To, class From>
inline To cast_value(From v) {
  if constexpr (std::is_same_v<To, From>) return v;
  else if constexpr (is_cplx<From>) {  // complex -> real keeps the real part (PyTorch warns in Python)
    if constexpr (is_cplx<To>) return To(v);
    else if constexpr (std::is_same_v<To, bool>) return v != From(0);
    else return cast_value<To>(v.real());
  } else if constexpr (is_cplx<To>) {
    return To(cast_value<typename To::value_type>(v), 0);
  }
  else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) return static_cast<float>(v) != 0;
    else return v != From(0);
  }
  else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) return static_cast<To>(static_cast<float>(v));
  else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) return To(static_cast<float>(v));
  else return static_cast<To>(v);
}

// A cast from or to half/bfloat16 (real dtypes) in blocks through float: vector conversions instead
// of one branchy scalar conversion an element. The values are cast_value's: every such cast goes
// through float.
static void reduced_float_copy(TensorIter& it) {
  const ScalarType to = it.dtype(0), from = it.dtype(1);
  it.for_each([&](char** d, const int64_t* s, int64_t n) {
    alignas(64) float buf[kReducedBlock];
    alignas(64) uint16_t tmp[kReducedBlock];
    for (int64_t i0 = 0; i0 < n; i0 += kReducedBlock) {
      const int64_t m = std::min(kReducedBlock, n - i0);
      const char* src = d[1] + i0 * s[1];
      char* dst = d[0] + i0 * s[0];
      if (to == kFloat && s[0] == int64_t(sizeof(float)) && is_reduced_float(from)) {
        load_floats(from, src, s[1], m, reinterpret_cast<float*>(dst), tmp);  // widen straight into the output
        continue;
      }
      const float* x = buf;
      if (is_reduced_float(from) || from == kFloat) {
        x = load_floats(from, src, s[1], m, buf, tmp);
      } else {
        EMBER_DISPATCH_ALL(from, "copy_", [&](auto tag) {
          using From = decltype(tag);
          if (s[1] == int64_t(sizeof(From))) {
            const From* p = reinterpret_cast<const From*>(src);
            for (int64_t j = 0; j < m; j++) buf[j] = cast_value<float>(p[j]);
          } else {
            for (int64_t j = 0; j < m; j++) buf[j] = cast_value<float>(*reinterpret_cast<const From*>(src + j * s[1]));
          }
        });
      }
      if (is_reduced_float(to) || to == kFloat) {
        store_floats(to, dst, s[0], m, x, tmp);
      } else {
        EMBER_DISPATCH_ALL(to, "copy_", [&](auto tag) {
          using To = decltype(tag);
          if (s[0] == int64_t(sizeof(To))) {
            To* p = reinterpret_cast<To*>(dst);
            for (int64_t j = 0; j < m; j++) p[j] = cast_value<To>(x[j]);
          } else {
            for (int64_t j = 0; j < m; j++) *reinterpret_cast<To*>(dst + j * s[0]) = cast_value<To>(x[j]);
          }
        });
      }
    }
  });
}

void copy_kernel(TensorIter& it) {
  ScalarType to = it.dtype(0), from = it.dtype(1);
  if (to != from && (is_reduced_float(to) || is_reduced_float(from)) && !is_complex(to) && !is_complex(from))
    return reduced_float_copy(it);
  if (to == from) {
    const int64_t isz = itemsize(to);
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      if (s[0] == isz && s[1] == isz) {
        std::memmove(d[0], d[1], size_t(n * isz));
      } else {
        switch (isz) {
          case 1: for (int64_t i = 0; i < n; i++) d[0][i * s[0]] = d[1][i * s[1]]; break;
          case 2: for (int64_t i = 0; i < n; i++) *reinterpret_cast<uint16_t*>(d[0] + i * s[0]) = *reinterpret_cast<const uint16_t*>(d[1] + i * s[1]); break;
          case 4: for (int64_t i = 0; i < n; i++) *reinterpret_cast<uint32_t*>(d[0] + i * s[0]) = *reinterpret_cast<const uint32_t*>(d[1] + i * s[1]); break;
          case 8: for (int64_t i = 0; i < n; i++) *reinterpret_cast<uint64_t*>(d[0] + i * s[0]) = *reinterpret_cast<const uint64_t*>(d[1] + i * s[1]); break;
          default: for (int64_t i = 0; i < n; i++) std::memcpy(d[0] + i * s[0], d[1] + i * s[1], size_t(isz)); break;
        }
      }
    });
    return;
  }
  EMBER_DISPATCH_WITH_COMPLEX(to, "copy_", [&](auto to_tag) {
    using To = decltype(to_tag);
    EMBER_DISPATCH_WITH_COMPLEX(from, "copy_", [&](auto from_tag) {
      using From = decltype(from_tag);
      unary_loop<To, From>(it, [](From v) { return cast_value<To>(v); });
    });
  });
}

void reduced_float_convert_kernel(ScalarType dt, bool to_float, const void* src, void* dst, int64_t n) {
  if (to_float) widen_array(dt, static_cast<const uint16_t*>(src), static_cast<float*>(dst), n);
  else narrow_array(dt, static_cast<const float*>(src), static_cast<uint16_t*>(dst), n);
}

// Transposing copies in 64x64 tiles: both the rows read and the rows written stay in L1 while a
// tile is done, instead of one cache miss per element on the strided side.
namespace {
#if defined(__SSE2__)
// 16x16 bytes in four rounds of interleaves (8-, 16-, 32-, 64-bit): out row k holds byte k of
// each input row. Scalar, one byte per step, was most of uint8 image resizing's time.
void transpose16x16_u8(const uint8_t* s, int64_t s_stride, uint8_t* d, int64_t d_stride) {
  __m128i a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * s_stride));
  for (int i = 0; i < 16; i += 2) {  // 16-bit unit k of b[i], b[i+1]: (row i, row i+1) at column k, k + 8
    b[i] = _mm_unpacklo_epi8(a[i], a[i + 1]);
    b[i + 1] = _mm_unpackhi_epi8(a[i], a[i + 1]);
  }
  for (int g = 0; g < 16; g += 4) {  // 32-bit units: rows g..g+3 at columns 0-3, 4-7, 8-11, 12-15
    a[g] = _mm_unpacklo_epi16(b[g], b[g + 2]);
    a[g + 1] = _mm_unpackhi_epi16(b[g], b[g + 2]);
    a[g + 2] = _mm_unpacklo_epi16(b[g + 1], b[g + 3]);
    a[g + 3] = _mm_unpackhi_epi16(b[g + 1], b[g + 3]);
  }
  for (int h = 0; h < 16; h += 8)  // 64-bit units: rows h..h+7 at column pairs (0,1), (2,3), ...
    for (int q = 0; q < 4; q++) {
      b[h + 2 * q] = _mm_unpacklo_epi32(a[h + q], a[h + 4 + q]);
      b[h + 2 * q + 1] = _mm_unpackhi_epi32(a[h + q], a[h + 4 + q]);
    }
  for (int k = 0; k < 8; k++) {  // rows 0-7 and 8-15 of columns 2k and 2k + 1
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k) * d_stride), _mm_unpacklo_epi64(b[k], b[8 + k]));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + (2 * k + 1) * d_stride), _mm_unpackhi_epi64(b[k], b[8 + k]));
  }
}

// 4x4 32-bit values (float, int32) and 2x2 64-bit values: scalar, one strided load per value, was most of
// a float image resize's and an adaptive pooling's time (the last dim's passes transpose blocks of rows)
void transpose4x4_u32(const uint32_t* s, int64_t s_stride, uint32_t* d, int64_t d_stride) {
  __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + s_stride));
  __m128i r2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 2 * s_stride));
  __m128i r3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 3 * s_stride));
  __m128i t0 = _mm_unpacklo_epi32(r0, r1), t1 = _mm_unpacklo_epi32(r2, r3);  // (r0c0 r1c0 r0c1 r1c1), (r2.. r3..)
  __m128i t2 = _mm_unpackhi_epi32(r0, r1), t3 = _mm_unpackhi_epi32(r2, r3);  // columns 2 and 3
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(t0, t1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d + d_stride), _mm_unpackhi_epi64(t0, t1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * d_stride), _mm_unpacklo_epi64(t2, t3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 3 * d_stride), _mm_unpackhi_epi64(t2, t3));
}

void transpose2x2_u64(const uint64_t* s, int64_t s_stride, uint64_t* d, int64_t d_stride) {
  __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + s_stride));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm_unpacklo_epi64(r0, r1));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d + d_stride), _mm_unpackhi_epi64(r0, r1));
}
#endif

// the side of the register-transposed blocks for T's size (0: none, one value per step)
template <class T>
constexpr int64_t transpose_block() {
#if defined(__SSE2__)
  return sizeof(T) == 1 ? 16 : sizeof(T) == 4 ? 4 : sizeof(T) == 8 ? 2 : 0;
#else
  return 0;
#endif
}

template <class T>
void transpose_tiles(const T* src, T* dst, int64_t B, int64_t R, int64_t C) {
  constexpr int64_t kT = 64;
  const int64_t rt = (R + kT - 1) / kT;
  parallel_for(0, B * rt, std::max<int64_t>(1, kGrainSize / (kT * std::max<int64_t>(C, 1))), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; p++) {
      const int64_t b = p / rt, r0 = (p % rt) * kT, r1 = std::min(R, r0 + kT);
      const T* s = src + b * R * C;
      T* d = dst + b * R * C;
      for (int64_t c0 = 0; c0 < C; c0 += kT) {
        const int64_t c1 = std::min(C, c0 + kT);
        int64_t rb = r0, cb = c0;  // the part covered by whole register-transposed blocks
        constexpr int64_t kB = transpose_block<T>();
        if constexpr (kB > 0) {
          rb = r0 + (r1 - r0) / kB * kB;
          cb = c0 + (c1 - c0) / kB * kB;
          for (int64_t r = r0; r < rb; r += kB)
            for (int64_t c = c0; c < cb; c += kB) {
#if defined(__SSE2__)
              if constexpr (sizeof(T) == 1)
                transpose16x16_u8(reinterpret_cast<const uint8_t*>(s + c * R + r), R,
                                  reinterpret_cast<uint8_t*>(d + r * C + c), C);
              else if constexpr (sizeof(T) == 4)
                transpose4x4_u32(reinterpret_cast<const uint32_t*>(s + c * R + r), R,
                                 reinterpret_cast<uint32_t*>(d + r * C + c), C);
              else
                transpose2x2_u64(reinterpret_cast<const uint64_t*>(s + c * R + r), R,
                                 reinterpret_cast<uint64_t*>(d + r * C + c), C);
#endif
            }
        }
        for (int64_t r = r0; r < r1; r++) {
          // the columns outside the blocks in block rows, every column after them
          for (int64_t c = r < rb ? cb : c0; c < c1; c++) d[r * C + c] = s[c * R + r];
        }
      }
    }
  });
}
}  // namespace

void transpose_copy_kernel(int64_t itemsize, const void* src, void* dst, int64_t B, int64_t R, int64_t C) {
  switch (itemsize) {
    case 1: return transpose_tiles(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), B, R, C);
    case 2: return transpose_tiles(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), B, R, C);
    case 4: return transpose_tiles(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), B, R, C);
    case 8: return transpose_tiles(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), B, R, C);
    default: {  // 16 bytes: complex128
      struct alignas(16) Pair { uint64_t a, b; };
      return transpose_tiles(static_cast<const Pair*>(src), static_cast<Pair*>(dst), B, R, C);
    }
  }
}

void fill_kernel(TensorIter& it, const Scalar& value) {
  EMBER_DISPATCH_WITH_COMPLEX(it.dtype(0), "fill_", [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (is_cplx<T>) v = value.to<T>();
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) v = T(float(value.to_double()));
    else if constexpr (std::is_same_v<T, bool>) v = value.to_bool();
    else if constexpr (std::is_floating_point_v<T>) v = T(value.to_double());
    else v = value.is_floating() ? T(value.to_double()) : T(value.to_long());
    it.for_each([&](char** d, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(d[0]);
        for (int64_t i = 0; i < n; i++) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; i++) *reinterpret_cast<T*>(d[0] + i * s[0]) = v;
      }
    });
  });
}

}  // namespace ember::EMBER_CPU_NS
