#pragma once
// The seam between the two halves of the CUDA kernels. register.cpp (host compiler) knows TensorIter
// and the kernel stubs; it flattens an op's operands into these plain structs and calls the
// launchers below, defined in the .cu files, which nvcc compiles without seeing any core header.
// Launchers queue work on `stream` and return a Status; they never throw (exceptions do not cross
// into device code) and never synchronize.
#include <cstdint>

#include "ember/kernels/optim_args.h"
#include "ember/kernels/window_geometry.h"

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
  kTooLarge = 4,  // a size beyond what one launch's grid can cover (RuntimeError)
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

// ---- Indexing and scatter/gather (kernels/indexing.h, kernels/scatter.h). A kernel that meets an
// index out of range writes nothing for it and lowers `*bad` (int64, set to INT64_MAX by the caller)
// to that element's position; the host reads it back after the launch and raises the CPU's error
// naming the first bad index. Strides are in elements.

// nonzero of a contiguous bool mask of n elements, in two launches around a host read of the count:
// nonzero_count writes each block's count of true elements and their exclusive prefix sums (scratch:
// nonzero_scratch_bytes), nonzero_write the coordinates of the true elements, row-major, into
// out [count, nd].
int64_t nonzero_blocks(int64_t n);
int64_t nonzero_scratch_bytes(int64_t blocks);
Status nonzero_count(const bool* mask, int64_t n, int64_t* counts, int64_t* offsets, void* scratch,
                     int64_t scratch_bytes, void* stream);
struct Shape {
  int nd = 0;
  int64_t sizes[kMaxDims] = {};
};
Status nonzero_write(const bool* mask, int64_t n, const int64_t* offsets, const Shape& shape, int64_t* out,
                     void* stream);
// lin[i] = (accumulate ? lin[i] : 0) + wrap(index[i]) * stride for index[i] in [-size, size)
Status index_linearize(int64_t* lin, const int64_t* index, int64_t n, int64_t size, int64_t stride, bool accumulate,
                       int64_t* bad, void* stream);
// out row i = src row lin[i] (rows of row_bytes bytes)
Status index_rows(void* out, const void* src, const int64_t* lin, int64_t rows, int64_t row_elems, int64_t itemsize,
                  void* stream);
// dst row lin[i] = (or += when accumulate) values row i, in dtype
Status index_put_rows(void* dst, const void* values, const int64_t* lin, int64_t rows, int64_t row_elems, int dtype,
                      bool accumulate, void* stream);
// index_put_rows with accumulate, deterministic: keys = lin sorted stably, perm = its permutation (the
// rows' order within a run), each run summed in that order without atomics
Status index_put_rows_sorted(void* dst, const void* values, const int64_t* keys, const int64_t* perm, int64_t rows,
                             int64_t row_elems, int dtype, void* stream);

// gather/scatter along `dim`: one thread per element of `index` (nd dims of `sizes`), reading the
// self / src / index strides given; self's size along dim bounds the index.
struct ScatterGeom {
  int nd = 0;
  int dim = 0;
  int64_t dim_size = 1;    // self.size(dim) (1 for a 0-d self)
  int64_t dim_stride = 0;  // self.stride(dim) (0 for a 0-d self)
  int64_t sizes[kMaxDims] = {};
  int64_t index_strides[kMaxDims] = {};
  int64_t self_strides[kMaxDims] = {};  // 0 at dim
  int64_t src_strides[kMaxDims] = {};   // all 0 for a 0-d src
};
enum ScatterOp : int { kScatterSet, kScatterAdd };
// out (contiguous, index's shape) = self gathered
Status gather(void* out, const void* self, const int64_t* index, const ScatterGeom& g, int64_t numel, int64_t itemsize,
              int64_t* bad, void* stream);
Status scatter(void* self, const void* src, const int64_t* index, const ScatterGeom& g, int64_t numel, int dtype, int op,
               int64_t* bad, void* stream);
