// Reductions over a contiguous [outer, reduced, inner] block on the GPU, with the CPU kernels'
// semantics: NaN propagates through max/min and argmax/argmin point at the first NaN, ties go to the
// first index, integer sums and products wrap, float32 sums accumulate in float32 (as PyTorch's CUDA
// kernels). Long contiguous rows (inner == 1) are reduced by whole thread blocks, split across
// several blocks per row when there are few rows (a second pass combines the partial results);
// otherwise each thread reduces one output, reading a row of the block per step (coalesced when
// inner > 1).
#include <limits>

#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

template <class T>
struct SumR {
  using Acc = T;
  __device__ static Acc identity() { return T(0); }
  __device__ static Acc load(T x, int64_t) { return x; }
  __device__ static Acc combine(Acc a, Acc b) { return wrapping_add(a, b); }
  __device__ static void store(Acc a, T* v, int64_t*, int64_t pos) { v[pos] = a; }
};
template <class T>
struct ProdR {
  using Acc = T;
  __device__ static Acc identity() { return T(1); }
  __device__ static Acc load(T x, int64_t) { return x; }
  __device__ static Acc combine(Acc a, Acc b) { return wrapping_mul(a, b); }
  __device__ static void store(Acc a, T* v, int64_t*, int64_t pos) { v[pos] = a; }
};
template <class T>
struct ValIdx {
  T v;
  int64_t i;
};
template <class T, bool Max>
struct ExtremeR {
  using Acc = ValIdx<T>;
  __device__ static Acc identity() {
    if constexpr (std::is_floating_point_v<T>)
      return {Max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity(),
              std::numeric_limits<int64_t>::max()};
    else
      return {Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max(), std::numeric_limits<int64_t>::max()};
  }
  __device__ static Acc load(T x, int64_t i) { return {x, i}; }
  // the better of two candidates, whatever order they come in: NaN first, then the extreme, then the
  // smaller index
  __device__ static Acc combine(Acc a, Acc b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool an = a.v != a.v, bn = b.v != b.v;
      if (an || bn) return (an && bn) ? (b.i < a.i ? b : a) : (an ? a : b);
    }
    if (a.v == b.v) return b.i < a.i ? b : a;
    return (Max ? b.v > a.v : b.v < a.v) ? b : a;
  }
  __device__ static void store(Acc a, T* v, int64_t* idx, int64_t pos) {
    if (v) v[pos] = a.v;
    if (idx) idx[pos] = a.i;
  }
};
template <bool All>
struct AllAnyR {
  using Acc = bool;
  __device__ static Acc identity() { return All; }
  __device__ static Acc load(bool x, int64_t) { return x; }
  __device__ static Acc combine(Acc a, Acc b) { return All ? (a && b) : (a || b); }
  __device__ static void store(Acc a, bool* v, int64_t*, int64_t pos) { v[pos] = a; }
};

// One thread per output (o, j): acc over r of in[o][r][j], in blocks of 256 rows combined at the end
// of each, as the CPU's blockwise sums: a float32 sum of a long column does not drift.
template <class T, class Red>
__global__ void __launch_bounds__(kThreads) reduce_per_output(const T* in, T* v, int64_t* idx, int64_t O, int64_t R, int64_t I) {
  const int64_t p = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (p >= O * I) return;
  const int64_t o = p / I, j = p % I;
  const T* x = in + o * R * I + j;
  typename Red::Acc acc = Red::identity();
  for (int64_t r0 = 0; r0 < R; r0 += 256) {
    const int64_t r1 = r0 + 256 < R ? r0 + 256 : R;
    typename Red::Acc part = Red::identity();
    for (int64_t r = r0; r < r1; r++) part = Red::combine(part, Red::load(x[r * I], r));
    acc = Red::combine(acc, part);
  }
  Red::store(acc, v, idx, p);
}

template <class Acc, class Red>
__device__ Acc block_combine(Acc acc) {
  __shared__ Acc shared[kThreads];
  shared[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) shared[threadIdx.x] = Red::combine(shared[threadIdx.x], shared[threadIdx.x + w]);
    __syncthreads();
  }
  return shared[0];
}

// Block (o, g) reduces in[o][g * chunk, (g + 1) * chunk): into the output when G == 1, else into
// partial[o * G + g].
template <class T, class Red>
__global__ void __launch_bounds__(kThreads) reduce_rows(const T* in, T* v, int64_t* idx, typename Red::Acc* partial,
                                                         int64_t R, int64_t chunk) {
  const int64_t o = blockIdx.x, g = blockIdx.y, G = gridDim.y;
  const int64_t lo = g * chunk, hi = lo + chunk < R ? lo + chunk : R;
  const T* x = in + o * R;
  typename Red::Acc acc = Red::identity();
  for (int64_t r = lo + threadIdx.x; r < hi; r += kThreads) acc = Red::combine(acc, Red::load(x[r], r));
  acc = block_combine<typename Red::Acc, Red>(acc);
  if (threadIdx.x == 0) {
    if (G == 1) Red::store(acc, v, idx, o);
    else partial[o * G + g] = acc;
  }
}

