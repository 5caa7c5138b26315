// The CPU entries of the per-ISA kernels: the best build this machine supports (dispatch.h).
#include "ember/kernels/kernels.h"

EMBER_REGISTER_KERNEL(unary_kernel_stub, CPU, EMBER_KERNEL(unary_kernel));
EMBER_REGISTER_KERNEL(binary_kernel_stub, CPU, EMBER_KERNEL(binary_kernel));
EMBER_REGISTER_KERNEL(ternary_kernel_stub, CPU, EMBER_KERNEL(ternary_kernel));
EMBER_REGISTER_KERNEL(copy_kernel_stub, CPU, EMBER_KERNEL(copy_kernel));
EMBER_REGISTER_KERNEL(fill_kernel_stub, CPU, EMBER_KERNEL(fill_kernel));
EMBER_REGISTER_KERNEL(transpose_copy_kernel_stub, CPU, EMBER_KERNEL(transpose_copy_kernel));
EMBER_REGISTER_KERNEL(resample_u8_kernel_stub, CPU, EMBER_KERNEL(resample_u8_kernel));
EMBER_REGISTER_KERNEL(resample_float_kernel_stub, CPU, EMBER_KERNEL(resample_float_kernel));
EMBER_REGISTER_KERNEL(reduced_float_convert_kernel_stub, CPU, EMBER_KERNEL(reduced_float_convert_kernel));
EMBER_REGISTER_KERNEL(reduce_kernel_stub, CPU, EMBER_KERNEL(reduce_kernel));
EMBER_REGISTER_KERNEL(softmax_kernel_stub, CPU, EMBER_KERNEL(softmax_kernel));
EMBER_REGISTER_KERNEL(softmax_backward_kernel_stub, CPU, EMBER_KERNEL(softmax_backward_kernel));
EMBER_REGISTER_KERNEL(layer_norm_kernel_stub, CPU, EMBER_KERNEL(layer_norm_kernel));
EMBER_REGISTER_KERNEL(layer_norm_backward_kernel_stub, CPU, EMBER_KERNEL(layer_norm_backward_kernel));
EMBER_REGISTER_KERNEL(batch_norm_stats_kernel_stub, CPU, EMBER_KERNEL(batch_norm_stats_kernel));
EMBER_REGISTER_KERNEL(batch_norm_apply_kernel_stub, CPU, EMBER_KERNEL(batch_norm_apply_kernel));
EMBER_REGISTER_KERNEL(batch_norm_backward_reduce_kernel_stub, CPU, EMBER_KERNEL(batch_norm_backward_reduce_kernel));
EMBER_REGISTER_KERNEL(batch_norm_backward_apply_kernel_stub, CPU, EMBER_KERNEL(batch_norm_backward_apply_kernel));
EMBER_REGISTER_KERNEL(scan_kernel_stub, CPU, EMBER_KERNEL(scan_kernel));
EMBER_REGISTER_KERNEL(lstm_cell_kernel_stub, CPU, EMBER_KERNEL(lstm_cell_kernel));
EMBER_REGISTER_KERNEL(lstm_cell_backward_kernel_stub, CPU, EMBER_KERNEL(lstm_cell_backward_kernel));
EMBER_REGISTER_KERNEL(lstm_seq_kernel_stub, CPU, EMBER_KERNEL(lstm_seq_kernel));
EMBER_REGISTER_KERNEL(lstm_seq_backward_kernel_stub, CPU, EMBER_KERNEL(lstm_seq_backward_kernel));
EMBER_REGISTER_KERNEL(gru_cell_kernel_stub, CPU, EMBER_KERNEL(gru_cell_kernel));
EMBER_REGISTER_KERNEL(gru_cell_backward_kernel_stub, CPU, EMBER_KERNEL(gru_cell_backward_kernel));
