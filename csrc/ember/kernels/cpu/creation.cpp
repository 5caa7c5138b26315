// The CPU's value sequences for the range factories (kernels/creation.h).
#include "ember/kernels/creation.h"

namespace ember::cpu {

namespace {

void arange_cpu(const Tensor& out, const Scalar& start, const Scalar& step, bool exact_integers) {
  const int64_t n = out.numel();
  const double s = start.to_double(), st = step.to_double();
  if (out.dtype() == kLong) {
    int64_t* p = static_cast<int64_t*>(out.data_ptr());
    if (exact_integers) {
      const int64_t is = start.to_long(), ist = step.to_long();
      for (int64_t i = 0; i < n; i++) p[i] = int64_t(__int128(is) + __int128(i) * ist);  // in range, no overflow
    } else {
      for (int64_t i = 0; i < n; i++) p[i] = int64_t(s + double(i) * st);
    }
  } else {
    double* p = static_cast<double*>(out.data_ptr());
    for (int64_t i = 0; i < n; i++) p[i] = s + double(i) * st;
  }
}

void linspace_cpu(const Tensor& out, double start, double end) {
  const int64_t steps = out.numel();
  double* p = static_cast<double*>(out.data_ptr());
  if (steps == 1) p[0] = start;
  if (steps > 1) {
    double step = (end - start) / double(steps - 1);
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; i++) p[i] = i < half ? start + step * double(i) : end - step * double(steps - i - 1);
  }
}

}  // namespace

}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(arange_stub, CPU, &ember::cpu::arange_cpu);
EMBER_REGISTER_KERNEL(linspace_stub, CPU, &ember::cpu::linspace_cpu);
