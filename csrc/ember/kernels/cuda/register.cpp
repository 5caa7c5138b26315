// The CUDA entries of the kernel stubs (kernels/registry.h): each flattens its TensorIter (or raw
// pointers) into kernels/cuda/launch.h's structs, makes the operands' device current, and queues the
// launch on that device's current stream. A launcher's status becomes PyTorch's exception here.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "ember/core/deterministic.h"
#include "ember/cuda/backend.h"
#include "ember/cuda/cuda.h"
#include "ember/kernels/cuda/cudnn.h"
#include "ember/kernels/cuda/launch.h"
#include "ember/generated/ops.h"
#include "ember/kernels/creation.h"
#include "ember/kernels/cumulative.h"
#include "ember/kernels/distance.h"
#include "ember/kernels/embedding.h"
#include "ember/kernels/indexing.h"
#include "ember/kernels/interp.h"
#include "ember/kernels/kernels.h"
#include "ember/kernels/nn_loss.h"
#include "ember/kernels/nn_norm.h"
#include "ember/kernels/optim.h"
#include "ember/kernels/padding.h"
#include "ember/kernels/pooling.h"
#include "ember/ops/conv.h"
#include "ember/kernels/random.h"
#include "ember/kernels/scatter.h"
#include "ember/kernels/search.h"
#include "ember/kernels/shape.h"
#include "ember/kernels/sort.h"
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
static_assert(int(ck::kSRSum) == int(ScatterReduce::Sum) && int(ck::kSRMean) == int(ScatterReduce::Mean) &&
              int(ck::kSRAmin) == int(ScatterReduce::Amin), "launch.h's scatter_reduce codes follow ScatterReduce");

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
    case ck::kTooLarge:
      EMBER_FAIL(Runtime, op, ": the tensor is too large for the CUDA kernel's launch grid (", dtype, ")");
    case ck::kCudaError: {
      const cudaError_t err = cudaGetLastError();
      if (err == cudaSuccess) EMBER_FAIL(Runtime, op, ": internal error in the CUDA backend (a launcher failed without a CUDA error)");
      fail(err, op);
    }
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

// The raw-pointer kernels carry no device: they run on the device holding their input (one GPU needs
// no lookup), on its current stream.
Device device_of(const void* p) {
  if (device_count() <= 1) return Device(DeviceType::CUDA, 0);
  cudaPointerAttributes attr;
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return Device(DeviceType::CUDA, int8_t(current_device()));
  }
  return Device(DeviceType::CUDA, int8_t(attr.device));
}

void transpose_copy_cuda(int64_t itemsize, const void* src, void* dst, int64_t B, int64_t R, int64_t C) {
  const Device d = device_of(src);
  DeviceGuard guard(d.index);
  raise_status(ck::transpose_copy(itemsize, src, dst, B, R, C, current_cuda_stream(d.index)), "transpose_copy", d,
               kByte);
}

