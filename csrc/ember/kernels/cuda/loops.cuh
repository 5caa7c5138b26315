#pragma once
// Elementwise loops on the GPU: each thread handles kUnroll elements a block-width apart (coalesced
// loads); a contiguous iteration indexes flat arrays, any other computes each operand's byte offset
// from the linear index, dims fastest first (the order register.cpp hands them over).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ember/core/wrapping.h"  // wrapping_add/sub/mul/neg, shared with the CPU
#include "ember/generated/kernels.h"
#include "ember/kernels/cuda/launch.h"

namespace ember::cuda_kernels {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

// Ember's Half / BFloat16 are 16-bit patterns; on the device they convert through CUDA's intrinsics.
struct HalfBits { uint16_t x; };
struct BFloat16Bits { uint16_t x; };
__device__ inline float to_float(HalfBits h) { return __half2float(__ushort_as_half(h.x)); }
__device__ inline float to_float(BFloat16Bits h) { return __bfloat162float(__ushort_as_bfloat16(h.x)); }

template <class T> struct is_reduced : std::false_type {};
template <> struct is_reduced<HalfBits> : std::true_type {};
template <> struct is_reduced<BFloat16Bits> : std::true_type {};

// static_cast with the 16-bit floats going through float (round to nearest even).
template <class To, class From>
__device__ inline To cast_to(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_reduced<From>::value) {
    return cast_to<To>(to_float(v));
  } else if constexpr (std::is_same_v<To, HalfBits>) {
    return HalfBits{__half_as_ushort(__float2half_rn(float(v)))};
  } else if constexpr (std::is_same_v<To, BFloat16Bits>) {
    return BFloat16Bits{__bfloat16_as_ushort(__float2bfloat16_rn(float(v)))};
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // through int64, as PyTorch: the GPU's own conversion saturates (-1.0 -> uint8 would be 0, not 255)
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

// The byte offsets of one element in every operand.
template <int N>
struct Offsets {
  int64_t o[N];
};

template <int N>
__device__ inline Offsets<N> offsets_of(const Iter& it, int64_t linear) {
  Offsets<N> r;
#pragma unroll
  for (int t = 0; t < N; t++) r.o[t] = 0;
  for (int d = 0; d < it.ndim; d++) {
    const int64_t size = it.shape[d];
    const int64_t idx = linear % size;
    linear /= size;
#pragma unroll
    for (int t = 0; t < N; t++) r.o[t] += idx * it.strides[t][d];
  }
  return r;
}

// Calls f(element index, offsets) for every element of the iteration.
template <int N, class F>
__global__ void __launch_bounds__(kThreads) elementwise_kernel(Iter it, F f) {
  const int64_t base = (int64_t(blockIdx.x) * kThreads * kUnroll) + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kUnroll; u++) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < it.numel) {
      if (it.contiguous) {
        Offsets<N> off;
#pragma unroll
        for (int t = 0; t < N; t++) off.o[t] = i;  // element index: f scales by the element size
        f(off, true);
      } else {
        f(offsets_of<N>(it, i), false);
      }
    }
  }
}

// Blocks of kThreads for one thread per element of n: all of them (blocks_for), or at most 2M for the
// kernels that stride over the grid (grid_stride_blocks).
inline unsigned blocks_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }
inline unsigned grid_stride_blocks(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return unsigned(blocks < 65535 * 32 ? blocks : 65535 * 32);
}

// Peek, not get: on failure the host side (register.cpp) reads the error with cudaGetLastError().
inline bool launch_ok() { return cudaPeekAtLastError() == cudaSuccess; }

template <int N, class F>
Status launch(const Iter& it, void* stream, const F& f) {
  if (it.numel == 0) return kOk;
  const int64_t per_block = int64_t(kThreads) * kUnroll;
  const int64_t blocks = (it.numel + per_block - 1) / per_block;
  elementwise_kernel<N><<<dim3(unsigned(blocks)), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(it, f);
  return launch_ok() ? kOk : kCudaError;
}

template <class T>
__device__ inline T& at(char* base, int64_t off, bool flat) {
  return *reinterpret_cast<T*>(base + (flat ? off * int64_t(sizeof(T)) : off));
}

