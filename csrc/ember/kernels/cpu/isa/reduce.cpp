// Reductions over a contiguous [outer, reduced, inner] block, and scans. inner == 1 reduces
// contiguous rows (pairwise sums, vectorized across 16 accumulators); inner > 1 accumulates whole
// rows at once, vectorized across the inner dim. NaN propagates through max/min as in PyTorch.
// Integer sums and products wrap like PyTorch's, through core/checked_math.h's wrapping_* (no UB).
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "ember/core/checked_math.h"
#include "ember/kernels/cpu/isa/loops.h"
#include "ember/kernels/cpu/isa/reduced_float.h"
#include "ember/kernels/cpu/isa/vec_math.h"
#include "ember/parallel/parallel.h"

namespace ember::EMBER_CPU_NS {

// acc[0] = the lanes added as a tree (halves first); the constant widths let each step vectorize
// (a loop over w = W, W/2, .. compiled to scalar adds through memory)
template <int W, class T>
inline void fold_lanes(T* acc) {
  if constexpr (W >= 1) {
    for (int j = 0; j < W; j++) acc[j] += acc[j + W];
    fold_lanes<W / 2>(acc);
  }
}

// a value as summed: itself, or its square for SumSquares
template <bool Sq, class T>
inline T term(T v) {
  if constexpr (Sq) return v * v;
  else return v;
}

template <class T> struct Vec8;  // 8 lanes of T as a GCC vector (one register)
template <> struct Vec8<float> { typedef float type __attribute__((vector_size(32))); };
template <> struct Vec8<double> { typedef double type __attribute__((vector_size(64))); };

// A short row (e.g. a 7x7 feature map), n < 64: one vector of 8 lanes in a register, the values past the
// last full vector in a scalar, the lanes folded as pairwise_sum folds them (its sums, bit for bit).
template <bool Sq, class T>
T short_row_sum(const T* x, int64_t n) {
  using V8 = typename Vec8<T>::type;
  V8 a = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    V8 v;
    std::memcpy(&v, x + i, sizeof(V8));
    if constexpr (Sq) a += v * v;  // (not through term(): a vector by value changes the DEFAULT build's ABI)
    else a += v;
  }
  T tail = 0;
  for (; i < n; i++) tail += term<Sq>(x[i]);
  T l[8];
  std::memcpy(l, &a, sizeof(l));
  fold_lanes<4>(l);
  return l[0] + tail;
}

// Pairwise summation: error grows with log(n), not n (float32 sums of 10^7 stay accurate). With Sq, of the
// squares (floats only).
template <bool Sq = false, class T>
T pairwise_sum(const T* x, int64_t n, int64_t stride) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    // signed integers sum as their unsigned twins: the same bits, wrapping without UB in any order
    using U = std::make_unsigned_t<T>;
    return T(pairwise_sum<Sq>(reinterpret_cast<const U*>(x), n, stride));
  } else {
    // 64 independent accumulators: four AVX-512 registers of float (eight of double), so the adds
    // are not serialized on one register's latency and the loop runs at memory bandwidth.
    constexpr int64_t kBase = 4096, kLanes = 64;
    if constexpr (std::is_floating_point_v<T>) {
      if (stride == 1 && n < kLanes) return short_row_sum<Sq>(x, n);
    }
    if (n <= kBase) {
      T acc[kLanes] = {};
      int64_t i = 0;
      if (stride == 1) {
        for (; i + kLanes <= n; i += kLanes)
          for (int j = 0; j < kLanes; j++) acc[j] += term<Sq>(x[i + j]);
        // the rest in vectors of 8 lanes, then the last few in a register (adding them to lanes in memory
        // would stall the fold's vector loads on store forwarding)
        for (; i + 8 <= n; i += 8)
          for (int j = 0; j < 8; j++) acc[j] += term<Sq>(x[i + j]);
        T tail = 0;
        for (; i < n; i++) tail += term<Sq>(x[i]);
        fold_lanes<kLanes / 2>(acc);
        return acc[0] + tail;
      }
      for (; i < n; i++) acc[i & (kLanes - 1)] += term<Sq>(x[i * stride]);
      fold_lanes<kLanes / 2>(acc);
      return acc[0];
    }
    int64_t half = (n / 2 + kLanes - 1) & ~(kLanes - 1);
    return pairwise_sum<Sq>(x, half, stride) + pairwise_sum<Sq>(x + half * stride, n - half, stride);
  }
}