void reduce_cuda(ReduceKernel k, ScalarType dt, const void* in, void* values, int64_t* indices, ReduceShape sh) {
  const Device d = device_of(values);  // (not `in`: over an empty dim the input has no memory, a null pointer)
  DeviceGuard guard(d.index);
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

// exponential_ and bernoulli_ as the CPU's: from the same float64 uniforms, through device ops.
void exponential_cuda(const Tensor& t, double lambd, Generator& g) {
  DeviceGuard guard(t.device().index);
  Tensor u = empty_tensor(t.sizes(), kDouble, t.device());
  sample(&ck::uniform, "exponential_", u, 0.0, 1.0, g);
  ember::copy_(t, ember::div(ember::neg(ember::log1p(ember::neg(u))), scalar_to_tensor(Scalar(lambd))));
}

void bernoulli_cuda(const Tensor& t, const Tensor& p, Generator& g) {
  DeviceGuard guard(t.device().index);
  // (NaN fails both comparisons, as it fails the CPU's check; the check reads one bool back)
  const bool ok = ember::all(ember::logical_and(ember::ge(p, Scalar(0.0)), ember::le(p, Scalar(1.0)))).item().to_bool();
  EMBER_CHECK(ok, "bernoulli_ expects all elements of p to be in [0, 1]");
  Tensor u = empty_tensor(t.sizes(), kDouble, t.device());
  sample(&ck::uniform, "bernoulli_", u, 0.0, 1.0, g);
  ember::copy_(t, ember::lt(u, p));
}

void random_cuda(const Tensor& t, int64_t from, uint64_t range, Generator& g) {
  const Device d = t.device();
  DeviceGuard guard(d.index);
  Tensor v = empty_tensor(t.sizes(), kLong, d);
  const int64_t n = v.numel();
  if (n > 0) {
    const uint64_t first = g.reserve(uint64_t((n + 1) / 2));
    raise_status(ck::random_int(static_cast<int64_t*>(v.data_ptr()), n, from, range, g.key(), first,
                                current_cuda_stream(d.index)),
                 "random_", d, t.dtype());
  }
  ember::copy_(t, v);
}

// ---- indexing and scatter/gather: a bad index is reported by position through a device int64
// (INT64_MAX when none); reading it back synchronizes, where PyTorch's kernels assert on the device
// and poison the context. The value named in the error is read from the index at that position.
class BadIndex {
 public:
  explicit BadIndex(Device d) : t_(empty_tensor({1}, kLong, d)) { t_.fill_(Scalar(std::numeric_limits<int64_t>::max())); }
  int64_t* ptr() { return static_cast<int64_t*>(t_.data_ptr()); }
  // the smallest value a kernel recorded (a position, or a code), if any: reading it synchronizes
  std::optional<int64_t> first() {
    const int64_t pos = t_.item().to_long();
    if (pos == std::numeric_limits<int64_t>::max()) return std::nullopt;
    return pos;
  }
  // the index value at the first bad position, if any
  std::optional<int64_t> value(const Tensor& index) {
    const std::optional<int64_t> pos = first();
    if (!pos) return std::nullopt;
    return index.reshape({-1}).select(0, *pos).item().to_long();
  }

 private:
  Tensor t_;
};

// multinomial: the CPU's algorithm and counters (one thread per row), so a seed gives the CPU's samples; a
// bad distribution is read back (a synchronization; PyTorch's kernel asserts on the device instead) and
// raises the CPU's error for the first bad row.
void multinomial_cuda(const Tensor& out, const Tensor& p, bool replacement, Generator& g) {
  const Device d = p.device();
  DeviceGuard guard(d.index);
  const int64_t rows = p.sizes()[0], cats = p.sizes()[1], ns = out.sizes()[1];
  const uint64_t first = g.reserve(uint64_t(rows * ns));
  if (rows == 0) return;
  Tensor scratch = replacement ? Tensor() : empty_tensor({rows, cats}, kDouble, d);
  BadIndex bad(d);  // the first bad row, as row * 4 + code
  raise_status(ck::multinomial(static_cast<const double*>(p.data_ptr()), static_cast<int64_t*>(out.data_ptr()),
                               replacement ? nullptr : static_cast<double*>(scratch.data_ptr()), rows, cats, ns,
                               replacement, g.key(), first, bad.ptr(), current_cuda_stream(d.index)),
               "multinomial", d, kDouble);
  const std::optional<int64_t> st = bad.first();
  if (!st) return;
  switch (*st % 4) {
    case 1: EMBER_FAIL(Runtime, "probability tensor contains either `inf`, `nan` or element < 0");
    case 2: EMBER_FAIL(Runtime, "invalid multinomial distribution (sum of probabilities <= 0)");
    default:
      EMBER_FAIL(Runtime, "invalid multinomial distribution (with replacement=False, not enough non-negative "
                 "category to sample)");
  }
}

template <class T>
T* ptr_of(const Tensor& t) { return static_cast<T*>(t.data_ptr()); }
// the same for an optional tensor: null when undefined
template <class T>
T* ptr_or_null(const Tensor& t) { return t.defined() ? ptr_of<T>(t) : nullptr; }

Tensor nonzero_cuda(const Tensor& mask, IntArrayRef sizes) {
  const Device d = mask.device();
  DeviceGuard guard(d.index);
  const int64_t n = mask.numel(), nd = int64_t(sizes.size());
  EMBER_CHECK(nd <= ck::kMaxDims, "nonzero: a CUDA tensor of at most ", ck::kMaxDims, " dims, got ", nd);
  if (n == 0) return empty_tensor({0, nd}, kLong, d);
  const int64_t blocks = ck::nonzero_blocks(n), scratch_bytes = ck::nonzero_scratch_bytes(blocks);
  Tensor counts = empty_tensor({2, blocks}, kLong, d);  // per-block counts, then their exclusive sums
  Tensor scratch = empty_tensor({std::max<int64_t>(scratch_bytes, 1)}, kByte, d);
  void* stream = current_cuda_stream(d.index);
  raise_status(ck::nonzero_count(ptr_of<bool>(mask), n, ptr_of<int64_t>(counts), ptr_of<int64_t>(counts) + blocks,
                                 scratch.data_ptr(), scratch_bytes, stream),
               "nonzero", d, kBool);
  // the output's size is data-dependent: read the total back (synchronizes, as PyTorch's nonzero)
  const int64_t total = counts.select(1, blocks - 1).sum().item().to_long();
  Tensor out = empty_tensor({total, nd}, kLong, d);
  ck::Shape shape;
  shape.nd = int(nd);
  for (int64_t k = 0; k < nd; k++) shape.sizes[k] = sizes[size_t(k)];
  if (total > 0 && nd > 0)
    raise_status(ck::nonzero_write(ptr_of<bool>(mask), n, ptr_of<int64_t>(counts) + blocks, shape, ptr_of<int64_t>(out),
                                   stream),
                 "nonzero", d, kBool);
  return out;
}

void index_linearize_cuda(const Tensor& lin, const Tensor& index, int64_t size, int64_t stride, int64_t dim,
                          bool accumulate) {
  const Device d = lin.device();
  DeviceGuard guard(d.index);
  const int64_t n = lin.numel();
  if (n == 0) return;
  BadIndex bad(d);
  raise_status(ck::index_linearize(ptr_of<int64_t>(lin), ptr_of<int64_t>(index), n, size, stride, accumulate, bad.ptr(),
                                   current_cuda_stream(d.index)),
               "index", d, kLong);
  // checked before any row moves: a bad row number never reaches index_rows / index_put_rows
  if (auto v = bad.value(index))
    EMBER_FAIL(Index, "index ", *v, " is out of bounds for dimension ", dim, " with size ", size);
}

void index_rows_cuda(const Tensor& out, const Tensor& src, const Tensor& lin, int64_t row_elems) {
  const Device d = src.device();
  DeviceGuard guard(d.index);
  raise_status(ck::index_rows(out.data_ptr(), src.data_ptr(), ptr_of<int64_t>(lin), lin.numel(), row_elems,
                              src.element_size(), current_cuda_stream(d.index)),
               "index", d, src.dtype());
}

// Floating-point atomics add in the order the hardware runs the threads: under
// use_deterministic_algorithms(True) a call without a deterministic variant alerts (index_put_'s
// accumulation has one below; scatter_add_ reaches it through ops/scatter.cpp). Integer sums and
// max/min are exact.
void alert_float_atomics(ScalarType dt, const char* what) {
  if (EMBER_UNLIKELY(deterministic_algorithms()) && (is_floating(dt) || is_complex(dt))) alert_not_deterministic(what);
}

void index_put_rows_cuda(const Tensor& dst, const Tensor& values, const Tensor& lin, int64_t row_elems, bool accumulate) {
  const Device d = dst.device();
  DeviceGuard guard(d.index);
  const ScalarType dt = dst.dtype();
  if (accumulate && deterministic_algorithms() && (is_floating(dt) || is_complex(dt)) && lin.numel() > 0) {
    // deterministic (index_put_ accumulate, index_add_, embedding's backward, PyTorch's sort-based way):
    // the targets sorted stably, each run summed in the rows' order, the CPU's sums
    const int64_t rows = lin.numel();
    Tensor keys = empty_tensor({1, rows}, kLong, d), perm = empty_tensor({1, rows}, kLong, d);
    Tensor full_perm = empty_tensor({1, rows}, kLong, d);
    const int64_t scratch_bytes = ck::sort_scratch_bytes(1, rows);
    Tensor scratch = empty_tensor({scratch_bytes}, kByte, d);
    cudaStream_t s = current_cuda_stream(d.index);
    raise_status(ck::sort_rows(int(kLong), lin.data_ptr(), 1, rows, rows, false, keys.data_ptr(), ptr_of<int64_t>(perm),
                               ptr_of<int64_t>(full_perm), scratch.data_ptr(), scratch_bytes, s),
                 "index_put_", d, kLong);
    raise_status(ck::index_put_rows_sorted(dst.data_ptr(), values.data_ptr(), ptr_of<int64_t>(keys),
                                           ptr_of<int64_t>(perm), rows, row_elems, int(dt), s),
                 "index_put_", d, dt);
    return;
  }
  raise_status(ck::index_put_rows(dst.data_ptr(), values.data_ptr(), ptr_of<int64_t>(lin), lin.numel(), row_elems,
                                  int(dst.dtype()), accumulate, current_cuda_stream(d.index)),
               "index_put_", d, dst.dtype());
}

ck::ScatterGeom geometry(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, const char* op) {
  EMBER_CHECK(index.dim() <= ck::kMaxDims, op, ": a CUDA index of at most ", ck::kMaxDims, " dims, got ", index.dim());
  ck::ScatterGeom g;
  g.nd = int(index.dim());
  g.dim = int(dim);
  g.dim_size = self.dim() ? self.sizes()[size_t(dim)] : 1;
  g.dim_stride = self.dim() ? self.strides()[size_t(dim)] : 0;
  for (int64_t k = 0; k < index.dim(); k++) {
    g.sizes[k] = index.sizes()[size_t(k)];
    g.index_strides[k] = index.strides()[size_t(k)];
    g.self_strides[k] = (k == dim || self.dim() == 0) ? 0 : self.strides()[size_t(k)];
    g.src_strides[k] = (src && src->dim()) ? src->strides()[size_t(k)] : 0;
  }
  return g;
}

void raise_bad_scatter_index(BadIndex& bad, const Tensor& self, int64_t dim, const Tensor& index) {
  if (auto v = bad.value(index))
    EMBER_FAIL(Runtime, "index ", *v, " is out of bounds for dimension ", dim, " with size ",
               self.dim() ? self.sizes()[size_t(dim)] : 1);
}

void gather_cuda(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  const Device d = self.device();
  DeviceGuard guard(d.index);
  if (index.numel() == 0) return;
  BadIndex bad(d);
  raise_status(ck::gather(out.data_ptr(), self.data_ptr(), ptr_of<int64_t>(index), geometry(self, dim, index, nullptr, "gather"),
                          index.numel(), self.element_size(), bad.ptr(), current_cuda_stream(d.index)),
               "gather", d, self.dtype());
  raise_bad_scatter_index(bad, self, dim, index);
}

void scatter_cuda(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, ScatterMode mode) {
  const Device d = self.device();
  DeviceGuard guard(d.index);
  if (index.numel() == 0) return;
  const char* op = mode == ScatterMode::Set ? "scatter" : "scatter_add";
  if (mode != ScatterMode::Set) alert_float_atomics(self.dtype(), "scatter_add_cuda_kernel");  // 0-d self only
  BadIndex bad(d);
  raise_status(ck::scatter(self.data_ptr(), src.data_ptr(), ptr_of<int64_t>(index), geometry(self, dim, index, &src, op),
                           index.numel(), int(self.dtype()), mode == ScatterMode::Set ? ck::kScatterSet : ck::kScatterAdd,
                           bad.ptr(), current_cuda_stream(d.index)),
               op, d, self.dtype());
  raise_bad_scatter_index(bad, self, dim, index);
}

void scatter_reduce_cuda(const Tensor& work, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce red,
                         bool include_self) {
  const Device d = work.device();
  DeviceGuard guard(d.index);
  if (index.numel() == 0) return;
  if (red == ScatterReduce::Sum || red == ScatterReduce::Mean || red == ScatterReduce::Prod)
    alert_float_atomics(work.dtype(), "scatter_reduce_cuda_kernel");
  BadIndex bad(d);
  Tensor counts;
  if (red == ScatterReduce::Mean) {
    counts = empty_tensor(work.sizes(), kLong, d);
    counts.fill_(Scalar(int64_t(include_self ? 1 : 0)));
  }
  raise_status(ck::scatter_reduce(work.data_ptr(), src.data_ptr(), ptr_of<int64_t>(index),
                                  geometry(work, dim, index, &src, "scatter_reduce"), index.numel(), work.numel(),
                                  int(work.dtype()), int(red), include_self,
                                  counts.defined() ? ptr_of<int64_t>(counts) : nullptr, bad.ptr(),
                                  current_cuda_stream(d.index)),
               "scatter_reduce", d, work.dtype());
  raise_bad_scatter_index(bad, work, dim, index);
}

// ---- sort / topk: the first k of each row's stable order (k = n for sort), by CUB (kernels/cuda/sort.cu)
void sort_first_k(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t k, bool descending,
                  const char* op) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  const int64_t n = x.dim() ? x.sizes().back() : 1, rows = n ? x.numel() / n : 0;
  if (rows == 0 || n == 0 || k == 0) return;
  const int64_t scratch_bytes = ck::sort_scratch_bytes(rows, n);
  Tensor scratch = empty_tensor({scratch_bytes}, kByte, d);
  Tensor sorted_idx = empty_tensor({rows, n}, kLong, d);
  raise_status(ck::sort_rows(int(x.dtype()), x.data_ptr(), rows, n, k, descending, values.data_ptr(),
                             ptr_of<int64_t>(indices), ptr_of<int64_t>(sorted_idx), scratch.data_ptr(), scratch_bytes,
                             current_cuda_stream(d.index)),
               op, d, x.dtype());
}
void sort_cuda(const Tensor& values, const Tensor& indices, const Tensor& x, bool descending) {
  sort_first_k(values, indices, x, x.dim() ? x.sizes().back() : 1, descending, "sort");
}
void topk_cuda(const Tensor& values, const Tensor& indices, const Tensor& x, int64_t k, bool largest) {
  sort_first_k(values, indices, x, k, largest, "topk");
}