// out = f(a) over operands 0 (R) and 1 (A).
template <class R, class A, class F>
Status unary_loop(const Iter& it, void* stream, F f) {
  return launch<2>(it, stream, [=] __device__(const Offsets<2>& o, bool flat) {
    at<R>(it.data[0], o.o[0], flat) = f(at<A>(it.data[1], o.o[1], flat));
  });
}

template <class R, class A, class F>
Status binary_loop(const Iter& it, void* stream, F f) {
  return launch<3>(it, stream, [=] __device__(const Offsets<3>& o, bool flat) {
    at<R>(it.data[0], o.o[0], flat) = f(at<A>(it.data[1], o.o[1], flat), at<A>(it.data[2], o.o[2], flat));
  });
}

template <class R, class A, class B, class C, class F>
Status ternary_loop(const Iter& it, void* stream, F f) {
  return launch<4>(it, stream, [=] __device__(const Offsets<4>& o, bool flat) {
    at<R>(it.data[0], o.o[0], flat) = f(at<A>(it.data[1], o.o[1], flat), at<B>(it.data[2], o.o[2], flat),
                                        at<C>(it.data[3], o.o[3], flat));
  });
}

// Complex elements as plain pairs (moved and added, never cast here).
struct ComplexFloatBits { float re, im; };
struct ComplexDoubleBits { double re, im; };

// The size in bytes of a dtype's element (0 for an unknown code).
inline int64_t size_of(int dt) {
  switch (dt) {
    case Byte: case Char: case Bool: return 1;
    case Short: case Half: case BFloat16: return 2;
    case Int: case Float: return 4;
    case Long: case Double: case ComplexFloat: return 8;
    case ComplexDouble: return 16;
    default: return 0;
  }
}

// fn(T{}) with T the storage type of `dt`: every real dtype, the 16-bit floats as their bit patterns,
// and with WithComplex the complex ones as pairs.
template <bool WithComplex = false, class Fn>
Status dispatch_storage(int dt, Fn&& fn) {
  switch (dt) {
    case Byte: return fn(uint8_t{});
    case Char: return fn(int8_t{});
    case Short: return fn(int16_t{});
    case Int: return fn(int32_t{});
    case Long: return fn(int64_t{});
    case Half: return fn(HalfBits{});
    case Float: return fn(float{});
    case Double: return fn(double{});
    case Bool: return fn(bool{});
    case BFloat16: return fn(BFloat16Bits{});
    case ComplexFloat:
      if constexpr (WithComplex) return fn(ComplexFloatBits{});
      break;
    case ComplexDouble:
      if constexpr (WithComplex) return fn(ComplexDoubleBits{});
      break;
    default:
      break;
  }
  return kBadDtype;
}

// Dtype masks, as the CPU kernels' (kernels/cpu/isa/loops.h).
constexpr int bit(int dt) { return 1 << dt; }
constexpr int kInts = bit(Byte) | bit(Char) | bit(Short) | bit(Int) | bit(Long);
constexpr int kFloats = bit(Float) | bit(Double);
constexpr int kNumeric = kInts | kFloats;
constexpr int kAll = kNumeric | bit(Bool);
constexpr int kIntegral = kInts | bit(Bool);

// Calls fn(T{}) for the compute dtype if `mask` allows it.
template <int mask, class Fn>
Status dispatch(int dt, Fn&& fn) {
  switch (dt) {
#define EMBER_CUDA_DC(T, N)                           \
  case N:                                             \
    if constexpr ((mask & bit(N)) != 0) return fn(T{}); \
    break;
    EMBER_CUDA_DC(uint8_t, Byte)
    EMBER_CUDA_DC(int8_t, Char)
    EMBER_CUDA_DC(int16_t, Short)
    EMBER_CUDA_DC(int32_t, Int)
    EMBER_CUDA_DC(int64_t, Long)
    EMBER_CUDA_DC(float, Float)
    EMBER_CUDA_DC(double, Double)
    EMBER_CUDA_DC(bool, Bool)
#undef EMBER_CUDA_DC
    default:
      break;
  }
  return kBadDtype;
}

}  // namespace ember::cuda_kernels