template <class T> constexpr bool is_fp = std::is_floating_point_v<T>;

template <class T>
struct MaxOp {
  static T init() { if constexpr (is_fp<T>) return -std::numeric_limits<T>::infinity(); else return std::numeric_limits<T>::lowest(); }
  // true if b should replace a (NaN wins and sticks)
  static bool better(T a, T b) { if constexpr (is_fp<T>) return (b > a) || (b != b && a == a); else return b > a; }
};
template <class T>
struct MinOp {
  static T init() { if constexpr (is_fp<T>) return std::numeric_limits<T>::infinity(); else return std::numeric_limits<T>::max(); }
  static bool better(T a, T b) { if constexpr (is_fp<T>) return (b < a) || (b != b && a == a); else return b < a; }
};

// Extreme of one contiguous row and its first index. Floats: a vector max/min that skips NaNs,
// then a check for NaN/inf (x - x is NaN exactly there) that sends rare rows to the exact scalar
// loop; the index is found by a second, early-exiting scan for the value.
template <class T, class Op>
void row_extreme(const T* x, int64_t R, T* val, int64_t* idx) {
  T best;
  int64_t bi = 0;
  bool exact = true;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    // (a short row, e.g. a 7x7 map's, takes the exact loop: it beats the vector passes' setup)
    T poison = R < 16 ? T(1) : lane_sum<T>(R, [&](int64_t i) { return x[i] - x[i]; });
    if (poison == 0) {
      best = std::is_same_v<Op, MaxOp<T>> ? row_max_vec(x, R) : row_min_vec(x, R);
      if (idx)
        while (x[bi] != best) bi++;
      exact = false;
    }
  }
  if (exact) {
    best = x[0];
    for (int64_t r = 1; r < R; r++)
      if (Op::better(best, x[r])) { best = x[r]; bi = r; }
  }
  if (val) *val = best;
  if (idx) *idx = bi;
}

template <class T, class Op>
void reduce_extreme(const T* in, T* vals, int64_t* idx, ReduceShape sh) {
  const int64_t O = sh.outer, R = sh.reduced, I = sh.inner;
  if (R == 0) return;
  if (I == 1) {
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / R), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; o++) row_extreme<T, Op>(in + o * R, R, vals ? vals + o : nullptr, idx ? idx + o : nullptr);
    });
    return;
  }
  // reducing a middle dim: sweep the rows r, comparing whole inner blocks (vectorizes across j)
  constexpr int64_t kBlock = 256;
  const int64_t nblk = (I + kBlock - 1) / kBlock;
  parallel_for(0, O * nblk, std::max<int64_t>(1, kGrainSize / (R * std::min(I, kBlock))), [&](int64_t b, int64_t e) {
    T local_v[kBlock];
    int64_t local_i[kBlock];
    for (int64_t p = b; p < e; p++) {
      const int64_t o = p / nblk, j0 = (p % nblk) * kBlock, w = std::min(kBlock, I - j0);
      const T* x = in + o * R * I + j0;
      T* bv = vals ? vals + o * I + j0 : local_v;
      int64_t* bidx = idx ? idx + o * I + j0 : local_i;
      for (int64_t j = 0; j < w; j++) bv[j] = x[j], bidx[j] = 0;
      for (int64_t r = 1; r < R; r++) {
        const T* xr = x + r * I;
        for (int64_t j = 0; j < w; j++) {
          bool take = Op::better(bv[j], xr[j]);
          bv[j] = take ? xr[j] : bv[j];
          bidx[j] = take ? r : bidx[j];
        }
      }
    }
  });
}

