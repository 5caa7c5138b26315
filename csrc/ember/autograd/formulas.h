#pragma once
// Helpers named by the `grad:` formulas in ops.yaml. Each is written with differentiable ember
// ops, so gradients of gradients (create_graph=True) come for free.
#include <array>
#include <optional>
#include <tuple>
#include <string_view>
#include <vector>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/core/operators.h"

namespace ember::autograd {

std::vector<SavedVariable> save_list(const std::vector<Tensor>& ts);
std::vector<Tensor> unpack_list(const std::vector<SavedVariable>& vs, const std::shared_ptr<Node>& owner);

Tensor zeros_like_grad(const Tensor& grad);
// An input PyTorch has no derivative for (igamma's `input`, zeta's `self`): backward through it raises
// NotImplementedError "the derivative for 'what' is not implemented."
Tensor not_implemented(const char* what);

// special functions (special_formulas.cpp)
Tensor xlogy_self_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool log1p);
Tensor logit_backward(const Tensor& grad, const Tensor& self, std::optional<double> eps);
Tensor sinc_backward(const Tensor& grad, const Tensor& self);
Tensor i1_backward(const Tensor& grad, const Tensor& self, const Tensor& result, bool scaled);
Tensor copysign_self_grad(const Tensor& grad, const Tensor& self, const Tensor& result);
Tensor maybe_multiply(const Tensor& grad, const Scalar& alpha);
Tensor mul_grad(const Tensor& grad, const Tensor& other, ScalarType self_dtype);
Tensor div_self_grad(const Tensor& grad, const Tensor& other, std::optional<std::string_view> mode);
Tensor div_other_grad(const Tensor& grad, const Tensor& self, const Tensor& other, std::optional<std::string_view> mode);
Tensor pow_self_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent);
Tensor pow_exponent_grad(const Tensor& grad, const Tensor& self, const Tensor& exponent, const Tensor& result);
Tensor min_max_grad(const Tensor& grad, const Tensor& a, const Tensor& b, bool is_min);
// which = 0: the gradient of self, 1: of other (self wins ties and where other is NaN)
Tensor fmin_fmax_grad(const Tensor& grad, const Tensor& self, const Tensor& other, bool is_min, int which);
Tensor clamp_self_grad(const Tensor& grad, const Tensor& self, const Tensor& min, const Tensor& max);
Tensor clamp_bound_grad(const Tensor& grad, const Tensor& self, const Tensor& bound, const Tensor& other, bool is_min);

// reductions
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dim, bool keepdim);
Tensor mean_backward(const Tensor& grad, IntArrayRef sizes, OptionalIntArrayRef dim, bool keepdim);
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, std::optional<int64_t> dim, bool keepdim);
Tensor amax_amin_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
Tensor value_selecting_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes, bool keepdim);
Tensor var_backward(const Tensor& grad, const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased,
                    const std::optional<Scalar>& correction, bool keepdim);
Tensor std_backward(const Tensor& grad, const Tensor& self, const Tensor& result, OptionalIntArrayRef dim,
                    std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim);
Tensor var_mean_backward(const variable_list& grads, const Tensor& self, OptionalIntArrayRef dim,
                         std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim);
Tensor std_mean_backward(const variable_list& grads, const Tensor& self, const Tensor& std, OptionalIntArrayRef dim,
                         std::optional<bool> unbiased, const std::optional<Scalar>& correction, bool keepdim);
Tensor norm_backward(const Tensor& grad, const Tensor& self, const std::optional<Scalar>& p, const Tensor& result,
                     OptionalIntArrayRef dim, bool keepdim);
Tensor logsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dim, bool keepdim);
Tensor cumsum_backward(const Tensor& grad, int64_t dim);
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& result);

// views and shape ops
Tensor permute_backward(const Tensor& grad, IntArrayRef dims);
Tensor narrow_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t start, int64_t length);
Tensor slice_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, std::optional<int64_t> start,
                      std::optional<int64_t> end, int64_t step);
Tensor select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, int64_t index);
Tensor unbind_backward(const variable_list& grads, const std::vector<TensorMeta>& outs, IntArrayRef sizes,
                       ScalarType dtype, int64_t dim);
Tensor split_backward(const variable_list& grads, const std::vector<TensorMeta>& outs, IntArrayRef sizes,
                      ScalarType dtype, int64_t dim);
Tensor as_strided_backward(const Tensor& grad, IntArrayRef sizes, IntArrayRef self_strides, int64_t self_offset,
                           IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset);
