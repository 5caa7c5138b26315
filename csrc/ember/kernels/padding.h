#pragma once
// The padding family's kernel entry (ops/padding.cpp; kernels/cpu/padding.cpp holds the CPU's).
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {
enum class PadMode { Reflect, Replicate, Circular };
}

// index [n + lo + hi] (int64) <- the source position of each padded position -lo .. n + hi - 1
// of a dim of size n, reflected, replicated or wrapped around
EMBER_DECLARE_STUB(pad_source_index_stub, void, (const Tensor& index, int64_t n, int64_t lo, PadMode mode))
