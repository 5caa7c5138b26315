// Advanced indexing, gather/scatter and integer sampling on the GPU, with the CPU kernels' semantics
// (kernels/cpu/indexing.cpp, kernels/cpu/scatter.cpp): integer accumulation wraps, 16-bit floats add
// in float and round, bool accumulates as logical or. Accumulating writes are atomic (hardware
// atomicAdd where there is one, a compare-and-swap loop on the enclosing word otherwise), so the
// order of a float sum over duplicate indices is not fixed, as in PyTorch's CUDA kernels. An index
// out of range is never written through: its position lowers `*bad` and the host raises.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include <cstring>
#include <limits>

#include "ember/kernels/cuda/loops.cuh"
#include "ember/random/philox.h"

namespace ember::cuda_kernels {
namespace {

struct alignas(16) Bytes16 { uint64_t lo, hi; };

// One thread per i in [0, n).
template <class F>
__global__ void __launch_bounds__(kThreads) for_n_kernel(int64_t n, F f) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) f(i);
}
template <class F>
Status for_n(int64_t n, void* stream, F f) {
  if (n <= 0) return kOk;
  for_n_kernel<<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(n, f);
  return launch_ok() ? kOk : kCudaError;
}

__device__ inline void report_bad(int64_t* bad, int64_t position) {
  atomicMin(reinterpret_cast<long long*>(bad), static_cast<long long>(position));
}

// *p = f(*p), atomically: a compare-and-swap loop on the 8- or 4-byte word, or on the aligned 4-byte
// word holding a 1- or 2-byte value (storage blocks are 512-byte multiples, so that word is inside it).
template <class T, class F>
__device__ void atomic_update(T* p, F f) {
  if constexpr (sizeof(T) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      T cur, next;
      memcpy(&cur, &assumed, 8);
      next = f(cur);
      unsigned long long bits;
      memcpy(&bits, &next, 8);
      old = atomicCAS(w, assumed, bits);
    } while (old != assumed);
  } else if constexpr (sizeof(T) == 4) {
    auto* w = reinterpret_cast<unsigned*>(p);
    unsigned old = *w, assumed;
    do {
      assumed = old;
      T cur, next;
      memcpy(&cur, &assumed, 4);
      next = f(cur);
      unsigned bits;
      memcpy(&bits, &next, 4);
      old = atomicCAS(w, assumed, bits);
    } while (old != assumed);
  } else {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "atomic_update: 1, 2, 4 or 8 bytes");
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto* w = reinterpret_cast<unsigned*>(a & ~uintptr_t(3));
    const unsigned shift = unsigned(a & 3) * 8u;
    const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
    unsigned old = *w, assumed;
    do {
      assumed = old;
      const unsigned field = (assumed & mask) >> shift;
      T cur;
      memcpy(&cur, &field, sizeof(T));  // little-endian: the low bytes
      const T next = f(cur);
      unsigned bits = 0;
      memcpy(&bits, &next, sizeof(T));
      old = atomicCAS(w, assumed, (assumed & ~mask) | ((bits << shift) & mask));
    } while (old != assumed);
  }
}

template <class T>
__device__ inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) return a || b;
  else if constexpr (is_reduced<T>::value) return cast_to<T>(to_float(a) + to_float(b));
  else if constexpr (std::is_same_v<T, ComplexFloatBits> || std::is_same_v<T, ComplexDoubleBits>) return T{a.re + b.re, a.im + b.im};
  else return wrapping_add(a, b);
}

template <class T>
__device__ inline void atomic_add(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));  // wraps
  } else if constexpr (std::is_same_v<T, ComplexFloatBits>) {
    atomicAdd(&p->re, v.re);
    atomicAdd(&p->im, v.im);
  } else if constexpr (std::is_same_v<T, ComplexDoubleBits>) {
    atomicAdd(&p->re, v.re);
    atomicAdd(&p->im, v.im);
  } else {
    atomic_update(p, [v](T cur) { return add_values(cur, v); });
  }
}