// randperm: the stable sort order of n random 64-bit keys (PyTorch's CUDA randperm sorts random keys
// too; its values differ from the CPU's Fisher-Yates, as PyTorch's do)
void randperm_cuda(const Tensor& out, Generator& g) {
  const int64_t n = out.numel();
  if (n == 0) return;
  const Device d = out.device();
  DeviceGuard guard(d.index);
  Tensor keys = empty_tensor({n}, kLong, d);
  random_cuda(keys, std::numeric_limits<int64_t>::min(), std::numeric_limits<uint64_t>::max(), g);
  Tensor sorted_keys = empty_tensor({n}, kLong, d);
  sort_first_k(sorted_keys, out, keys, n, false, "randperm");
}

// ---- NN kernels (nn.cu)
void softmax_cuda(bool log, ScalarType dt, const void* in, void* out, int64_t outer, int64_t dim, int64_t inner) {
  const Device d = device_of(in);
  DeviceGuard guard(d.index);
  raise_status(ck::softmax(log, int(dt), in, out, outer, dim, inner, current_cuda_stream(d.index)),
               log ? "log_softmax" : "softmax", d, dt);
}
void softmax_backward_cuda(bool log, ScalarType dt, const void* grad, const void* out, void* grad_in, int64_t outer,
                           int64_t dim, int64_t inner) {
  const Device d = device_of(out);
  DeviceGuard guard(d.index);
  raise_status(ck::softmax_backward(log, int(dt), grad, out, grad_in, outer, dim, inner, current_cuda_stream(d.index)),
               log ? "_log_softmax_backward_data" : "_softmax_backward_data", d, dt);
}
void layer_norm_cuda(ScalarType dt, const void* x, const void* w, const void* b, void* y, void* mean, void* rstd,
                     int64_t rows, int64_t cols, double eps) {
  const Device d = device_of(x);
  DeviceGuard guard(d.index);
  raise_status(ck::layer_norm(int(dt), x, w, b, y, mean, rstd, rows, cols, eps, current_cuda_stream(d.index)),
               "layer_norm", d, dt);
}
void layer_norm_backward_cuda(ScalarType dt, const void* dy, const void* x, const void* mean, const void* rstd,
                              const void* w, void* dx, void* dw, void* db, int64_t rows, int64_t cols) {
  const Device d = device_of(x);
  DeviceGuard guard(d.index);
  raise_status(ck::layer_norm_backward(int(dt), dy, x, mean, rstd, w, dx, dw, db, rows, cols,
                                       current_cuda_stream(d.index)),
               "layer_norm_backward", d, dt);
}
void batch_norm_stats_cuda(ScalarType dt, const void* x, double* mean, double* var, int64_t n, int64_t c, int64_t s) {
  const Device d = device_of(x);
  DeviceGuard guard(d.index);
  raise_status(ck::batch_norm_stats(int(dt), x, mean, var, n, c, s, current_cuda_stream(d.index)), "batch_norm", d, dt);
}
void batch_norm_apply_cuda(ScalarType dt, const void* x, const double* a, const double* b, void* y, int64_t n,
                           int64_t c, int64_t s) {
  const Device d = device_of(x);
  DeviceGuard guard(d.index);
  raise_status(ck::batch_norm_apply(int(dt), x, a, b, y, n, c, s, current_cuda_stream(d.index)), "batch_norm", d, dt);
}
void batch_norm_backward_reduce_cuda(ScalarType dt, const void* dy, const void* x, const double* mean, double* s1,
                                     double* s2, int64_t n, int64_t c, int64_t s) {
  const Device d = device_of(x);
  DeviceGuard guard(d.index);
  raise_status(ck::batch_norm_backward_reduce(int(dt), dy, x, mean, s1, s2, n, c, s, current_cuda_stream(d.index)),
               "batch_norm_backward", d, dt);
}
void batch_norm_backward_apply_cuda(ScalarType dt, const void* dy, const void* x, const double* mean, const double* k1,
                                    const double* k2, const double* k3, void* dx, int64_t n, int64_t c, int64_t s) {
  const Device d = device_of(x);
  DeviceGuard guard(d.index);
  raise_status(ck::batch_norm_backward_apply(int(dt), dy, x, mean, k1, k2, k3, dx, n, c, s,
                                             current_cuda_stream(d.index)),
               "batch_norm_backward", d, dt);
}
void batch_norm_fold_cuda(const Tensor& mean, const Tensor& var, const Tensor& weight, const Tensor& bias, double eps,
                          const Tensor& invstd, const Tensor& scale, const Tensor& shift) {
  const Device d = mean.device();
  DeviceGuard guard(d.index);
  raise_status(ck::batch_norm_fold(ptr_of<const double>(mean), ptr_of<const double>(var), ptr_or_null<const double>(weight),
                                   ptr_or_null<const double>(bias), eps, ptr_of<double>(invstd), ptr_of<double>(scale),
                                   ptr_of<double>(shift), mean.numel(), current_cuda_stream(d.index)),
               "batch_norm", d, kDouble);
}
void batch_norm_backward_fold_cuda(const Tensor& invstd, const Tensor& weight, const Tensor& sum_dy,
                                   const Tensor& sum_dy_xmu, double count, bool training, const Tensor& k1,
                                   const Tensor& k2, const Tensor& k3) {
  const Device d = invstd.device();
  DeviceGuard guard(d.index);
  raise_status(ck::batch_norm_backward_fold(ptr_of<const double>(invstd), ptr_or_null<const double>(weight),
                                            ptr_of<const double>(sum_dy), ptr_of<const double>(sum_dy_xmu), count,
                                            training, ptr_of<double>(k1), ptr_of<double>(k2), ptr_of<double>(k3),
                                            invstd.numel(), current_cuda_stream(d.index)),
               "batch_norm_backward", d, kDouble);
}
void cum_extreme_cuda(const Tensor& vals, const Tensor& inds, const Tensor& x, bool is_max) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  const int64_t n = x.sizes().back(), rows = n ? x.numel() / n : 0;
  raise_status(ck::cum_extreme(int(x.dtype()), vals.data_ptr(), ptr_of<int64_t>(inds), x.data_ptr(), rows, n, is_max,
                               current_cuda_stream(d.index)),
               is_max ? "cummax" : "cummin", d, x.dtype());
}
void logcumsumexp_cuda(const Tensor& out, const Tensor& x) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  const int64_t n = x.sizes().back(), rows = n ? x.numel() / n : 0;
  raise_status(ck::logcumsumexp(ptr_of<double>(out), ptr_of<const double>(x), rows, n, current_cuda_stream(d.index)),
               "logcumsumexp", d, kDouble);
}
void searchsorted_cuda(const Tensor& out, const Tensor& b, const Tensor& v, const Tensor& sorter, bool right) {
  const Device d = b.device();
  DeviceGuard guard(d.index);
  raise_status(ck::searchsorted(int(b.dtype()), ptr_of<int64_t>(out), b.data_ptr(), v.data_ptr(),
                                ptr_or_null<const int64_t>(sorter), v.numel(), b.sizes().back(),
                                v.dim() ? v.sizes().back() : 1, b.dim() == 1, right, current_cuda_stream(d.index)),
               "searchsorted", d, b.dtype());
}
void scan_cuda(bool prod, ScalarType dt, const void* in, void* out, int64_t rows, int64_t n) {
  const Device d = device_of(in);
  DeviceGuard guard(d.index);
  raise_status(ck::scan(prod, int(dt), in, out, rows, n, current_cuda_stream(d.index)), prod ? "cumprod" : "cumsum", d,
               dt);
}
void arange_cuda(const Tensor& out, const Scalar& start, const Scalar& step, bool exact_integers) {
  const Device d = out.device();
  DeviceGuard guard(d.index);
  const bool is_long = out.dtype() == kLong;
  raise_status(ck::arange(out.data_ptr(), is_long, exact_integers && is_long, exact_integers ? start.to_long() : 0,
                          exact_integers ? step.to_long() : 0, start.to_double(), step.to_double(), out.numel(),
                          current_cuda_stream(d.index)),
               "arange", d, out.dtype());
}
void linspace_cuda(const Tensor& out, double start, double end) {
  const Device d = out.device();
  DeviceGuard guard(d.index);
  raise_status(ck::linspace(ptr_of<double>(out), start, end, out.numel(), current_cuda_stream(d.index)), "linspace", d,
               kDouble);
}
// Interpolation: the sparse matrix (made on the host from the sizes alone) is uploaded, and A^T, for the
// backward, is made on the host as its own CSR with each row's taps in the order the CPU's scatter adds
// them, so the GPU gathers instead of scattering: no atomics, the CPU's sums.
void resample_dim_cuda(const Tensor& y, const Tensor& x, int64_t dim, const ResampleMatrix& a, bool transpose) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  ResampleMatrix t;
  const ResampleMatrix* m = &a;
  const int64_t in = x.sizes()[dim], rows = y.sizes()[dim];
  if (transpose) {  // rows of A^T: y's dim; A's row j scatters x[j] into y[idx]
    std::vector<std::vector<std::pair<int64_t, double>>> cols(static_cast<size_t>(rows));
    for (int64_t j = 0; j + 1 < int64_t(a.start.size()); j++)
      for (int64_t k = a.start[size_t(j)]; k < a.start[size_t(j) + 1]; k++)
        cols[size_t(a.idx[size_t(k)])].push_back({j, a.w[size_t(k)]});
    t.start.push_back(0);
    for (auto& c : cols) {
      for (auto& [j, w] : c) {
        t.idx.push_back(j);
        t.w.push_back(w);
      }
      t.start.push_back(int64_t(t.idx.size()));
    }
    m = &t;
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; i++) outer *= x.sizes()[i];
  for (int64_t i = dim + 1; i < x.dim(); i++) inner *= x.sizes()[i];
  // a host vector onto the device, in dtype `to`
  auto upload = [&](const auto& v, ScalarType from, ScalarType to) {
    Tensor h = empty_tensor({int64_t(v.size())}, from, Device());
    if (!v.empty()) std::memcpy(h.data_ptr(), v.data(), v.size() * sizeof(v[0]));
    return h.to(d, to);
  };
  Tensor start = upload(m->start, kLong, kLong), idx = upload(m->idx, kLong, kLong);
  Tensor w = upload(m->w, kDouble, x.dtype());  // the taps in x's precision, as the CPU's kernel rounds them
  raise_status(ck::resample(int(x.dtype()), y.data_ptr(), x.data_ptr(), ptr_of<const int64_t>(start),
                            ptr_of<const int64_t>(idx), w.data_ptr(), outer, rows, in, inner, transpose,
                            current_cuda_stream(d.index)),
               "upsample", d, x.dtype());
}
void cdist_cuda(const Tensor& out, const Tensor& a, const Tensor& b, double p) {
  const Device d = a.device();
  DeviceGuard guard(d.index);
  raise_status(ck::cdist(int(a.dtype()), out.data_ptr(), a.data_ptr(), b.data_ptr(), a.sizes()[0], a.sizes()[1],
                         b.sizes()[1], a.sizes()[2], p, current_cuda_stream(d.index)),
               "cdist", d, a.dtype());
}
// The index tables below depend on a few numbers (or, for repeat_interleave, on the repeat counts, which
// size the output and so are read by the host anyway, as PyTorch does without output_size): the CPU's
// kernel builds them and one copy uploads them.
void tri_indices_cuda(const Tensor& out, int64_t row, int64_t col, int64_t offset, bool lower) {
  Tensor host = empty_tensor(out.sizes(), kLong, Device());
  tri_indices_stub(Device(), lower ? "tril_indices" : "triu_indices")(host, row, col, offset, lower);
  out.copy_(host);
}
void combinations_cuda(const Tensor& out, int64_t n, int64_t r, bool with_replacement) {
  Tensor host = empty_tensor(out.sizes(), kLong, Device());
  combinations_stub(Device(), "combinations")(host, n, r, with_replacement);
  out.copy_(host);
}
Tensor repeat_interleave_cuda(const Tensor& repeats, std::optional<int64_t> output_size) {
  return repeat_interleave_stub(Device(), "repeat_interleave")(repeats.to(Device()), output_size).to(repeats.device());
}
// A bad target raises the CPU's IndexError after one read of the first bad row (kernels/cpu/nn_loss.cpp).
void raise_bad_target(BadIndex& bad, const Tensor& target) {
  if (auto t = bad.value(target)) EMBER_FAIL(Index, "Target ", *t, " is out of bounds.");
}
void nll_pick_cuda(const Tensor& out, const Tensor& self, const Tensor& target, const Tensor& weight,
                   int64_t ignore_index) {
  const Device d = self.device();
  DeviceGuard guard(d.index);
  if (self.size(0) == 0) return;
  BadIndex bad(d);
  raise_status(ck::nll_pick(int(self.dtype()), out.data_ptr(), self.data_ptr(), self.strides()[0], self.strides()[1],
                            ptr_of<int64_t>(target), ptr_or_null<double>(weight),
                            self.size(0), self.size(1), ignore_index, bad.ptr(), current_cuda_stream(d.index)),
               "nll_loss", d, self.dtype());
  raise_bad_target(bad, target);
}
void nll_pick_backward_cuda(const Tensor& grad_input, const Tensor& grad_output, const Tensor& target,
                            const Tensor& weight, int64_t ignore_index) {
  const Device d = grad_input.device();
  DeviceGuard guard(d.index);
  if (grad_input.size(0) == 0) return;
  BadIndex bad(d);
  raise_status(ck::nll_pick_backward(int(grad_input.dtype()), grad_input.data_ptr(), ptr_of<double>(grad_output),
                                     ptr_of<int64_t>(target), ptr_or_null<double>(weight),
                                     grad_input.size(0), grad_input.size(1), ignore_index, bad.ptr(),
                                     current_cuda_stream(d.index)),
               "nll_loss_backward", d, grad_input.dtype());
  raise_bad_target(bad, target);
}