template <class T, class Red>
__global__ void __launch_bounds__(kThreads) reduce_partials(const typename Red::Acc* partial, T* v, int64_t* idx, int64_t G) {
  const int64_t o = blockIdx.x;
  typename Red::Acc acc = Red::identity();
  for (int64_t g = threadIdx.x; g < G; g += kThreads) acc = Red::combine(acc, partial[o * G + g]);
  acc = block_combine<typename Red::Acc, Red>(acc);
  if (threadIdx.x == 0) Red::store(acc, v, idx, o);
}

// Blocks per row for the row kernel (1: no scratch). Enough blocks in all to fill the GPU.
int64_t blocks_per_row(int64_t O, int64_t R) {
  const int64_t want = (R + 4095) / 4096;  // at least 16 elements per thread
  const int64_t cap = O >= 1024 ? 1 : 1024 / O;
  return want < cap ? want : cap;
}
bool use_rows(int64_t R, int64_t I) { return I == 1 && R >= 256; }

template <class T, class Red>
Status run(const void* in_, void* v_, int64_t* idx, int64_t O, int64_t R, int64_t I, void* scratch, void* stream) {
  const T* in = static_cast<const T*>(in_);
  T* v = static_cast<T*>(v_);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (O * I == 0) return kOk;
  if (use_rows(R, I)) {
    const int64_t G = blocks_per_row(O, R);
    const int64_t chunk = (R + G - 1) / G;
    auto* partial = static_cast<typename Red::Acc*>(scratch);
    for (int64_t o0 = 0; o0 < O; o0 += 65535 * 1024LL) {  // gridDim.x's limit (2^31 - 1)
      const int64_t n = O - o0 < 65535 * 1024LL ? O - o0 : 65535 * 1024LL;
      reduce_rows<T, Red><<<dim3(unsigned(n), unsigned(G)), kThreads, 0, s>>>(
          in + o0 * R, v ? v + o0 : nullptr, idx ? idx + o0 : nullptr, partial, R, chunk);
      if (!launch_ok()) return kCudaError;
      if (G > 1) {
        reduce_partials<T, Red><<<unsigned(n), kThreads, 0, s>>>(partial, v ? v + o0 : nullptr, idx ? idx + o0 : nullptr, G);
        if (!launch_ok()) return kCudaError;
      }
    }
    return kOk;
  }
  reduce_per_output<T, Red><<<blocks_for(O * I), kThreads, 0, s>>>(in, v, idx, O, R, I);
  return launch_ok() ? kOk : kCudaError;
}

// fn(T{}, Red{}) for the kernel and dtype, as the CPU's reduce_kernel supports them.
template <class Fn>
Status dispatch_reduce(int kernel, int dt, Fn&& fn) {
  const ReduceKernelCode k = ReduceKernelCode(kernel);
  if (k == kReduceAll || k == kReduceAny) {
    if (dt != Bool) return kBadDtype;
    return k == kReduceAll ? fn(bool{}, AllAnyR<true>{}) : fn(bool{}, AllAnyR<false>{});
  }
  return dispatch<kNumeric | bit(Bool)>(dt, [&](auto tag) -> Status {
    using T = decltype(tag);
    switch (k) {
      case kReduceSum:
        if constexpr (std::is_same_v<T, bool>) return kBadDtype;
        else return fn(T{}, SumR<T>{});
      case kReduceProd:
        if constexpr (std::is_same_v<T, bool>) return kBadDtype;
        else return fn(T{}, ProdR<T>{});
      case kReduceMax:
      case kReduceArgMax:
        return fn(T{}, ExtremeR<T, true>{});
      case kReduceMin:
      case kReduceArgMin:
        return fn(T{}, ExtremeR<T, false>{});
      default:
        return kNoKernel;
    }
  });
}

}  // namespace

int64_t reduce_scratch_bytes(int kernel, int dtype, int64_t outer, int64_t reduced, int64_t inner) {
  if (outer * inner == 0 || !use_rows(reduced, inner)) return 0;
  const int64_t G = blocks_per_row(outer < 65535 * 1024LL ? outer : 65535 * 1024LL, reduced);
  if (G == 1) return 0;
  int64_t acc = 0;
  dispatch_reduce(kernel, dtype, [&](auto tag, auto red) {
    acc = int64_t(sizeof(typename decltype(red)::Acc));
    (void)tag;
    return kOk;
  });
  return acc * G * (outer < 65535 * 1024LL ? outer : 65535 * 1024LL);
}

Status reduce(int kernel, int dtype, const void* in, void* values, int64_t* indices, int64_t outer, int64_t reduced,
              int64_t inner, void* scratch, void* stream) {
  if (reduced == 0 && kernel != kReduceSum && kernel != kReduceProd && kernel != kReduceAll && kernel != kReduceAny) return kOk;
  return dispatch_reduce(kernel, dtype, [&](auto tag, auto red) {
    using T = decltype(tag);
    using Red = decltype(red);
    return run<T, Red>(in, values, indices, outer, reduced, inner, scratch, stream);
  });
}

}  // namespace ember::cuda_kernels