// The widest unit (16, 8, 4, 2 or 1 bytes) that divides a row and both base addresses.
inline int unit_of(const void* a, const void* b, int64_t row_bytes) {
  const uintptr_t align = reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) | uintptr_t(row_bytes);
  for (int u = 16; u > 1; u /= 2)
    if (align % uintptr_t(u) == 0) return u;
  return 1;
}
// Calls fn(U{}) with U an unsigned type (or Bytes16) of `unit` bytes.
template <class Fn>
Status by_unit(int unit, Fn&& fn) {
  switch (unit) {
    case 16: return fn(Bytes16{});
    case 8: return fn(uint64_t{});
    case 4: return fn(uint32_t{});
    case 2: return fn(uint16_t{});
    case 1: return fn(uint8_t{});
    default: return kBadDtype;
  }
}

// ---- nonzero
constexpr int kNzItems = 4;
constexpr int64_t kNzBlock = int64_t(kThreads) * kNzItems;

__global__ void __launch_bounds__(kThreads) nonzero_count_kernel(const bool* mask, int64_t n, int64_t* counts) {
  using Reduce = cub::BlockReduce<int64_t, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const int64_t base = int64_t(blockIdx.x) * kNzBlock + int64_t(threadIdx.x) * kNzItems;
  int64_t c = 0;
#pragma unroll
  for (int j = 0; j < kNzItems; j++) c += (base + j < n && mask[base + j]) ? 1 : 0;
  const int64_t total = Reduce(tmp).Sum(c);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

// The same blocks as nonzero_count_kernel: a block scan gives each true element its row.
__global__ void __launch_bounds__(kThreads) nonzero_write_kernel(const bool* mask, int64_t n, const int64_t* offsets,
                                                                  Shape shape, int64_t* out) {
  using Scan = cub::BlockScan<int64_t, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  const int64_t base = int64_t(blockIdx.x) * kNzBlock + int64_t(threadIdx.x) * kNzItems;
  int64_t flags[kNzItems], pos[kNzItems];
#pragma unroll
  for (int j = 0; j < kNzItems; j++) flags[j] = (base + j < n && mask[base + j]) ? 1 : 0;
  Scan(tmp).ExclusiveSum(flags, pos);
  const int64_t start = offsets[blockIdx.x];
#pragma unroll
  for (int j = 0; j < kNzItems; j++) {
    if (!flags[j]) continue;
    int64_t* row = out + (start + pos[j]) * shape.nd;
    int64_t linear = base + j;
    for (int d = shape.nd - 1; d >= 0; d--) {
      row[d] = linear % shape.sizes[d];
      linear /= shape.sizes[d];
    }
  }
}

// ---- gather / scatter geometry: element e of `index` (row-major) -> offsets in index, self, src
struct Offs {
  int64_t index = 0, self = 0, src = 0;
};
__device__ inline Offs offsets_of(const ScatterGeom& g, int64_t e) {
  Offs o;
  for (int d = g.nd - 1; d >= 0; d--) {
    const int64_t p = e % g.sizes[d];
    e /= g.sizes[d];
    o.index += p * g.index_strides[d];
    o.self += p * g.self_strides[d];
    o.src += p * g.src_strides[d];
  }
  return o;
}

// The self offset of element e's target, or -1 (reported) when its index is out of range.
__device__ inline int64_t target_of(const ScatterGeom& g, const int64_t* index, int64_t e, Offs& o, int64_t* bad) {
  o = offsets_of(g, e);
  const int64_t v = index[o.index];
  if (v < 0 || v >= g.dim_size) {
    report_bad(bad, e);
    return -1;
  }
  return o.self + v * g.dim_stride;
}

template <class T>
__device__ inline bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <class T>
__device__ inline T reduce_identity(int r) {
  if constexpr (std::is_same_v<T, bool>) {
    return r == kSRProd || r == kSRAmin;
  } else {
    switch (r) {
      case kSRProd: return T(1);
      case kSRAmax:
        return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
      case kSRAmin:
        return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
      default: return T(0);
    }
  }
}

// The CPU's combine (kernels/cpu/scatter.cpp): a NaN from src wins max/min, a NaN already there stays.
template <class T>
__device__ inline T reduce_combine(int r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return (r == kSRProd || r == kSRAmin) ? (a && b) : (a || b);
  } else {
    switch (r) {
      case kSRProd: return wrapping_mul(a, b);
      case kSRAmax: return is_nan(b) ? b : (a < b ? b : a);
      case kSRAmin: return is_nan(b) ? b : (b < a ? b : a);
      default: return wrapping_add(a, b);
    }
  }
}