// ScatterReduce's codes (kernels/scatter.h).
enum ScatterReduceCode : int { kSRSum, kSRProd, kSRMean, kSRAmax, kSRAmin };
// scatter_reduce into contiguous `work` (dtype, no 16-bit floats); counts: int64 [work_numel], set to
// include_self by the caller, for mean
Status scatter_reduce(void* work, const void* src, const int64_t* index, const ScatterGeom& g, int64_t numel,
                      int64_t work_numel, int dtype, int reduce, bool include_self, int64_t* counts, int64_t* bad,
                      void* stream);

// Stable sort of each row of a contiguous [rows, n] block (sort_stub's order: NaN last ascending, first
// descending): values/indices [rows, k] get the first k of each sorted row; sorted_idx is int64
// [rows, n] device scratch for the full permutation, scratch holds sort_scratch_bytes(rows, n) bytes.
int64_t sort_scratch_bytes(int64_t rows, int64_t n);
Status sort_rows(int dtype, const void* x, int64_t rows, int64_t n, int64_t k, bool descending, void* values,
                 int64_t* indices, int64_t* sorted_idx, void* scratch, int64_t scratch_bytes, void* stream);

// multinomial over rows of float64 weights p [rows, cats] -> out int64 [rows, ns], the CPU's draws; scratch
// [rows, cats] doubles without replacement (else unused); bad: one int64 holding INT64_MAX, lowered to
// row * 4 + code at a bad row (1 a weight not finite or < 0, 2 a sum <= 0, 3 too few categories left)
Status multinomial(const double* p, int64_t* out, double* scratch, int64_t rows, int64_t cats, int64_t ns,
                   bool replacement, uint64_t key, uint64_t first, int64_t* bad, void* stream);
// integers in [from, from + range) (random_, randint), two per Philox counter as the CPU's; out int64 [n]
Status random_int(int64_t* out, int64_t n, int64_t from, uint64_t range, uint64_t key, uint64_t first, void* stream);

// ---- NN kernels (nn.cu) on contiguous float / double buffers (the ops compute 16-bit floats in
// float32): kernels/kernels.h's softmax and layer norm entries, with the same arguments
Status softmax(bool log, int dtype, const void* in, void* out, int64_t outer, int64_t dim, int64_t inner, void* stream);
Status softmax_backward(bool log, int dtype, const void* grad, const void* out, void* grad_in, int64_t outer,
                        int64_t dim, int64_t inner, void* stream);
Status layer_norm(int dtype, const void* x, const void* w, const void* b, void* y, void* mean, void* rstd,
                  int64_t rows, int64_t cols, double eps, void* stream);
Status layer_norm_backward(int dtype, const void* dy, const void* x, const void* mean, const void* rstd,
                           const void* w, void* dx, void* dw, void* db, int64_t rows, int64_t cols, void* stream);
// batch norm (kernels/kernels.h's batch_norm_*_kernel and kernels/nn_norm.h's folds, same arguments)
Status batch_norm_stats(int dtype, const void* x, double* mean, double* var, int64_t n, int64_t c, int64_t s,
                        void* stream);
Status batch_norm_apply(int dtype, const void* x, const double* a, const double* b, void* y, int64_t n, int64_t c,
                        int64_t s, void* stream);
Status batch_norm_backward_reduce(int dtype, const void* dy, const void* x, const double* mean, double* sum_dy,
                                  double* sum_dy_xmu, int64_t n, int64_t c, int64_t s, void* stream);
Status batch_norm_backward_apply(int dtype, const void* dy, const void* x, const double* mean, const double* k1,
                                 const double* k2, const double* k3, void* dx, int64_t n, int64_t c, int64_t s,
                                 void* stream);
Status batch_norm_fold(const double* mean, const double* var, const double* w, const double* b, double eps,
                       double* invstd, double* scale, double* shift, int64_t c, void* stream);