Tensor diagonal_backward(const Tensor& grad, IntArrayRef sizes, int64_t offset, int64_t dim1, int64_t dim2);
Tensor unfold_backward(const Tensor& grad, IntArrayRef sizes, int64_t dimension, int64_t size, int64_t step);
std::vector<Tensor> cat_backward(const Tensor& grad, const std::vector<std::vector<int64_t>>& sizes, int64_t dim);
std::vector<Tensor> stack_backward(const Tensor& grad, const std::vector<std::vector<int64_t>>& sizes, int64_t dim);
Tensor roll_backward(const Tensor& grad, IntArrayRef shifts, IntArrayRef dims);

// indexing and linear algebra
Tensor index_select_backward(const Tensor& grad, IntArrayRef sizes, int64_t dim, const Tensor& index);
Tensor masked_select_backward(const Tensor& grad, const Tensor& self, const Tensor& mask);
Tensor index_backward(const Tensor& grad, IntArrayRef sizes, ScalarType dtype, const std::vector<Tensor>& indices);
Tensor index_put_self_grad(const Tensor& grad, const std::vector<Tensor>& indices, bool accumulate);
Tensor matmul_backward(const Tensor& grad, const Tensor& self, const Tensor& other, int which);

// NN core
Tensor softmax_backward(const Tensor& grad, const Tensor& result, int64_t dim, bool log);
Tensor log_softmax_jvp(const Tensor& tangent, const Tensor& result, int64_t dim);
// fused LSTM / GRU cell (ops/nn_rnn.cpp): (d gates, d cx) and (d gi, d gh, d hx)
std::tuple<Tensor, Tensor> lstm_cell_backward(const Tensor& dhy, const Tensor& dcy, const Tensor& gates,
                                              const Tensor& cx, const Tensor& cy, std::array<bool, 2> mask);
// whole-sequence LSTM layer (_lstm_seq): (d xw, d h0, d c0, d w_hh)
std::tuple<Tensor, Tensor, Tensor, Tensor> lstm_seq_backward(const Tensor& dhs, const Tensor& dcs, const Tensor& dacts,
                                                             const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                                                             const Tensor& hs, const Tensor& cs, const Tensor& acts,
                                                             bool reverse, std::array<bool, 4> mask);
std::tuple<Tensor, Tensor, Tensor> gru_cell_backward(const Tensor& dhy, const Tensor& gi, const Tensor& gh,
                                                     const Tensor& hx, std::array<bool, 3> mask);
std::tuple<Tensor, Tensor, Tensor> layer_norm_backward(const Tensor& grad, const Tensor& input,
                                                       IntArrayRef normalized_shape, const Tensor& mean,
                                                       const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                                                       double eps, std::array<bool, 3> mask);
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, const Scalar& alpha);
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, const Tensor& mat2, const Scalar& alpha);
// implemented beside the op in ops/conv.cpp
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                        const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
                                                        IntArrayRef dilation, bool transposed,
                                                        IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> mask);
Tensor conv_bias_jvp(const Tensor& bias_t, const Tensor& result, const Tensor& weight);
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward(const Tensor& grad, const Tensor& input, const Tensor& weight,
                                                       const Tensor& running_mean, const Tensor& running_var,
                                                       const Tensor& save_mean, const Tensor& save_invstd,
                                                       bool training, double eps, std::array<bool, 3> mask);

Tensor gather_backward(const Tensor& grad, IntArrayRef self_sizes, int64_t dim, const Tensor& index);
Tensor index_add_source_grad(const Tensor& grad, int64_t dim, const Tensor& index, IntArrayRef source_sizes,
                             const Scalar& alpha);
std::vector<int64_t> self_spatial(IntArrayRef sizes);  // sizes[2:]
std::tuple<Tensor, Tensor> grid_sampler_2d_fused_backward(const Tensor& grad, const Tensor& input, const Tensor& grid,
                                                          int64_t interpolation_mode, int64_t padding_mode,
                                                          bool align_corners, std::array<bool, 2> mask);
// linalg
Tensor det_backward(const Tensor& grad, const Tensor& A, const Tensor& det);
std::tuple<Tensor, Tensor> solve_backward(const Tensor& grad, const Tensor& A, const Tensor& B, const Tensor& X,
                                          std::array<bool, 2> mask);