template <class T>
__device__ inline void divide_by_count(T& w, int64_t count) {
  const int64_t c = count > 1 ? count : 1;
  if constexpr (std::is_same_v<T, bool>) {
    // a bool mean is the logical or of the values, as on the CPU
  } else if constexpr (std::is_floating_point_v<T>) {
    w = T(w / T(c));
  } else {
    const int64_t v = int64_t(w);
    int64_t q = v / c;
    if (v % c != 0 && v < 0) q--;  // floor division (c > 0)
    w = T(q);
  }
}

// ---- the typed bodies (extended __device__ lambdas may not sit inside generic lambdas)
// Rows of row_bytes between a dense [rows] block and the rows `lin` names: gathered from src (index)
// or scattered into dst (index_put_; duplicate rows: one of the writes wins, as in PyTorch).
template <class U>
Status move_rows_t(void* dst, const void* src, const int64_t* lin, int64_t rows, int64_t row_bytes, bool scatter,
                   void* stream) {
  const int64_t per_row = row_bytes / int64_t(sizeof(U));
  U* d = static_cast<U*>(dst);
  const U* s = static_cast<const U*>(src);
  return for_n(rows * per_row, stream, [=] __device__(int64_t k) {
    const int64_t indexed = lin[k / per_row] * per_row + k % per_row;
    if (scatter) d[indexed] = s[k];
    else d[k] = s[indexed];
  });
}

template <class T>
Status accumulate_rows_t(void* dst, const void* values, const int64_t* lin, int64_t rows, int64_t row_elems,
                         void* stream) {
  T* d = static_cast<T*>(dst);
  const T* v = static_cast<const T*>(values);
  return for_n(rows * row_elems, stream, [=] __device__(int64_t k) {
    const int64_t i = k / row_elems, j = k % row_elems;
    atomic_add(d + lin[i] * row_elems + j, v[k]);
  });
}

// index_put_ with accumulate, deterministically: the rows' target indices sorted stably (keys, perm:
// register.cpp sorts them), each run of equal targets summed by one thread per column in the rows'
// order, which is the CPU's: the same sums, bit for bit, without atomics.
template <class T>
Status accumulate_sorted_rows_t(void* dst, const void* values, const int64_t* keys, const int64_t* perm, int64_t rows,
                                int64_t row_elems, void* stream) {
  T* d = static_cast<T*>(dst);
  const T* v = static_cast<const T*>(values);
  return for_n(rows * row_elems, stream, [=] __device__(int64_t k) {
    const int64_t i = k / row_elems, j = k % row_elems;
    if (i > 0 && keys[i] == keys[i - 1]) return;  // not the first row of its run
    T* out = d + keys[i] * row_elems + j;
    T acc = *out;
    for (int64_t m = i; m < rows && keys[m] == keys[i]; m++) acc = add_values(acc, v[perm[m] * row_elems + j]);
    *out = acc;
  });
}

template <class U>
Status gather_t(void* out, const void* self, const int64_t* index, const ScatterGeom& g, int64_t numel, int64_t* bad,
                void* stream) {
  U* o = static_cast<U*>(out);
  const U* s = static_cast<const U*>(self);
  return for_n(numel, stream, [=] __device__(int64_t e) {
    Offs off;
    const int64_t t = target_of(g, index, e, off, bad);
    if (t >= 0) o[e] = s[t];
  });
}