// Few long rows (e.g. a full reduction): each row o split across the threads, part(o, lo, n) summing
// n of its values from lo, the parts then added in order.
template <class T, class PartSum>
void sum_long_rows(int64_t O, int64_t R, T* out, const PartSum& part) {
  for (int64_t o = 0; o < O; o++) {
    int nt = get_num_threads();
    std::vector<T> partial(nt, T(0));
    int64_t chunk = (R + nt - 1) / nt;
    parallel_for(0, nt, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; t++) {
        int64_t lo = t * chunk, hi = std::min(R, lo + chunk);
        if (lo < hi) partial[t] = part(o, lo, hi - lo);
      }
    });
    T s = 0;
    for (T v : partial) s = wrapping_add(s, v);
    out[o] = s;
  }
}

// acc[j] = the sum over r < R of row_at(r)[j], j < I: rows accumulate in blocks of 256 (blk, I values of
// scratch) that are then added to acc, which bounds a float sum's error.
template <class T, class RowAt>
void sum_rows_blocked(int64_t R, int64_t I, T* acc, T* blk, const RowAt& row_at) {
  for (int64_t j = 0; j < I; j++) acc[j] = 0;
  for (int64_t r0 = 0; r0 < R; r0 += 256) {
    int64_t r1 = std::min(R, r0 + 256);
    for (int64_t j = 0; j < I; j++) blk[j] = 0;
    for (int64_t r = r0; r < r1; r++) {
      const T* row = row_at(r);
      for (int64_t j = 0; j < I; j++) blk[j] = wrapping_add(blk[j], row[j]);
    }
    for (int64_t j = 0; j < I; j++) acc[j] = wrapping_add(acc[j], blk[j]);
  }
}

template <class T>
void reduce_sum_prod(bool prod, const T* in, T* out, ReduceShape sh) {
  const int64_t O = sh.outer, R = sh.reduced, I = sh.inner;
  if (I == 1) {
    if (!prod && O < get_num_threads() && R >= 2 * kGrainSize) {
      sum_long_rows(O, R, out, [&](int64_t o, int64_t lo, int64_t n) { return pairwise_sum(in + o * R + lo, n, 1); });
      return;
    }
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; o++) {
        const T* x = in + o * R;
        if (prod) {
          T p = 1;
          for (int64_t r = 0; r < R; r++) p = wrapping_mul(p, x[r]);
          out[o] = p;
        } else {
          out[o] = is_fp<T> ? pairwise_sum(x, R, 1) : [&] { T s = 0; for (int64_t r = 0; r < R; r++) s = wrapping_add(s, x[r]); return s; }();
        }
      }
    });
    return;
  }
  // inner > 1: accumulate rows; floats cascade through blocks of 256 rows to bound the error.
  parallel_for(0, O, 1, [&](int64_t b, int64_t e) {
    std::vector<T> block(static_cast<std::size_t>(I));
    for (int64_t o = b; o < e; o++) {
      T* acc = out + o * I;
      const T* x = in + o * R * I;
      if (prod) {
        for (int64_t j = 0; j < I; j++) acc[j] = T(1);
        for (int64_t r = 0; r < R; r++)
          for (int64_t j = 0; j < I; j++) acc[j] = wrapping_mul(acc[j], x[r * I + j]);
      } else {
        sum_rows_blocked(R, I, acc, block.data(), [&](int64_t r) { return x + r * I; });
      }
    }
  });
}

