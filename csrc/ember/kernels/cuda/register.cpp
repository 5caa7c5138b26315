// The CUDA entries of the kernel stubs (kernels/registry.h): each flattens its TensorIter (or raw
// pointers) into kernels/cuda/launch.h's structs, makes the operands' device current, and queues the
// launch on that device's current stream. A launcher's status becomes PyTorch's exception here.
#include <cstring>

#include "ember/cuda/backend.h"
#include "ember/cuda/cuda.h"
#include "ember/kernels/cuda/launch.h"
#include "ember/generated/ops.h"
#include "ember/kernels/kernels.h"
#include "ember/kernels/random.h"
#include "ember/random/generator.h"

namespace ember::cuda {
namespace {

namespace ck = ::ember::cuda_kernels;

static_assert(int(ck::Byte) == int(kByte) && int(ck::Long) == int(kLong) && int(ck::Half) == int(kHalf) &&
              int(ck::Bool) == int(kBool) && int(ck::BFloat16) == int(kBFloat16) &&
              int(ck::ComplexDouble) == int(kComplexDouble), "launch.h's dtype codes follow ScalarType");
static_assert(int(ck::kTernaryClamp) == int(TernaryKernel::Clamp) && int(ck::kTernaryLerp) == int(TernaryKernel::Lerp) &&
              int(ck::kTernaryWhere) == int(TernaryKernel::Where), "launch.h's ternary codes follow TernaryKernel");
static_assert(int(ck::kReduceSum) == int(ReduceKernel::Sum) && int(ck::kReduceArgMin) == int(ReduceKernel::ArgMin) &&
              int(ck::kReduceAny) == int(ReduceKernel::Any), "launch.h's reduction codes follow ReduceKernel");

ck::Iter flatten(const TensorIter& it, const char* op) {
  EMBER_CHECK(it.ndim() <= ck::kMaxDims, op, ": a CUDA elementwise op takes at most ", ck::kMaxDims,
              " dimensions after coalescing, got ", it.ndim());
  ck::Iter r;
  r.ndim = it.ndim();
  r.ntensors = it.ntensors();
  r.numel = it.numel();
  r.contiguous = it.is_contiguous();
  for (int d = 0; d < r.ndim; d++) r.shape[d] = it.shape()[size_t(d)];
  for (int t = 0; t < r.ntensors; t++) {
    r.data[t] = it.data(t);
    r.dtype[t] = int8_t(it.dtype(t));
    for (int d = 0; d < r.ndim; d++) r.strides[t][d] = it.strides(t)[d];
  }
  return r;
}

ck::Args args_of(const KernelArgs& a) {
  ck::Args r;
  const Scalar* s[3] = {&a.s0, &a.s1, &a.s2};
  for (int k = 0; k < 3; k++) {
    r.d[k] = s[k]->to_double();
    r.i[k] = s[k]->is_floating() ? 0 : s[k]->to_long();
    r.b[k] = s[k]->to_bool();
  }
  return r;
}

void raise_status(ck::Status st, const char* op, Device device, ScalarType dtype) {
  switch (st) {
    case ck::kOk:
      return;
    case ck::kNoKernel:
      no_kernel_for(op, device);
    case ck::kBadDtype:
      EMBER_FAIL(NotImplemented, "\"", op, "_cuda\" not implemented for '", dtype, "'");
    case ck::kCudaError:
      fail(cudaGetLastError(), op);
  }
}

void* stream_of(const TensorIter& it) { return to_cuda(it.stream()); }

void unary_cuda(UnaryKernel k, TensorIter& it, const KernelArgs& a) {
  DeviceGuard g(it.device().index);
  raise_status(ck::unary(int(k), flatten(it, a.name), args_of(a), stream_of(it)), a.name, it.device(), it.dtype(1));
}

void binary_cuda(BinaryKernel k, TensorIter& it, const KernelArgs& a) {
  DeviceGuard g(it.device().index);
  raise_status(ck::binary(int(k), flatten(it, a.name), args_of(a), stream_of(it)), a.name, it.device(), it.dtype(1));
}

void ternary_cuda(TernaryKernel k, TensorIter& it, const KernelArgs& a) {
  DeviceGuard g(it.device().index);
  raise_status(ck::ternary(int(k), flatten(it, a.name), args_of(a), stream_of(it)), a.name, it.device(), it.dtype(2));
}

void copy_cuda(TensorIter& it) {
  DeviceGuard g(it.device().index);
  raise_status(ck::copy(flatten(it, "copy_"), stream_of(it)), "copy_", it.device(), it.dtype(1));
}

void fill_cuda(TensorIter& it, const Scalar& value) {
  DeviceGuard g(it.device().index);
  ck::Args v;
  const ScalarType dt = it.dtype(0);
  v.d[0] = value.to_double();
  v.d[1] = value.imag();
  v.b[0] = value.to_bool();
  v.i[0] = value.is_floating() ? int64_t(value.to_double()) : value.to_long();
  if (dt == kHalf) v.i[1] = Half(float(value.to_double())).x;
  if (dt == kBFloat16) v.i[1] = BFloat16(float(value.to_double())).x;
  raise_status(ck::fill(flatten(it, "fill_"), v, stream_of(it)), "fill_", it.device(), dt);
}

// The raw-pointer kernels carry no device: they run on the current device's current stream.
Device current() { return Device(DeviceType::CUDA, int8_t(current_device())); }

void transpose_copy_cuda(int64_t itemsize, const void* src, void* dst, int64_t B, int64_t R, int64_t C) {
  const Device d = current();
  raise_status(ck::transpose_copy(itemsize, src, dst, B, R, C, current_cuda_stream(d.index)), "transpose_copy", d,
               kByte);
}

void reduce_cuda(ReduceKernel k, ScalarType dt, const void* in, void* values, int64_t* indices, ReduceShape sh) {
  const Device d = current();
  const int64_t scratch_bytes = ck::reduce_scratch_bytes(int(k), int(dt), sh.outer, sh.reduced, sh.inner);
  Tensor scratch;  // from the caching allocator, on the current stream: reused safely in stream order
  if (scratch_bytes > 0) scratch = empty_tensor({scratch_bytes}, kByte, d);
  raise_status(ck::reduce(int(k), int(dt), in, values, indices, sh.outer, sh.reduced, sh.inner,
                          scratch_bytes > 0 ? scratch.data_ptr() : nullptr, current_cuda_stream(d.index)),
               "reduce", d, dt);
}

// uniform_/normal_: the CPU's Philox counters (kernels/cpu/random.cpp reserves the same number), so
// a seed gives the same values on both devices. Other dtypes draw float32 and cast, as the CPU.
using Sampler = ck::Status (*)(int, void*, int64_t, double, double, uint64_t, uint64_t, void*);
void sample(Sampler sampler, const char* op, const Tensor& t, double a, double b, Generator& g) {
  const Device d = t.device();
  DeviceGuard guard(d.index);
  if (t.dtype() != kFloat && t.dtype() != kDouble) {
    Tensor f = empty_tensor(t.sizes(), kFloat, d);
    sample(sampler, op, f, a, b, g);
    ember::copy_(t, f);
    return;
  }
  const int64_t n = t.numel();
  if (n == 0) return;
  const uint64_t first = g.reserve(uint64_t(ck::philox_counters(int(t.dtype()), n)));
  raise_status(sampler(int(t.dtype()), t.data_ptr(), n, a, b, g.key(), first, current_cuda_stream(d.index)), op, d,
               t.dtype());
}
void uniform_cuda(const Tensor& t, double lo, double hi, Generator& g) { sample(&ck::uniform, "uniform_", t, lo, hi, g); }
void normal_cuda(const Tensor& t, double mean, double std, Generator& g) { sample(&ck::normal, "normal_", t, mean, std, g); }

}  // namespace
}  // namespace ember::cuda

EMBER_REGISTER_KERNEL(unary_kernel_stub, CUDA, &::ember::cuda::unary_cuda);
EMBER_REGISTER_KERNEL(binary_kernel_stub, CUDA, &::ember::cuda::binary_cuda);
EMBER_REGISTER_KERNEL(ternary_kernel_stub, CUDA, &::ember::cuda::ternary_cuda);
EMBER_REGISTER_KERNEL(copy_kernel_stub, CUDA, &::ember::cuda::copy_cuda);
EMBER_REGISTER_KERNEL(fill_kernel_stub, CUDA, &::ember::cuda::fill_cuda);
EMBER_REGISTER_KERNEL(transpose_copy_kernel_stub, CUDA, &::ember::cuda::transpose_copy_cuda);
EMBER_REGISTER_KERNEL(reduce_kernel_stub, CUDA, &::ember::cuda::reduce_cuda);
EMBER_REGISTER_KERNEL(uniform_stub, CUDA, &::ember::cuda::uniform_cuda);
EMBER_REGISTER_KERNEL(normal_stub, CUDA, &::ember::cuda::normal_cuda);