template <class T>
Status scatter_t(void* self, const void* src, const int64_t* index, const ScatterGeom& g, int64_t numel, int op,
                 int64_t* bad, void* stream) {
  T* out = static_cast<T*>(self);
  const T* in = static_cast<const T*>(src);
  return for_n(numel, stream, [=] __device__(int64_t e) {
    Offs off;
    const int64_t t = target_of(g, index, e, off, bad);
    if (t < 0) return;
    if (op == kScatterSet) out[t] = in[off.src];  // duplicate targets: one of the writes wins
    else atomic_add(out + t, in[off.src]);
  });
}

template <class T>
__device__ inline void reduce_into(T* w, T v, int reduce) {
  if (reduce == kSRSum || reduce == kSRMean) atomic_add(w, v);  // (bool: logical or)
  else atomic_update(w, [=](T cur) { return reduce_combine<T>(reduce, cur, v); });
}

template <class T>
Status scatter_reduce_t(void* work, const void* src, const int64_t* index, const ScatterGeom& g, int64_t numel,
                        int64_t work_numel, int reduce, bool include_self, int64_t* counts, int64_t* bad, void* stream) {
  T* w = static_cast<T*>(work);
  const T* s = static_cast<const T*>(src);
  if (!include_self) {  // every target starts from the identity (the same value from every writer)
    const Status st = for_n(numel, stream, [=] __device__(int64_t e) {
      Offs off;
      const int64_t t = target_of(g, index, e, off, bad);
      if (t >= 0) w[t] = reduce_identity<T>(reduce);
    });
    if (st != kOk) return st;
  }
  const Status st = for_n(numel, stream, [=] __device__(int64_t e) {
    Offs off;
    const int64_t t = target_of(g, index, e, off, bad);
    if (t < 0) return;
    if (reduce == kSRMean) atomicAdd(reinterpret_cast<unsigned long long*>(counts + t), 1ull);
    reduce_into(w + t, s[off.src], reduce);
  });
  if (st != kOk || reduce != kSRMean) return st;
  return for_n(work_numel, stream, [=] __device__(int64_t i) { divide_by_count(w[i], counts[i]); });
}

}  // namespace

// ---------------------------------------------------------------- nonzero
int64_t nonzero_blocks(int64_t n) { return (n + kNzBlock - 1) / kNzBlock; }

int64_t nonzero_scratch_bytes(int64_t blocks) {
  size_t bytes = 0;
  cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr),
                                blocks);
  return int64_t(bytes);
}

Status nonzero_count(const bool* mask, int64_t n, int64_t* counts, int64_t* offsets, void* scratch,
                     int64_t scratch_bytes, void* stream) {
  const int64_t blocks = nonzero_blocks(n);
  if (blocks == 0) return kOk;
  const auto s = static_cast<cudaStream_t>(stream);
  nonzero_count_kernel<<<unsigned(blocks), kThreads, 0, s>>>(mask, n, counts);
  if (!launch_ok()) return kCudaError;
  size_t bytes = size_t(scratch_bytes);
  if (cub::DeviceScan::ExclusiveSum(scratch, bytes, static_cast<const int64_t*>(counts), offsets, blocks, s) !=
      cudaSuccess)
    return kCudaError;
  return launch_ok() ? kOk : kCudaError;
}

Status nonzero_write(const bool* mask, int64_t n, const int64_t* offsets, const Shape& shape, int64_t* out,
                     void* stream) {
  const int64_t blocks = nonzero_blocks(n);
  if (blocks == 0) return kOk;
  nonzero_write_kernel<<<unsigned(blocks), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(mask, n, offsets, shape,
                                                                                             out);
  return launch_ok() ? kOk : kCudaError;
}