// Sum's two loop shapes over a [O, R, I] block for the kinds that transform values as they read them (half/
// bfloat16 widened, squares): part(o, lo, n) sums n values of row o from lo (I == 1); row(o, r, buf) gives row
// r of block o as I values of T (in buf when transformed), accumulated by sum_rows_blocked.
template <class T, class Part, class Row>
void sum_reduce_rows(ReduceShape sh, T* out, const Part& part, const Row& row) {
  const int64_t O = sh.outer, R = sh.reduced, I = sh.inner;
  if (I == 1) {
    if (O < get_num_threads() && R >= 2 * kGrainSize) {
      sum_long_rows(O, R, out, part);
      return;
    }
    parallel_for(0, O, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; o++) out[o] = part(o, 0, R);
    });
    return;
  }
  parallel_for(0, O, 1, [&](int64_t b, int64_t e) {
    std::vector<T> block(static_cast<std::size_t>(I)), buf(static_cast<std::size_t>(I));
    for (int64_t o = b; o < e; o++)
      sum_rows_blocked(R, I, out + o * I, block.data(), [&](int64_t r) { return row(o, r, buf.data()); });
  });
}

// Sums of squares (the 2-norm's) in one pass, in sum's orders: no squared copy of the input first.
template <class T>
void reduce_sum_squares(const T* in, T* out, ReduceShape sh) {
  const int64_t R = sh.reduced, I = sh.inner;
  sum_reduce_rows<T>(
      sh, out, [&](int64_t o, int64_t lo, int64_t n) { return pairwise_sum<true>(in + o * R + lo, n, 1); },
      [&](int64_t o, int64_t r, T* buf) {
        const T* x = in + (o * R + r) * I;
        for (int64_t j = 0; j < I; j++) buf[j] = x[j] * x[j];
        return static_cast<const T*>(buf);
      });
}

// Sums of half/bfloat16 values into float, widening as they are read: the same additions in the same
// order as pairwise_sum over the widened tensor, without writing the float copy first.
float pairwise_sum_widened(ScalarType dt, const uint16_t* x, int64_t n) {
  constexpr int64_t kBase = 4096, kLanes = 64;  // pairwise_sum's
  if (n <= kBase) {
    // pairwise_sum's leaf with its 64 lanes as vector registers, widening each vector as it is loaded
    constexpr int kRegs = int(kLanes / kWide);
    vwide acc[kRegs];
    for (int r = 0; r < kRegs; r++) acc[r] = vbroadcast(0.f);
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int r = 0; r < kRegs; r++) acc[r] += widen(dt, x + i + r * kWide);
    alignas(64) float lanes[kLanes];
    std::memcpy(lanes, acc, sizeof(lanes));
    for (; i + 8 <= n; i += 8)  // pairwise_sum's remainder: vectors of 8 lanes, then a running sum
      for (int j = 0; j < 8; j++) lanes[j] += widen_one(dt, x[i + j]);
    float tail = 0;
    for (; i < n; i++) tail += widen_one(dt, x[i]);
    fold_lanes<kLanes / 2>(lanes);
    return lanes[0] + tail;
  }
  int64_t half = (n / 2 + kLanes - 1) & ~(kLanes - 1);
  return pairwise_sum_widened(dt, x, half) + pairwise_sum_widened(dt, x + half, n - half);
}

// reduce_sum_prod's sum for half/bfloat16 input and float output, the same loops over widened values
void reduce_sum_widened(ScalarType dt, const uint16_t* in, float* out, ReduceShape sh) {
  const int64_t R = sh.reduced, I = sh.inner;
  sum_reduce_rows<float>(
      sh, out, [&](int64_t o, int64_t lo, int64_t n) { return pairwise_sum_widened(dt, in + o * R + lo, n); },
      [&](int64_t o, int64_t r, float* buf) {
        widen_array(dt, in + (o * R + r) * I, buf, I);
        return static_cast<const float*>(buf);
      });
}