// ---- fused optimizer updates (optim.cu), one launch per parameter (the op hands over contiguous float /
// double tensors): param, grad, the state buffers (null when unused), the element count, the arguments
#define EMBER_FUSED_CUDA(name, op, ...)                                                              \
  do {                                                                                              \
    const Device d = param.device();                                                                \
    DeviceGuard guard(d.index);                                                                     \
    raise_status(ck::name(int(param.dtype()), param.data_ptr(), grad.data_ptr(), __VA_ARGS__, param.numel(), a, \
                          current_cuda_stream(d.index)),                                            \
                 op, d, param.dtype());                                                             \
  } while (0)
void fused_sgd_cuda(const Tensor& param, const Tensor& grad, const Tensor& buf, const FusedSgdArgs& a) {
  EMBER_FUSED_CUDA(fused_sgd, "_fused_sgd_", ptr_or_null<void>(buf));
}
void fused_adam_cuda(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v, const Tensor& vmax,
                     const FusedAdamArgs& a) {
  EMBER_FUSED_CUDA(fused_adam, "_fused_adam_", m.data_ptr(), v.data_ptr(), ptr_or_null<void>(vmax));
}
void fused_rmsprop_cuda(const Tensor& param, const Tensor& grad, const Tensor& sq, const Tensor& gavg,
                        const Tensor& buf, const FusedRmspropArgs& a) {
  EMBER_FUSED_CUDA(fused_rmsprop, "_fused_rmsprop_", sq.data_ptr(), ptr_or_null<void>(gavg), ptr_or_null<void>(buf));
}
void fused_adagrad_cuda(const Tensor& param, const Tensor& grad, const Tensor& sum, const FusedAdagradArgs& a) {
  EMBER_FUSED_CUDA(fused_adagrad, "_fused_adagrad_", sum.data_ptr());
}
void fused_adadelta_cuda(const Tensor& param, const Tensor& grad, const Tensor& sq, const Tensor& acc,
                         const FusedAdadeltaArgs& a) {
  EMBER_FUSED_CUDA(fused_adadelta, "_fused_adadelta_", sq.data_ptr(), acc.data_ptr());
}
void fused_adamax_cuda(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& u,
                       const FusedAdamaxArgs& a) {
  EMBER_FUSED_CUDA(fused_adamax, "_fused_adamax_", m.data_ptr(), u.data_ptr());
}
void fused_nadam_cuda(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                      const FusedNadamArgs& a) {
  EMBER_FUSED_CUDA(fused_nadam, "_fused_nadam_", m.data_ptr(), v.data_ptr());
}
void fused_radam_cuda(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                      const FusedRadamArgs& a) {
  EMBER_FUSED_CUDA(fused_radam, "_fused_radam_", m.data_ptr(), v.data_ptr());
}
#undef EMBER_FUSED_CUDA