Tensor cholesky_backward(const Tensor& grad, const Tensor& L, bool upper);
Tensor qr_backward(const variable_list& grads, const Tensor& A, const Tensor& Q, const Tensor& R, std::string_view mode);
Tensor eigh_backward(const variable_list& grads, const Tensor& L, const Tensor& V);
Tensor linalg_eig_backward(const variable_list& grads, const Tensor& self, const Tensor& L, const Tensor& V);
Tensor svd_backward(const variable_list& grads, const Tensor& U, const Tensor& S, const Tensor& Vh, bool full_matrices);
Tensor lu_factor_ex_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots);
std::tuple<Tensor, Tensor> lu_solve_backward(const Tensor& grad, const Tensor& LU, const Tensor& pivots,
                                             const Tensor& B, const Tensor& X, bool left, bool adjoint,
                                             std::array<bool, 2> mask);
std::tuple<Tensor, Tensor> solve_triangular_backward(const Tensor& grad, const Tensor& A, const Tensor& B,
                                                     const Tensor& X, bool upper, bool left, bool unitriangular,
                                                     std::array<bool, 2> mask);
Tensor slogdet_backward(const variable_list& grads, const Tensor& A, const Tensor& sign);
Tensor matrix_exp_backward(const Tensor& self, const Tensor& grad);
Tensor matrix_exp_frechet(const Tensor& A, const Tensor& E);
Tensor solve_triangular_jvp_A(const Tensor& A, const Tensor& A_t, const Tensor& X, bool upper, bool left,
                              bool unitriangular);
// median()/max() style: the gradient is shared evenly among the elements equal to the result
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result);

// ---- neural-network ops (ops.yaml's last section)
Tensor hardtanh_backward(const Tensor& grad, const Tensor& result, const Scalar& min_val, const Scalar& max_val);
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& self, const Scalar& negative_slope);
Tensor elu_backward(const Tensor& grad, const Tensor& self, const Scalar& alpha, const Scalar& scale,
                    const Scalar& input_scale);
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate);
Tensor silu_backward(const Tensor& grad, const Tensor& self);
Tensor mish_backward(const Tensor& grad, const Tensor& self);
Tensor hardsigmoid_backward(const Tensor& grad, const Tensor& self);
Tensor hardswish_backward(const Tensor& grad, const Tensor& self);
Tensor softplus_backward(const Tensor& grad, const Tensor& self, const Scalar& beta, const Scalar& threshold);
Tensor shrink_backward(const Tensor& grad, const Tensor& self, const Scalar& lambd);  // softshrink, hardshrink
Tensor threshold_op_backward(const Tensor& grad, const Tensor& self, const Scalar& threshold);
Tensor log_sigmoid_backward(const Tensor& grad, const Tensor& self);
Tensor binary_cross_entropy_backward(const Tensor& grad, const Tensor& self, const Tensor& target, const Tensor& weight,
                                     int64_t reduction);
Tensor binary_cross_entropy_target_backward(const Tensor& grad, const Tensor& self, const Tensor& target,
                                            const Tensor& weight, int64_t reduction);
Tensor embedding_backward(const Tensor& grad, const Tensor& indices, IntArrayRef weight_sizes, int64_t padding_idx,
                          bool scale_grad_by_freq, bool sparse = false);
Tensor reduce_loss(const Tensor& loss, int64_t reduction);  // a loss's reduction (0 none, 1 mean, 2 sum)
// shape, indexing and scan ops (shape_formulas.cpp)
Tensor index_fill_value_grad(const Tensor& grad, int64_t dim, const Tensor& index);
Tensor masked_scatter_source_grad(const Tensor& grad, const Tensor& mask, IntArrayRef source_sizes);
std::tuple<Tensor, Tensor> scatter_reduce_backward(const Tensor& grad, const Tensor& self, int64_t dim, const Tensor& index,
                                                   const Tensor& src, std::string_view reduce, bool include_self,
                                                   const Tensor& result, std::array<bool, 2> mask);
Tensor cummaxmin_backward(const Tensor& grad, const Tensor& self, const Tensor& indices, int64_t dim);
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result, int64_t dim);
std::tuple<Tensor, Tensor> cdist_backward(const Tensor& grad, const Tensor& x1, const Tensor& x2, double p,
                                          const Tensor& result, std::array<bool, 2> mask);
// complex numbers (ops/complex.cpp): a real tensor is its own real part, with a zero imaginary part
Tensor real_part(const Tensor& t);
Tensor imag_part(const Tensor& t);
Tensor sgn_backward(const Tensor& self, const Tensor& grad, const Tensor& result);
Tensor angle_backward(const Tensor& grad, const Tensor& self);
// Fourier transforms (ops/fft.cpp)
Tensor fft_r2c_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization, bool onesided,
                        IntArrayRef self_sizes);
Tensor fft_c2r_backward(const Tensor& grad, IntArrayRef dim, int64_t normalization);

}  // namespace ember::autograd