void reduce_all_any(bool all, const bool* in, bool* out, ReduceShape sh) {
  const int64_t O = sh.outer, R = sh.reduced, I = sh.inner;
  parallel_for(0, O * I, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; p++) {
      int64_t o = p / I, j = p % I;
      const bool* x = in + o * R * I + j;
      bool acc = all;
      for (int64_t r = 0; r < R; r++) {
        if (x[r * I] != all) { acc = !all; break; }
      }
      out[p] = acc;
    }
  });
}

void reduce_kernel(ReduceKernel k, ScalarType dt, const void* in, void* values, int64_t* indices, ReduceShape sh) {
  if (k == ReduceKernel::All || k == ReduceKernel::Any) {
    EMBER_CHECK(dt == kBool, "all/any kernel expects bool");
    reduce_all_any(k == ReduceKernel::All, static_cast<const bool*>(in), static_cast<bool*>(values), sh);
    return;
  }
  if (k == ReduceKernel::Sum && is_reduced_float(dt)) {  // half/bfloat16 in, float out
    reduce_sum_widened(dt, static_cast<const uint16_t*>(in), static_cast<float*>(values), sh);
    return;
  }
  dispatch_compute<kFloats | bit(kLong) | bit(kInt) | bit(kShort) | bit(kChar) | bit(kByte) | bit(kBool)>(dt, "reduce", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in);
    T* v = static_cast<T*>(values);
    switch (k) {
      case ReduceKernel::Sum:
      case ReduceKernel::Prod:
        if constexpr (std::is_same_v<T, bool>) EMBER_FAIL(Runtime, "sum kernel does not take bool");
        else reduce_sum_prod<T>(k == ReduceKernel::Prod, x, v, sh);
        return;
      case ReduceKernel::Max:
      case ReduceKernel::ArgMax:
        reduce_extreme<T, MaxOp<T>>(x, v, indices, sh);
        return;
      case ReduceKernel::Min:
      case ReduceKernel::ArgMin:
        reduce_extreme<T, MinOp<T>>(x, v, indices, sh);
        return;
      case ReduceKernel::SumSquares:
        if constexpr (std::is_floating_point_v<T>) reduce_sum_squares<T>(x, v, sh);
        else EMBER_FAIL(Runtime, "sum-of-squares kernel takes float or double");
        return;
      case ReduceKernel::All:
      case ReduceKernel::Any:
        return;
    }
  });
}

void scan_kernel(bool prod, ScalarType dt, const void* in, void* out, int64_t rows, int64_t n) {
  dispatch_compute<kFloats | bit(kLong)>(dt, prod ? "cumprod" : "cumsum", [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    // float32 scans accumulate in double, as PyTorch's CPU kernel does
    using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
    // Each row's scan is a chain of dependent adds: short rows go in groups of 8, their chains interleaved
    // (the same operations per row, so the same results), instead of one row's latency at a time.
    constexpr int64_t kGroup = 8;
    parallel_for(0, rows, std::max<int64_t>(kGroup, kGrainSize / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
      int64_t r = b;
      if (n < 64) {
        for (; r + kGroup <= e; r += kGroup) {
          Acc acc[kGroup];
          for (int64_t k = 0; k < kGroup; k++) acc[k] = prod ? Acc(1) : Acc(0);
          for (int64_t i = 0; i < n; i++)
            for (int64_t k = 0; k < kGroup; k++) {
              const int64_t at = (r + k) * n + i;
              acc[k] = prod ? wrapping_mul(acc[k], Acc(x[at])) : wrapping_add(acc[k], Acc(x[at]));
              y[at] = T(acc[k]);
            }
        }
      }
      for (; r < e; r++) {
        Acc acc = prod ? Acc(1) : Acc(0);
        for (int64_t i = 0; i < n; i++) {
          acc = prod ? wrapping_mul(acc, Acc(x[r * n + i])) : wrapping_add(acc, Acc(x[r * n + i]));
          y[r * n + i] = T(acc);
        }
      }
    });
  });
}

}  // namespace ember::EMBER_CPU_NS
