#pragma once
// Entry points of the CPU kernels (each compiled per ISA; see dispatch.h).
#include "ember/core/scalar.h"
#include "ember/generated/kernels.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/dispatch.h"

namespace ember {

// Extra parameters an elementwise functor reads (alpha, clamp bounds, nan_to_num values, ...).
struct KernelArgs {
  Scalar s0, s1, s2;
  const char* name = "op";
};

enum class TernaryKernel { Clamp, Lerp, Where };

// Reductions over a contiguous [outer, reduced, inner] block into [outer, inner]. SumSquares (the 2-norm's
// sum of squares in one pass) is the CPU's, float and double only.
enum class ReduceKernel { Sum, Prod, Max, Min, ArgMax, ArgMin, All, Any, SumSquares };
struct ReduceShape {
  int64_t outer, reduced, inner;
};

}  // namespace ember

EMBER_DECLARE_KERNEL(void, unary_kernel, (::ember::UnaryKernel, ::ember::TensorIter&, const ::ember::KernelArgs&))
EMBER_DECLARE_KERNEL(void, binary_kernel, (::ember::BinaryKernel, ::ember::TensorIter&, const ::ember::KernelArgs&))
EMBER_DECLARE_KERNEL(void, ternary_kernel, (::ember::TernaryKernel, ::ember::TensorIter&, const ::ember::KernelArgs&))
EMBER_DECLARE_KERNEL(void, copy_kernel, (::ember::TensorIter&))
EMBER_DECLARE_KERNEL(void, fill_kernel, (::ember::TensorIter&, const ::ember::Scalar&))
// n contiguous half/bfloat16 values (dt) widened to float (to_float), or n floats rounded to dt
EMBER_DECLARE_KERNEL(void, reduced_float_convert_kernel, (::ember::ScalarType dt, bool to_float, const void* src,
                                                          void* dst, int64_t n))
// dst[b][r][c] = src[b][c][r] for B contiguous [C, R] sources into [R, C] destinations
EMBER_DECLARE_KERNEL(void, transpose_copy_kernel, (int64_t itemsize, const void* src, void* dst, int64_t B, int64_t R, int64_t C))
// uint8 resampling along the middle dim of a contiguous [in, lanes] block into [rows, lanes]: output row j
// sums the input rows idx[start[j]:start[j+1]] times the fixed-point weights w16 (ops/interp.cpp)
EMBER_DECLARE_KERNEL(void, resample_u8_kernel, (const uint8_t* x, uint8_t* y, int64_t lanes, const int64_t* start,
                                                const int64_t* idx, const int16_t* w16, int64_t rows, int precision))
// the same for float (dt kFloat: x, y, w float) or double (kDouble): taps summed in order, first to last;
// with adjoint, y += A^T x instead (x has `rows` rows, y the columns idx names; the caller zeroes y)
EMBER_DECLARE_KERNEL(void, resample_float_kernel, (::ember::ScalarType dt, const void* x, void* y, int64_t lanes,
                                                   const int64_t* start, const int64_t* idx, const void* w,
                                                   int64_t rows, bool adjoint))
// values: [outer, inner] of dtype; indices: int64 [outer, inner] for ArgMax/ArgMin/Max/Min (may be null)
EMBER_DECLARE_KERNEL(void, reduce_kernel,
                     (::ember::ReduceKernel, ::ember::ScalarType, const void* in, void* values, int64_t* indices,
                      ::ember::ReduceShape))
// softmax / log_softmax over the middle dim of a contiguous [outer, dim, inner] block, and backward.
EMBER_DECLARE_KERNEL(void, softmax_kernel, (bool log, ::ember::ScalarType, const void* in, void* out, int64_t outer,
                                            int64_t dim, int64_t inner))
EMBER_DECLARE_KERNEL(void, softmax_backward_kernel, (bool log, ::ember::ScalarType, const void* grad, const void* out,
                                                     void* grad_in, int64_t outer, int64_t dim, int64_t inner))
// Layer norm over contiguous rows [rows, cols]: y, mean and rstd per row; and its backward.
EMBER_DECLARE_KERNEL(void, layer_norm_kernel, (::ember::ScalarType, const void* x, const void* w, const void* b,
                                               void* y, void* mean, void* rstd, int64_t rows, int64_t cols, double eps))