// ---- LSTM / GRU (rnn.cu). A layer runs step by step on the host: each step's h_{t-1} W_hh^T on cuBLAS
// (gemm_rows), then one pointwise launch, all queued on the current stream (no sync).
void lstm_cell_cuda(ScalarType dt, const void* gates, const void* cx, void* hy, void* cy, int64_t rows, int64_t H) {
  const Device d = device_of(gates);
  DeviceGuard guard(d.index);
  raise_status(ck::lstm_cell(int(dt), gates, cx, hy, cy, rows, H, current_cuda_stream(d.index)), "_lstm_cell", d, dt);
}
void lstm_cell_backward_cuda(ScalarType dt, const void* dhy, const void* dcy, const void* gates, const void* cx,
                             const void* cy, void* dgates, void* dcx, int64_t rows, int64_t H) {
  const Device d = device_of(gates);
  DeviceGuard guard(d.index);
  raise_status(ck::lstm_cell_backward(int(dt), dhy, dcy, gates, cx, cy, dgates, dcx, rows, H,
                                      current_cuda_stream(d.index)),
               "_lstm_cell_backward", d, dt);
}
void gru_cell_cuda(ScalarType dt, const void* gi, const void* gh, const void* hx, void* hy, int64_t rows, int64_t H) {
  const Device d = device_of(gi);
  DeviceGuard guard(d.index);
  raise_status(ck::gru_cell(int(dt), gi, gh, hx, hy, rows, H, current_cuda_stream(d.index)), "_gru_cell", d, dt);
}
void gru_cell_backward_cuda(ScalarType dt, const void* dhy, const void* gi, const void* gh, const void* hx, void* dgi,
                            void* dgh, void* dhx, int64_t rows, int64_t H) {
  const Device d = device_of(gi);
  DeviceGuard guard(d.index);
  raise_status(ck::gru_cell_backward(int(dt), dhy, gi, gh, hx, dgi, dgh, dhx, rows, H, current_cuda_stream(d.index)),
               "_gru_cell_backward", d, dt);
}
// the address of step t's block of `per_step` elements
const char* at_step(const void* base, int64_t t, int64_t per_step, int64_t esz) {
  return static_cast<const char*>(base) + t * per_step * esz;
}
char* at_step(void* base, int64_t t, int64_t per_step, int64_t esz) {
  return static_cast<char*>(base) + t * per_step * esz;
}
int64_t seq_step(int64_t s, int64_t T, bool reverse) { return reverse ? T - 1 - s : s; }