Status batch_norm_backward_fold(const double* invstd, const double* w, const double* sum_dy, const double* sum_dy_xmu,
                                double count, bool training, double* k1, double* k2, double* k3, int64_t c,
                                void* stream);
// nll_loss (kernels/nn_loss.h): out[i] = -w[t_i] * self[i * rs + t_i * cs] for self [R, C] of a float dtype
// (16-bit ones included) and out contiguous in that dtype; grad_input [i, t_i] = -w[t_i] * g[i] into a
// zero-filled contiguous [R, C]. weight: float64 [C] or null; rows whose target is `ignore` are skipped;
// a target outside [0, C) lowers *bad to its row.
Status nll_pick(int dtype, void* out, const void* self, int64_t rs, int64_t cs, const int64_t* target,
                const double* weight, int64_t R, int64_t C, int64_t ignore, int64_t* bad, void* stream);
Status nll_pick_backward(int dtype, void* grad_input, const double* g, const int64_t* target, const double* weight,
                         int64_t R, int64_t C, int64_t ignore, int64_t* bad, void* stream);

// ---- walks along rows (scan.cu): scans without a parallel kernel (kernels/cumulative.h) of contiguous
// [rows, n] blocks
Status cum_extreme(int dtype, void* vals, int64_t* inds, const void* x, int64_t rows, int64_t n, bool is_max,
                   void* stream);
Status logcumsumexp(double* out, const double* x, int64_t rows, int64_t n, void* stream);
// cumsum/cumprod (kernels.h's scan_kernel) of float, double or int64 [rows, n]
Status scan(bool prod, int dtype, const void* in, void* out, int64_t rows, int64_t n, void* stream);
// the range factories (kernels/creation.h): arange into int64 (is_long) or double, linspace into double
Status arange(void* out, bool is_long, bool exact, int64_t istart, int64_t istep, double start, double step,
              int64_t n, void* stream);
Status linspace(double* out, double start, double end, int64_t steps, void* stream);
// interpolation (kernels/interp.h): y [outer, rows, inner] = A x for x [outer, in, inner] of float or double,
// A [rows, in] in CSR form (start [rows + 1], idx, w in x's dtype); a zero-tap row gives 0; from_zero: each
// sum starts at +0 (the adjoint's, which the CPU adds into zeros) rather than at its first term
// cdist's direct form (kernels/distance.h): out [nb, r1, r2] from contiguous a [nb, r1, c], b [nb, r2, c]
Status cdist(int dtype, void* out, const void* a, const void* b, int64_t nb, int64_t r1, int64_t r2, int64_t c,
             double p, void* stream);
Status resample(int dtype, void* y, const void* x, const int64_t* start, const int64_t* idx, const void* w,
                int64_t outer, int64_t rows, int64_t in, int64_t inner, bool from_zero, void* stream);
// searchsorted (kernels/search.h): out[i] = the insertion point of v[i] in its row (row i / per_row, or
// the only one) of b [rows, m], read through sorter when it is not null
Status searchsorted(int dtype, int64_t* out, const void* b, const void* v, const int64_t* sorter, int64_t nv,
                    int64_t m, int64_t per_row, bool one_row, bool right, void* stream);

// ---- fused optimizer updates (optim.cu) of contiguous float / double tensors (kernels/optim.h's
// arguments); buf / vmax may be null (no momentum / no amsgrad)
Status fused_sgd(int dtype, void* p, const void* g, void* buf, int64_t n, const ::ember::FusedSgdArgs& a, void* stream);
Status fused_adam(int dtype, void* p, const void* g, void* m, void* v, void* vmax, int64_t n, const ::ember::FusedAdamArgs& a,
                  void* stream);
// gavg / buf may be null (not centered / no momentum)
Status fused_rmsprop(int dtype, void* p, const void* g, void* sq, void* gavg, void* buf, int64_t n,
                     const ::ember::FusedRmspropArgs& a, void* stream);