EMBER_DECLARE_KERNEL(void, layer_norm_backward_kernel, (::ember::ScalarType, const void* dy, const void* x,
                                                        const void* mean, const void* rstd, const void* w, void* dx,
                                                        void* dw, void* db, int64_t rows, int64_t cols))
// Batch norm statistics per channel of a contiguous [N, C, S] block (mean and biased var).
EMBER_DECLARE_KERNEL(void, batch_norm_stats_kernel, (::ember::ScalarType, const void* x, double* mean, double* var,
                                                     int64_t n, int64_t c, int64_t s))
// y = (x - mean) * invstd * w + b per channel; scale/shift already folded into a and b: y = x * a + b.
EMBER_DECLARE_KERNEL(void, batch_norm_apply_kernel, (::ember::ScalarType, const void* x, const double* a,
                                                     const double* b, void* y, int64_t n, int64_t c, int64_t s))
// Per channel: sum(dy) and sum(dy * (x - mean)).
EMBER_DECLARE_KERNEL(void, batch_norm_backward_reduce_kernel, (::ember::ScalarType, const void* dy, const void* x,
                                                               const double* mean, double* sum_dy, double* sum_dy_xmu,
                                                               int64_t n, int64_t c, int64_t s))
// dx = dy * k1 + (x - mean) * k2 + k3 per channel.
EMBER_DECLARE_KERNEL(void, batch_norm_backward_apply_kernel, (::ember::ScalarType, const void* dy, const void* x,
                                                              const double* mean, const double* k1, const double* k2,
                                                              const double* k3, void* dx, int64_t n, int64_t c,
                                                              int64_t s))
// Inclusive scan along the contiguous last axis of [rows, n]: cumsum (prod=false) or cumprod.
EMBER_DECLARE_KERNEL(void, scan_kernel, (bool prod, ::ember::ScalarType, const void* in, void* out, int64_t rows, int64_t n))
// Fused LSTM / GRU cell pointwise math over contiguous rows (gates [rows, 4H] / [rows, 3H], states [rows, H]);
// backward pointers dhy / dcy may be null (zero), dcx / dhx null when not wanted.
EMBER_DECLARE_KERNEL(void, lstm_cell_kernel, (::ember::ScalarType, const void* gates, const void* cx, void* hy,
                                              void* cy, int64_t rows, int64_t H))
EMBER_DECLARE_KERNEL(void, lstm_cell_backward_kernel, (::ember::ScalarType, const void* dhy, const void* dcy,
                                                       const void* gates, const void* cx, const void* cy,
                                                       void* dgates, void* dcx, int64_t rows, int64_t H))
// Whole LSTM layer direction (ops/nn_rnn.cpp _lstm_seq). Forward: gates [T, B, 4H] holds x W_ih^T + b on
// entry and the pre-activations on return, acts [T, B, 4H] gets the activations (sigmoid i, f, o; tanh g); w_t = W_hh^T contiguous [H, 4H]. Backward: dh / dc [B, H] start
// at zero and end as d h0 / d c0; dhs / dcs / dacts may be null.
EMBER_DECLARE_KERNEL(void, lstm_seq_kernel, (::ember::ScalarType, void* gates, const void* w_t, const void* h0,
                                             const void* c0, void* acts, void* hs, void* cs, int64_t T, int64_t B,
                                             int64_t H, bool reverse))
EMBER_DECLARE_KERNEL(void, lstm_seq_backward_kernel, (::ember::ScalarType, const void* dhs, const void* dcs,
                                                      const void* dacts, const void* acts, const void* w_hh,
                                                      const void* c0, const void* cs, void* dgates, void* dh, void* dc,
                                                      int64_t T, int64_t B, int64_t H, bool reverse))
EMBER_DECLARE_KERNEL(void, gru_cell_kernel, (::ember::ScalarType, const void* gi, const void* gh, const void* hx,
                                             void* hy, int64_t rows, int64_t H))
EMBER_DECLARE_KERNEL(void, gru_cell_backward_kernel, (::ember::ScalarType, const void* dhy, const void* gi,
                                                      const void* gh, const void* hx, void* dgi, void* dgh,
                                                      void* dhx, int64_t rows, int64_t H))
