// Copies between any strides and any two real dtypes (the engine of copy_, .to(), .contiguous() on
// the GPU), fills, and tiled transposes. Same-dtype copies move raw bytes, so complex tensors copy
// too; casts to or from complex have no CUDA kernel yet.
#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

template <int Size> struct Raw;
template <> struct Raw<1> { using type = uint8_t; };
template <> struct Raw<2> { using type = uint16_t; };
template <> struct Raw<4> { using type = uint32_t; };
template <> struct Raw<8> { using type = uint64_t; };
template <> struct Raw<16> { using type = ulonglong2; };

template <class To, class From>
struct CastOp {
  __device__ To operator()(From v) const { return cast_to<To>(v); }
};

template <class T>
Status fill_as(const Iter& it, T v, void* stream) {
  return launch<1>(it, stream, [=] __device__(const Offsets<1>& o, bool flat) { at<T>(it.data[0], o.o[0], flat) = v; });
}

template <class T>
__global__ void transpose_kernel(const T* src, T* dst, int64_t R, int64_t C) {
  // 32x32 tiles through shared memory: both the reads and the writes stay coalesced. The tiles are
  // numbered along gridDim.x alone (its limit is 2^31 - 1; y's 65535 tiles of 32 would cap a side at 2M)
  __shared__ T tile[32][33];
  const int64_t b = blockIdx.z;
  const int64_t row_tiles = (R + 31) / 32;
  const int64_t r0 = (int64_t(blockIdx.x) % row_tiles) * 32, c0 = (int64_t(blockIdx.x) / row_tiles) * 32;
  const T* s = src + b * R * C;
  T* d = dst + b * R * C;
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t c = c0 + k, r = r0 + threadIdx.x;
    if (c < C && r < R) tile[k][threadIdx.x] = s[c * R + r];  // src is [C, R]
  }
  __syncthreads();
  for (int k = threadIdx.y; k < 32; k += blockDim.y) {
    const int64_t r = r0 + k, c = c0 + threadIdx.x;
    if (r < R && c < C) d[r * C + c] = tile[threadIdx.x][k];
  }
}

template <class T>
Status transpose_as(const void* src, void* dst, int64_t B, int64_t R, int64_t C, void* stream) {
  if (B == 0 || R == 0 || C == 0) return kOk;
  for (int64_t b0 = 0; b0 < B; b0 += 65535) {  // gridDim.z's limit
    const int64_t nb = B - b0 < 65535 ? B - b0 : 65535;
    const int64_t tiles = ((R + 31) / 32) * ((C + 31) / 32);
    if (tiles > 0x7fffffff) return kTooLarge;  // (over 2^31 tiles of 1024 elements: beyond any GPU's memory)
    dim3 grid(unsigned(tiles), 1, unsigned(nb));
    transpose_kernel<T><<<grid, dim3(32, 8), 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(src) + b0 * R * C, static_cast<T*>(dst) + b0 * R * C, R, C);
    if (!launch_ok()) return kCudaError;
  }
  return kOk;
}

}  // namespace

Status copy(const Iter& it, void* stream) {
  const int to = it.dtype[0], from = it.dtype[1];
  if (to == from) {
    if (it.contiguous) {
      const size_t bytes = size_t(it.numel * size_of(to));
      if (bytes == 0) return kOk;
      return cudaMemcpyAsync(it.data[0], it.data[1], bytes, cudaMemcpyDeviceToDevice,
                             static_cast<cudaStream_t>(stream)) == cudaSuccess ? kOk : kCudaError;
    }
    switch (size_of(to)) {
      case 1: return unary_loop<Raw<1>::type, Raw<1>::type>(it, stream, [] __device__(uint8_t v) { return v; });
      case 2: return unary_loop<Raw<2>::type, Raw<2>::type>(it, stream, [] __device__(uint16_t v) { return v; });
      case 4: return unary_loop<Raw<4>::type, Raw<4>::type>(it, stream, [] __device__(uint32_t v) { return v; });
      case 8: return unary_loop<Raw<8>::type, Raw<8>::type>(it, stream, [] __device__(uint64_t v) { return v; });
      case 16: return unary_loop<Raw<16>::type, Raw<16>::type>(it, stream, [] __device__(ulonglong2 v) { return v; });
      default: return kBadDtype;
    }
  }
  return dispatch_storage(to, [&](auto to_tag) {
    using To = decltype(to_tag);
    return dispatch_storage(from, [&](auto from_tag) {
      using From = decltype(from_tag);
      return unary_loop<To, From>(it, stream, CastOp<To, From>{});
    });
  });
}

Status fill(const Iter& it, const Args& value, void* stream) {
  const int dt = it.dtype[0];
  if (dt == ComplexFloat || dt == ComplexDouble) {
    // value: real part d[0], imaginary part d[1]
    if (dt == ComplexFloat) return fill_as(it, float2{float(value.d[0]), float(value.d[1])}, stream);
    return fill_as(it, double2{value.d[0], value.d[1]}, stream);
  }
  return dispatch_storage(dt, [&](auto tag) {
    using T = decltype(tag);
    T v;
    if constexpr (std::is_same_v<T, HalfBits> || std::is_same_v<T, BFloat16Bits>) v = T{uint16_t(value.i[1])};  // bits, converted on the host
    else if constexpr (std::is_same_v<T, bool>) v = value.b[0];
    else if constexpr (std::is_floating_point_v<T>) v = T(value.d[0]);
    else v = T(value.i[0]);
    return fill_as(it, v, stream);
  });
}

Status transpose_copy(int64_t itemsize, const void* src, void* dst, int64_t B, int64_t R, int64_t C, void* stream) {
  switch (itemsize) {
    case 1: return transpose_as<uint8_t>(src, dst, B, R, C, stream);
    case 2: return transpose_as<uint16_t>(src, dst, B, R, C, stream);
    case 4: return transpose_as<uint32_t>(src, dst, B, R, C, stream);
    case 8: return transpose_as<uint64_t>(src, dst, B, R, C, stream);
    case 16: return transpose_as<ulonglong2>(src, dst, B, R, C, stream);
    default: return kBadDtype;
  }
}

}  // namespace ember::cuda_kernels