// ---------------------------------------------------------------- advanced indexing
Status index_linearize(int64_t* lin, const int64_t* index, int64_t n, int64_t size, int64_t stride, bool accumulate,
                       int64_t* bad, void* stream) {
  return for_n(n, stream, [=] __device__(int64_t i) {
    const int64_t v = index[i];
    if (v < -size || v >= size) {
      report_bad(bad, i);
      if (!accumulate) lin[i] = 0;  // (the op raises; keep the row number in range meanwhile)
      return;
    }
    lin[i] = (accumulate ? lin[i] : 0) + (v < 0 ? v + size : v) * stride;
  });
}

Status index_rows(void* out, const void* src, const int64_t* lin, int64_t rows, int64_t row_elems, int64_t itemsize,
                  void* stream) {
  const int64_t row_bytes = row_elems * itemsize;
  if (rows == 0 || row_bytes == 0) return kOk;
  return by_unit(unit_of(out, src, row_bytes), [&](auto unit) {
    return move_rows_t<decltype(unit)>(out, src, lin, rows, row_bytes, /*scatter=*/false, stream);
  });
}

Status index_put_rows(void* dst, const void* values, const int64_t* lin, int64_t rows, int64_t row_elems, int dtype,
                      bool accumulate, void* stream) {
  if (rows == 0 || row_elems == 0) return kOk;
  return dispatch_storage<true>(dtype, [&](auto tag) {
    using T = decltype(tag);
    if (accumulate) return accumulate_rows_t<T>(dst, values, lin, rows, row_elems, stream);
    const int64_t row_bytes = row_elems * int64_t(sizeof(T));
    return by_unit(unit_of(dst, values, row_bytes), [&](auto unit) {
      return move_rows_t<decltype(unit)>(dst, values, lin, rows, row_bytes, /*scatter=*/true, stream);
    });
  });
}

Status index_put_rows_sorted(void* dst, const void* values, const int64_t* keys, const int64_t* perm, int64_t rows,
                             int64_t row_elems, int dtype, void* stream) {
  if (rows == 0 || row_elems == 0) return kOk;
  return dispatch_storage<true>(dtype, [&](auto tag) {
    return accumulate_sorted_rows_t<decltype(tag)>(dst, values, keys, perm, rows, row_elems, stream);
  });
}

// ---------------------------------------------------------------- gather / scatter
Status gather(void* out, const void* self, const int64_t* index, const ScatterGeom& g, int64_t numel, int64_t itemsize,
              int64_t* bad, void* stream) {
  return by_unit(int(itemsize), [&](auto unit) { return gather_t<decltype(unit)>(out, self, index, g, numel, bad, stream); });
}

Status scatter(void* self, const void* src, const int64_t* index, const ScatterGeom& g, int64_t numel, int dtype, int op,
               int64_t* bad, void* stream) {
  return dispatch_storage<true>(dtype, [&](auto tag) {
    return scatter_t<decltype(tag)>(self, src, index, g, numel, op, bad, stream);
  });
}

Status scatter_reduce(void* work, const void* src, const int64_t* index, const ScatterGeom& g, int64_t numel,
                      int64_t work_numel, int dtype, int reduce, bool include_self, int64_t* counts, int64_t* bad,
                      void* stream) {
  return dispatch<kAll>(dtype, [&](auto tag) {
    return scatter_reduce_t<decltype(tag)>(work, src, index, g, numel, work_numel, reduce, include_self, counts, bad,
                                           stream);
  });
}

// ---------------------------------------------------------------- random_ / randint
Status random_int(int64_t* out, int64_t n, int64_t from, uint64_t range, uint64_t key, uint64_t first, void* stream) {
  const int64_t counters = (n + 1) / 2;
  return for_n(counters, stream, [=] __device__(int64_t c) {
    uint32_t w[4];
    Philox::block(key, first + uint64_t(c), w);
    for (int j = 0; j < 2 && 2 * c + j < n; j++) {
      const uint64_t r = (uint64_t(w[2 * j]) << 32) | w[2 * j + 1];
      out[2 * c + j] = int64_t(uint64_t(from) + r % range);  // the unsigned sum wraps back into range
    }
  });
}

}  // namespace ember::cuda_kernels
