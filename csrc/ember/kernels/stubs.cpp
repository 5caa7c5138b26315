// The stubs of the per-ISA kernels (kernels.h), the error for a device without a kernel, and the
// CPU's integer division by zero (kernels/elementwise_math.h).
#include "ember/core/error.h"
#include "ember/kernels/elementwise_math.h"
#include "ember/kernels/kernels.h"

namespace ember {

void no_kernel_for(const char* op, Device device) {
  EMBER_FAIL(NotImplemented, "Could not run '", op, "' with arguments from the '", device_type_name(device.type),
             "' backend: no ", device_type_name(device.type), " kernel is registered for it (tensors on ", device, ")");
}

namespace elementwise_math {
void raise_zero_division() { EMBER_FAIL(Runtime, "ZeroDivisionError"); }
}  // namespace elementwise_math

}  // namespace ember

EMBER_DEFINE_STUB(unary_kernel_stub)
EMBER_DEFINE_STUB(binary_kernel_stub)
EMBER_DEFINE_STUB(ternary_kernel_stub)
EMBER_DEFINE_STUB(copy_kernel_stub)
EMBER_DEFINE_STUB(fill_kernel_stub)
EMBER_DEFINE_STUB(transpose_copy_kernel_stub)
EMBER_DEFINE_STUB(resample_u8_kernel_stub)
EMBER_DEFINE_STUB(resample_float_kernel_stub)
EMBER_DEFINE_STUB(reduced_float_convert_kernel_stub)
EMBER_DEFINE_STUB(reduce_kernel_stub)
EMBER_DEFINE_STUB(softmax_kernel_stub)
EMBER_DEFINE_STUB(softmax_backward_kernel_stub)
EMBER_DEFINE_STUB(layer_norm_kernel_stub)
EMBER_DEFINE_STUB(layer_norm_backward_kernel_stub)
EMBER_DEFINE_STUB(batch_norm_stats_kernel_stub)
EMBER_DEFINE_STUB(batch_norm_apply_kernel_stub)
EMBER_DEFINE_STUB(batch_norm_backward_reduce_kernel_stub)
EMBER_DEFINE_STUB(batch_norm_backward_apply_kernel_stub)
EMBER_DEFINE_STUB(scan_kernel_stub)
EMBER_DEFINE_STUB(lstm_cell_kernel_stub)
EMBER_DEFINE_STUB(lstm_cell_backward_kernel_stub)
EMBER_DEFINE_STUB(lstm_seq_kernel_stub)
EMBER_DEFINE_STUB(lstm_seq_backward_kernel_stub)
EMBER_DEFINE_STUB(gru_cell_kernel_stub)
EMBER_DEFINE_STUB(gru_cell_backward_kernel_stub)