Status fused_adagrad(int dtype, void* p, const void* g, void* sum, int64_t n, const ::ember::FusedAdagradArgs& a,
                     void* stream);
Status fused_adadelta(int dtype, void* p, const void* g, void* sq, void* acc, int64_t n,
                      const ::ember::FusedAdadeltaArgs& a, void* stream);
Status fused_adamax(int dtype, void* p, const void* g, void* m, void* u, int64_t n, const ::ember::FusedAdamaxArgs& a,
                    void* stream);
Status fused_nadam(int dtype, void* p, const void* g, void* m, void* v, int64_t n, const ::ember::FusedNadamArgs& a,
                   void* stream);
Status fused_radam(int dtype, void* p, const void* g, void* m, void* v, int64_t n, const ::ember::FusedRadamArgs& a,
                   void* stream);

// ---- window kernels (conv.cu), of a WindowGeometry (3 dims, leading unit dims), over `planes` = N * C
// contiguous planes. im2col: cols [planes, prod(k), prod(out)] <- x [planes, *in], any real dtype;
// col2im: x (zero-filled) += cols' blocks; max_pool: vals / idx [planes, *out] (idx the flat position in
// the plane); max_pool_backward: gi [planes, in_plane] += g at idx, float / double; an index outside its
// plane lowers *bad to the element's position.
using Window = ::ember::WindowGeometry;
Status im2col(int dtype, const void* x, void* cols, int64_t planes, const Window& g, void* stream);
Status col2im(int dtype, const void* cols, void* x, int64_t planes, const Window& g, void* stream);
Status max_pool(int dtype, const void* x, void* vals, int64_t* idx, int64_t planes, const Window& g, void* stream);
Status max_pool_backward(int dtype, void* gi, const void* g, const int64_t* idx, int64_t total, int64_t in_plane,
                         int64_t out_plane, int64_t* bad, void* stream);
// adaptive max pooling of x [planes, *in] into vals / idx [planes, *out] (3 dims, leading ones), float / double
struct AdaptiveWindow {
  int64_t in[3], out[3];
};
Status adaptive_max_pool(int dtype, const void* x, void* vals, int64_t* idx, int64_t planes, const AdaptiveWindow& w,
                         void* stream);

// ---- LSTM / GRU (rnn.cu) over contiguous float / double rows: the cells (kernels/kernels.h's entries,
// same arguments), and one step t of an LSTM layer: acts_t, h_t, c_t from the pre-activations g_t [B, 4H] and
// c_{t-1}; and of its backward: dh += dhs_t, dc += dcs_t (either may be null), d gates_t into dg, dc becomes
// d c_{t-1} (dgin: the gradients of the activations, may be null)
Status lstm_cell(int dtype, const void* gates, const void* cx, void* hy, void* cy, int64_t rows, int64_t H,
                 void* stream);
Status lstm_cell_backward(int dtype, const void* dhy, const void* dcy, const void* gates, const void* cx,
                          const void* cy, void* dgates, void* dcx, int64_t rows, int64_t H, void* stream);
Status lstm_step(int dtype, const void* g, const void* c0, void* acts, void* hy, void* cy, int64_t B, int64_t H,
                 void* stream);
Status lstm_step_backward(int dtype, const void* dhs, const void* dcs, const void* dgin, const void* acts,
                          const void* c_t, const void* c_prev, void* dg, void* dh, void* dc, int64_t B, int64_t H,
                          void* stream);
Status gru_cell(int dtype, const void* gi, const void* gh, const void* hx, void* hy, int64_t rows, int64_t H,
                void* stream);
Status gru_cell_backward(int dtype, const void* dhy, const void* gi, const void* gh, const void* hx, void* dgi,
                         void* dgh, void* dhx, int64_t rows, int64_t H, void* stream);

}  // namespace ember::cuda_kernels
