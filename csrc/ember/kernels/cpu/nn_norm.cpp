// CPU entries of batch norm's per-channel arithmetic (kernels/nn_norm.h): C values, one scalar loop.
#include <cmath>

#include "ember/kernels/nn_norm.h"

namespace ember {

namespace {

const double* doubles(const Tensor& t) { return t.defined() ? static_cast<const double*>(t.data_ptr()) : nullptr; }
double* out_doubles(const Tensor& t) { return static_cast<double*>(t.data_ptr()); }

void batch_norm_fold_cpu(const Tensor& mean_t, const Tensor& var_t, const Tensor& weight, const Tensor& bias,
                         double eps, const Tensor& invstd_t, const Tensor& scale, const Tensor& shift) {
  const double *mean = doubles(mean_t), *var = doubles(var_t), *w = doubles(weight), *bb = doubles(bias);
  double *invstd = out_doubles(invstd_t), *a = out_doubles(scale), *b = out_doubles(shift);
  for (int64_t ch = 0, c = mean_t.numel(); ch < c; ch++) {
    invstd[ch] = 1.0 / std::sqrt(var[ch] + eps);
    double wv = w ? w[ch] : 1.0;
    double bv = bb ? bb[ch] : 0.0;
    a[ch] = wv * invstd[ch];
    b[ch] = bv - mean[ch] * a[ch];
  }
}

void batch_norm_backward_fold_cpu(const Tensor& invstd_t, const Tensor& weight, const Tensor& sum_dy,
                                  const Tensor& sum_dy_xmu, double M, bool training, const Tensor& k1_t,
                                  const Tensor& k2_t, const Tensor& k3_t) {
  const double *invstd = doubles(invstd_t), *w = doubles(weight), *s1 = doubles(sum_dy), *s2 = doubles(sum_dy_xmu);
  double *k1 = out_doubles(k1_t), *k2 = out_doubles(k2_t), *k3 = out_doubles(k3_t);
  for (int64_t ch = 0, c = invstd_t.numel(); ch < c; ch++) {
    double wv = w ? w[ch] : 1.0;
    k1[ch] = wv * invstd[ch];
    k2[ch] = training ? -wv * invstd[ch] * invstd[ch] * invstd[ch] * s2[ch] / M : 0.0;
    k3[ch] = training ? -wv * invstd[ch] * s1[ch] / M : 0.0;
  }
}

}  // namespace

}  // namespace ember

EMBER_REGISTER_KERNEL(batch_norm_fold_stub, CPU, &ember::batch_norm_fold_cpu);
EMBER_REGISTER_KERNEL(batch_norm_backward_fold_stub, CPU, &ember::batch_norm_backward_fold_cpu);
