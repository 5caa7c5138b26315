// Sorting rows on the GPU with CUB's stable segmented radix sort, one instantiation for every dtype:
// each value becomes a uint64 key whose unsigned order is the CPU kernels' order (integers by sign
// flip; floats widened to double, negatives bit-inverted, -0.0 equal to +0.0, every NaN one key above
// +inf; descending inverts the key, so NaN comes first there, as on the CPU). The sorted values are
// then gathered from the input by the sorted indices, so -0.0 and NaN payloads come back unchanged.
#include <cub/device/device_segmented_sort.cuh>

#include <cstring>

#include "ember/kernels/cuda/loops.cuh"

namespace ember::cuda_kernels {
namespace {

template <class T>
__device__ inline uint64_t order_key(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    double d = double(v);
    if (d != d) return ~uint64_t(0);  // NaN: after +inf (whose key is below all ones)
    if (d == 0.0) d = 0.0;             // -0.0 sorts with +0.0 (stable among them)
    uint64_t b;
    memcpy(&b, &d, 8);
    return (b >> 63) ? ~b : (b | (uint64_t(1) << 63));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? 1 : 0;
  } else {
    return uint64_t(int64_t(v)) ^ (uint64_t(1) << 63);  // signed order as unsigned
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) keys_kernel(const T* x, int64_t n_per_row, int64_t total, bool descending,
                                                         uint64_t* keys, int64_t* iota) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= total) return;
  const uint64_t k = order_key(x[i]);
  keys[i] = descending ? ~k : k;
  iota[i] = i % n_per_row;
}

__global__ void __launch_bounds__(kThreads) offsets_kernel(int64_t rows, int64_t n, int64_t* offsets) {
  const int64_t r = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (r <= rows) offsets[r] = r * n;
}

// out[r][j] = x[r][idx[r][j]] for the first k columns of each sorted row of n
template <class U>
__global__ void __launch_bounds__(kThreads) take_kernel(const U* x, const int64_t* idx, int64_t n, int64_t k,
                                                         int64_t total, U* values, int64_t* indices) {
  const int64_t e = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (e >= total) return;
  const int64_t r = e / k, j = e % k;
  const int64_t src = idx[r * n + j];
  values[e] = x[r * n + src];
  if (indices) indices[e] = src;
}

}  // namespace

int64_t sort_scratch_bytes(int64_t rows, int64_t n) {
  size_t bytes = 0;
  cub::DeviceSegmentedSort::StableSortPairs(nullptr, bytes, static_cast<const uint64_t*>(nullptr),
                                            static_cast<uint64_t*>(nullptr), static_cast<const int64_t*>(nullptr),
                                            static_cast<int64_t*>(nullptr), rows * n, rows,
                                            static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr));
  // keys in and out, the index column numbers, the row offsets, then CUB's own
  return int64_t(bytes) + 2 * rows * n * 8 + rows * n * 8 + (rows + 1) * 8 + 4 * 256;
}

Status sort_rows(int dtype, const void* x, int64_t rows, int64_t n, int64_t k, bool descending, void* values,
                 int64_t* indices, int64_t* sorted_idx, void* scratch, int64_t scratch_bytes, void* stream) {
  const int64_t total = rows * n;
  if (total == 0 || k == 0) return kOk;
  const auto s = static_cast<cudaStream_t>(stream);
  // carve the scratch: 256-byte aligned pieces
  char* p = static_cast<char*>(scratch);
  auto take = [&](int64_t bytes) {
    char* r = p;
    p += (bytes + 255) / 256 * 256;
    return r;
  };
  auto* keys_in = reinterpret_cast<uint64_t*>(take(total * 8));
  auto* keys_out = reinterpret_cast<uint64_t*>(take(total * 8));
  auto* iota = reinterpret_cast<int64_t*>(take(total * 8));
  auto* offsets = reinterpret_cast<int64_t*>(take((rows + 1) * 8));
  const int64_t used = p - static_cast<char*>(scratch);
  if (used > scratch_bytes) return kCudaError;
  size_t cub_bytes = size_t(scratch_bytes - used);

  const Status st = dispatch<kAll>(dtype, [&](auto tag) {
    using T = decltype(tag);
    keys_kernel<T><<<blocks_for(total), kThreads, 0, s>>>(static_cast<const T*>(x), n, total, descending, keys_in, iota);
    return launch_ok() ? kOk : kCudaError;
  });
  if (st != kOk) return st;
  offsets_kernel<<<blocks_for(rows + 1), kThreads, 0, s>>>(rows, n, offsets);
  if (!launch_ok()) return kCudaError;
  if (cub::DeviceSegmentedSort::StableSortPairs(p, cub_bytes, keys_in, keys_out, iota, sorted_idx, total, rows,
                                                offsets, offsets + 1, s) != cudaSuccess)
    return kCudaError;
  const int64_t out_total = rows * k;
  switch (size_of(dtype)) {
    case 1: take_kernel<uint8_t><<<blocks_for(out_total), kThreads, 0, s>>>(static_cast<const uint8_t*>(x), sorted_idx, n, k, out_total, static_cast<uint8_t*>(values), indices); break;
    case 2: take_kernel<uint16_t><<<blocks_for(out_total), kThreads, 0, s>>>(static_cast<const uint16_t*>(x), sorted_idx, n, k, out_total, static_cast<uint16_t*>(values), indices); break;
    case 4: take_kernel<uint32_t><<<blocks_for(out_total), kThreads, 0, s>>>(static_cast<const uint32_t*>(x), sorted_idx, n, k, out_total, static_cast<uint32_t*>(values), indices); break;
    default: take_kernel<uint64_t><<<blocks_for(out_total), kThreads, 0, s>>>(static_cast<const uint64_t*>(x), sorted_idx, n, k, out_total, static_cast<uint64_t*>(values), indices); break;
  }
  return launch_ok() ? kOk : kCudaError;
}

}  // namespace ember::cuda_kernels