void lstm_seq_cuda(ScalarType dt, void* gates, const void* w_t, const void* h0, const void* c0, void* acts, void* hs,
                   void* cs, int64_t T, int64_t B, int64_t H, bool reverse) {
  const Device d = device_of(gates);
  DeviceGuard guard(d.index);
  void* stream = current_cuda_stream(d.index);
  const int64_t G = 4 * H, esz = dt == kDouble ? 8 : 4;
  for (int64_t s = 0; s < T; s++) {
    const int64_t t = seq_step(s, T, reverse), prev = s ? seq_step(s - 1, T, reverse) : -1;
    const void* h_prev = s ? at_step(hs, prev, B * H, esz) : h0;
    const void* c_prev = s ? at_step(cs, prev, B * H, esz) : c0;
    char* g = at_step(gates, t, B * G, esz);
    gemm_rows(dt, B, G, H, 1.0, h_prev, H, w_t, G, 1.0, g, G);  // g_t += h_{t-1} W_hh^T
    raise_status(ck::lstm_step(int(dt), g, c_prev, at_step(acts, t, B * G, esz), at_step(hs, t, B * H, esz),
                               at_step(cs, t, B * H, esz), B, H, stream),
                 "_lstm_seq", d, dt);
  }
}

void lstm_seq_backward_cuda(ScalarType dt, const void* dhs, const void* dcs, const void* dacts, const void* acts,
                            const void* w_hh, const void* c0, const void* cs, void* dgates, void* dh, void* dc,
                            int64_t T, int64_t B, int64_t H, bool reverse) {
  const Device d = device_of(acts);
  DeviceGuard guard(d.index);
  void* stream = current_cuda_stream(d.index);
  const int64_t G = 4 * H, esz = dt == kDouble ? 8 : 4;
  for (int64_t s = T - 1; s >= 0; s--) {
    const int64_t t = seq_step(s, T, reverse);
    const void* c_prev = s ? at_step(cs, seq_step(s - 1, T, reverse), B * H, esz) : c0;
    char* dg = at_step(dgates, t, B * G, esz);
    raise_status(ck::lstm_step_backward(int(dt), dhs ? at_step(dhs, t, B * H, esz) : nullptr,
                                        dcs ? at_step(dcs, t, B * H, esz) : nullptr,
                                        dacts ? at_step(dacts, t, B * G, esz) : nullptr, at_step(acts, t, B * G, esz),
                                        at_step(cs, t, B * H, esz), c_prev, dg, dh, dc, B, H, stream),
                 "_lstm_seq_backward", d, dt);
    gemm_rows(dt, B, H, G, 1.0, dg, G, w_hh, H, 0.0, dh, H);  // d h_{t-1} = d gates_t W_hh
  }
}

