#pragma once
// The seam between the two halves of the CUDA kernels. register.cpp (host compiler) knows TensorIter
// and the kernel stubs; it flattens an op's operands into these plain structs and calls the
// launchers below, defined in the .cu files, which nvcc compiles without seeing any core header.
// Launchers queue work on `stream` and return a Status; they never throw (exceptions do not cross
// into device code) and never synchronize.
#include <cstdint>

namespace ember::cuda_kernels {

constexpr int kMaxDims = 25;  // PyTorch's limit for CUDA elementwise offsets
constexpr int kMaxOperands = 4;

// ScalarType's codes (register.cpp static_asserts that they agree).
enum Dtype : int8_t { Byte, Char, Short, Int, Long, Half, Float, Double, Bool, BFloat16, ComplexFloat, ComplexDouble };

// An elementwise iteration after broadcasting and coalescing: dims fastest first, strides in bytes,
// operand 0 the output.
struct Iter {
  int ndim = 0;
  int ntensors = 0;
  int64_t numel = 0;
  bool contiguous = false;  // every operand dense and in order: a flat loop
  int64_t shape[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  char* data[kMaxOperands] = {};
  int8_t dtype[kMaxOperands] = {};
};

// The scalars an elementwise functor reads (KernelArgs' s0..s2), in every form it may want.
struct Args {
  double d[3] = {};
  int64_t i[3] = {};
  bool b[3] = {};
};

enum Status : int {
  kOk = 0,
  kNoKernel = 1,  // the op has no CUDA kernel: NotImplementedError naming the op and device
  kBadDtype = 2,  // the op has a CUDA kernel, not for this dtype
  kCudaError = 3, // a launch failed: cudaGetLastError() says why (read by the host side)
};

// kernel: the UnaryKernel / BinaryKernel / TernaryKernel enum value (generated/kernels.h).
Status unary(int kernel, const Iter& it, const Args& a, void* stream);
Status binary(int kernel, const Iter& it, const Args& a, void* stream);
Status ternary(int kernel, const Iter& it, const Args& a, void* stream);
Status copy(const Iter& it, void* stream);                 // casts between any two real dtypes
// value: d[0] for floats (d[1] a complex's imaginary part), i[0] for integers, b[0] for bool, i[1] the
// float16 / bfloat16 bit pattern (rounded on the host, as the CPU's fill rounds)
Status fill(const Iter& it, const Args& value, void* stream);
// dst[b][r][c] = src[b][c][r]
Status transpose_copy(int64_t itemsize, const void* src, void* dst, int64_t B, int64_t R, int64_t C, void* stream);

// Random sampling on random/generator.h's Philox stream, as the CPU's samplers (kernels/cpu/random.cpp)
// read it: element i from word (i % per_counter) of counter (first + i / per_counter), float32 with
// 4 values per counter, float64 with 2. `out` is contiguous float32 or float64 with n elements.
Status uniform(int dtype, void* out, int64_t n, double lo, double hi, uint64_t key, uint64_t first, void* stream);
Status normal(int dtype, void* out, int64_t n, double mean, double std, uint64_t key, uint64_t first, void* stream);
inline int64_t philox_counters(int dtype, int64_t n) { return dtype == Double ? (n + 1) / 2 : (n + 3) / 4; }

// TernaryKernel's codes (kernels/kernels.h).
enum TernaryKernelCode : int { kTernaryClamp, kTernaryLerp, kTernaryWhere };
// ReduceKernel's codes (kernels/kernels.h).
enum ReduceKernelCode : int { kReduceSum, kReduceProd, kReduceMax, kReduceMin, kReduceArgMax, kReduceArgMin, kReduceAll, kReduceAny };

// Reductions over a contiguous [outer, reduced, inner] block (ReduceKernel's values). Long rows with
// few outputs are split across blocks: reduce_scratch_bytes says how much device scratch that takes
// (0: none), and the caller passes that much.
int64_t reduce_scratch_bytes(int kernel, int dtype, int64_t outer, int64_t reduced, int64_t inner);
Status reduce(int kernel, int dtype, const void* in, void* values, int64_t* indices, int64_t outer,
              int64_t reduced, int64_t inner, void* scratch, void* stream);

}  // namespace ember::cuda_kernels