// ---- window kernels (conv.cu), and the convolution as im2col + cuBLAS (ops/conv.h's composites: the
// same device-independent path the CPU takes where oneDNN does not; cuDNN is the next step)
void im2col_cuda(const Tensor& cols, const Tensor& x, const WindowGeometry& g) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  raise_status(ck::im2col(int(x.dtype()), x.data_ptr(), cols.data_ptr(), x.size(0) * x.size(1), g,
                          current_cuda_stream(d.index)),
               "im2col", d, x.dtype());
}
void col2im_cuda(const Tensor& x, const Tensor& cols, const WindowGeometry& g) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  raise_status(ck::col2im(int(x.dtype()), cols.data_ptr(), x.data_ptr(), x.size(0) * x.size(1), g,
                          current_cuda_stream(d.index)),
               "col2im", d, x.dtype());
}
void max_pool_cuda(const Tensor& vals, const Tensor& idx, const Tensor& x, const WindowGeometry& g) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  raise_status(ck::max_pool(int(x.dtype()), x.data_ptr(), vals.data_ptr(), ptr_of<int64_t>(idx),
                            x.size(0) * x.size(1), g, current_cuda_stream(d.index)),
               "max_pool", d, x.dtype());
}
void max_pool_backward_cuda(const Tensor& gi, const Tensor& g, const Tensor& idx) {
  const Device d = gi.device();
  DeviceGuard guard(d.index);
  const int64_t planes = gi.size(0) * gi.size(1);
  if (planes == 0 || g.numel() == 0) return;
  const int64_t in_plane = gi.numel() / planes, out_plane = g.numel() / planes;
  if (deterministic_algorithms()) {
    // PyTorch's CUDA max-pool backward gives the same bits every run; this kernel adds with float atomics,
    // whose order varies when three or more windows pick one input (stride < kernel). Deterministic mode
    // sums through index_put_'s sorted accumulation instead (each input's gradients in window order).
    Tensor rows = idx.reshape({planes, out_plane});
    const int64_t lo = ember::min(rows).item().to_long(), hi = ember::max(rows).item().to_long();
    EMBER_CHECK_KIND(lo >= 0 && hi < in_plane, Index, "max_pool_with_indices_backward: an index is out of bounds for "
                     "a plane of ", in_plane, " elements");
    Tensor offsets = ember::unsqueeze(ember::arange(Scalar(planes), TensorOptions(kLong).device(d)), 1);
    Tensor lin = ember::add(rows, offsets, Scalar(in_plane)).reshape({-1});  // rows + plane * in_plane
    index_put_rows_cuda(gi.reshape({-1}), g.reshape({-1}), lin, 1, true);
    return;
  }
  BadIndex bad(d);
  raise_status(ck::max_pool_backward(int(gi.dtype()), gi.data_ptr(), g.data_ptr(), ptr_of<int64_t>(idx), g.numel(),
                                     in_plane, out_plane, bad.ptr(), current_cuda_stream(d.index)),
               "max_pool_with_indices_backward", d, gi.dtype());
  EMBER_CHECK_KIND(!bad.value(idx), Index, "max_pool_with_indices_backward: an index is out of bounds for a plane of ",
                   in_plane, " elements");
}
void adaptive_max_pool_cuda(const Tensor& vals, const Tensor& idx, const Tensor& x) {
  const Device d = x.device();
  DeviceGuard guard(d.index);
  const int64_t ns = x.dim() - 2;
  ck::AdaptiveWindow w{{1, 1, 1}, {1, 1, 1}};
  for (int64_t i = 0; i < ns; i++) {
    w.in[3 - ns + i] = x.sizes()[2 + i];
    w.out[3 - ns + i] = vals.sizes()[2 + i];
  }
  raise_status(ck::adaptive_max_pool(int(x.dtype()), x.data_ptr(), vals.data_ptr(), ptr_of<int64_t>(idx),
                                     x.size(0) * x.size(1), w, current_cuda_stream(d.index)),
               "adaptive_max_pool", d, x.dtype());
}
Tensor convolution_cuda(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                        IntArrayRef out_spatial) {
  Tensor out;
  if (cudnn_convolution(out, input, weight, bias, p, out_spatial)) return out;
  return conv_forward_composite(input, weight, bias, p, out_spatial);
}
ConvGrads convolution_backward_cuda(const Tensor& grad, const Tensor& input, const Tensor& weight, bool has_bias,
                                   const ConvParams& p, ConvMask mask) {
  ConvGrads out;
  if (cudnn_convolution_backward(out, grad, input, weight, has_bias, p, mask)) return out;
  return conv_backward_composite(grad, input, weight, has_bias, p, mask);
}
// embedding's index check: [min, max] reduced on the device, one read of two values
IndexRange index_range_cuda(const Tensor& indices) {
  DeviceGuard guard(indices.device().index);
  Tensor flat = indices.reshape({-1}).to(kLong);
  Tensor both = ember::stack({ember::min(flat), ember::max(flat)}, 0).to(Device());
  return {both.select(0, 0).item().to_long(), both.select(0, 1).item().to_long()};
}
// embedding_bag's plan (sizes the outputs depend on): made by the CPU's entry from host copies of the indices
// and offsets (one device-to-host read, as the op's output shapes need), its tensors moved to the device
EmbeddingBagPlan embedding_bag_plan_cuda(const Tensor& indices, const Tensor& offsets, int64_t num, int64_t pad,
                                         bool include_last_offset, bool with_slots) {
  EmbeddingBagPlan p = embedding_bag_plan_stub(Device())(indices.to(Device()), offsets.to(Device()), num, pad,
                                                         include_last_offset, with_slots);
  for (Tensor* t : {&p.keep, &p.keep_bag, &p.keep_slot, &p.offset2bag, &p.bag_size})
    if (t->defined()) *t = t->to(indices.device());
  return p;
}
// Index tables of a few entries per dim, computed by the CPU's entry and copied over.
void pad_source_index_cuda(const Tensor& index, int64_t n, int64_t lo, PadMode mode) {
  Tensor host = empty_tensor(index.sizes(), kLong, Device());
  pad_source_index_stub(Device())(host, n, lo, mode);
  index.copy_(host);
}

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
EMBER_REGISTER_KERNEL(exponential_stub, CUDA, &::ember::cuda::exponential_cuda);
EMBER_REGISTER_KERNEL(bernoulli_stub, CUDA, &::ember::cuda::bernoulli_cuda);
EMBER_REGISTER_KERNEL(random_stub, CUDA, &::ember::cuda::random_cuda);
EMBER_REGISTER_KERNEL(nonzero_stub, CUDA, &::ember::cuda::nonzero_cuda);
EMBER_REGISTER_KERNEL(index_linearize_stub, CUDA, &::ember::cuda::index_linearize_cuda);
EMBER_REGISTER_KERNEL(index_rows_stub, CUDA, &::ember::cuda::index_rows_cuda);
EMBER_REGISTER_KERNEL(index_put_rows_stub, CUDA, &::ember::cuda::index_put_rows_cuda);
EMBER_REGISTER_KERNEL(multinomial_stub, CUDA, &::ember::cuda::multinomial_cuda);
EMBER_REGISTER_KERNEL(gather_stub, CUDA, &::ember::cuda::gather_cuda);
EMBER_REGISTER_KERNEL(scatter_stub, CUDA, &::ember::cuda::scatter_cuda);
EMBER_REGISTER_KERNEL(scatter_reduce_stub, CUDA, &::ember::cuda::scatter_reduce_cuda);
EMBER_REGISTER_KERNEL(sort_stub, CUDA, &::ember::cuda::sort_cuda);
EMBER_REGISTER_KERNEL(topk_stub, CUDA, &::ember::cuda::topk_cuda);
EMBER_REGISTER_KERNEL(randperm_stub, CUDA, &::ember::cuda::randperm_cuda);
EMBER_REGISTER_KERNEL(softmax_kernel_stub, CUDA, &::ember::cuda::softmax_cuda);
EMBER_REGISTER_KERNEL(softmax_backward_kernel_stub, CUDA, &::ember::cuda::softmax_backward_cuda);
EMBER_REGISTER_KERNEL(layer_norm_kernel_stub, CUDA, &::ember::cuda::layer_norm_cuda);
EMBER_REGISTER_KERNEL(layer_norm_backward_kernel_stub, CUDA, &::ember::cuda::layer_norm_backward_cuda);
EMBER_REGISTER_KERNEL(batch_norm_stats_kernel_stub, CUDA, &::ember::cuda::batch_norm_stats_cuda);
EMBER_REGISTER_KERNEL(batch_norm_apply_kernel_stub, CUDA, &::ember::cuda::batch_norm_apply_cuda);
EMBER_REGISTER_KERNEL(batch_norm_backward_reduce_kernel_stub, CUDA, &::ember::cuda::batch_norm_backward_reduce_cuda);
EMBER_REGISTER_KERNEL(batch_norm_backward_apply_kernel_stub, CUDA, &::ember::cuda::batch_norm_backward_apply_cuda);
EMBER_REGISTER_KERNEL(batch_norm_fold_stub, CUDA, &::ember::cuda::batch_norm_fold_cuda);
EMBER_REGISTER_KERNEL(batch_norm_backward_fold_stub, CUDA, &::ember::cuda::batch_norm_backward_fold_cuda);
EMBER_REGISTER_KERNEL(nll_pick_stub, CUDA, &::ember::cuda::nll_pick_cuda);
EMBER_REGISTER_KERNEL(cum_extreme_stub, CUDA, &::ember::cuda::cum_extreme_cuda);
EMBER_REGISTER_KERNEL(logcumsumexp_stub, CUDA, &::ember::cuda::logcumsumexp_cuda);
EMBER_REGISTER_KERNEL(searchsorted_stub, CUDA, &::ember::cuda::searchsorted_cuda);
EMBER_REGISTER_KERNEL(scan_kernel_stub, CUDA, &::ember::cuda::scan_cuda);
EMBER_REGISTER_KERNEL(arange_stub, CUDA, &::ember::cuda::arange_cuda);
EMBER_REGISTER_KERNEL(linspace_stub, CUDA, &::ember::cuda::linspace_cuda);
EMBER_REGISTER_KERNEL(tri_indices_stub, CUDA, &::ember::cuda::tri_indices_cuda);
EMBER_REGISTER_KERNEL(combinations_stub, CUDA, &::ember::cuda::combinations_cuda);
EMBER_REGISTER_KERNEL(repeat_interleave_stub, CUDA, &::ember::cuda::repeat_interleave_cuda);
EMBER_REGISTER_KERNEL(resample_dim_stub, CUDA, &::ember::cuda::resample_dim_cuda);
EMBER_REGISTER_KERNEL(cdist_stub, CUDA, &::ember::cuda::cdist_cuda);
EMBER_REGISTER_KERNEL(nll_pick_backward_stub, CUDA, &::ember::cuda::nll_pick_backward_cuda);
EMBER_REGISTER_KERNEL(fused_sgd_stub, CUDA, &::ember::cuda::fused_sgd_cuda);
EMBER_REGISTER_KERNEL(fused_adam_stub, CUDA, &::ember::cuda::fused_adam_cuda);
EMBER_REGISTER_KERNEL(fused_rmsprop_stub, CUDA, &::ember::cuda::fused_rmsprop_cuda);
EMBER_REGISTER_KERNEL(fused_adagrad_stub, CUDA, &::ember::cuda::fused_adagrad_cuda);
EMBER_REGISTER_KERNEL(fused_adadelta_stub, CUDA, &::ember::cuda::fused_adadelta_cuda);
EMBER_REGISTER_KERNEL(fused_adamax_stub, CUDA, &::ember::cuda::fused_adamax_cuda);
EMBER_REGISTER_KERNEL(fused_nadam_stub, CUDA, &::ember::cuda::fused_nadam_cuda);
EMBER_REGISTER_KERNEL(fused_radam_stub, CUDA, &::ember::cuda::fused_radam_cuda);
EMBER_REGISTER_KERNEL(lstm_cell_kernel_stub, CUDA, &::ember::cuda::lstm_cell_cuda);
EMBER_REGISTER_KERNEL(lstm_cell_backward_kernel_stub, CUDA, &::ember::cuda::lstm_cell_backward_cuda);
EMBER_REGISTER_KERNEL(gru_cell_kernel_stub, CUDA, &::ember::cuda::gru_cell_cuda);
EMBER_REGISTER_KERNEL(gru_cell_backward_kernel_stub, CUDA, &::ember::cuda::gru_cell_backward_cuda);
EMBER_REGISTER_KERNEL(lstm_seq_kernel_stub, CUDA, &::ember::cuda::lstm_seq_cuda);
EMBER_REGISTER_KERNEL(lstm_seq_backward_kernel_stub, CUDA, &::ember::cuda::lstm_seq_backward_cuda);
EMBER_REGISTER_KERNEL(im2col_stub, CUDA, &::ember::cuda::im2col_cuda);
EMBER_REGISTER_KERNEL(col2im_stub, CUDA, &::ember::cuda::col2im_cuda);
EMBER_REGISTER_KERNEL(max_pool_stub, CUDA, &::ember::cuda::max_pool_cuda);
EMBER_REGISTER_KERNEL(max_pool_backward_stub, CUDA, &::ember::cuda::max_pool_backward_cuda);
EMBER_REGISTER_KERNEL(adaptive_max_pool_stub, CUDA, &::ember::cuda::adaptive_max_pool_cuda);
EMBER_REGISTER_KERNEL(convolution_stub, CUDA, &::ember::cuda::convolution_cuda);
EMBER_REGISTER_KERNEL(convolution_backward_stub, CUDA, &::ember::cuda::convolution_backward_cuda);
EMBER_REGISTER_KERNEL(index_range_stub, CUDA, &::ember::cuda::index_range_cuda);
EMBER_REGISTER_KERNEL(embedding_bag_plan_stub, CUDA, &::ember::cuda::embedding_bag_plan_cuda);
EMBER_REGISTER_KERNEL(pad_source_index_stub, CUDA, &::ember::cuda::pad_source_index_cuda);
