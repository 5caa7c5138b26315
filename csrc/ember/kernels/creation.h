#pragma once
// The value sequences of the range factories (ops/creation.cpp: arange, linspace, logspace). The
// ops check the range, count the values and allocate; the CPU's entries: kernels/cpu/creation.cpp.
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

// out [n] (int64 or double): out[i] = start + i * step; exact_integers (int64 out, integer
// start and step) computes without rounding, otherwise in double (truncated into int64).
EMBER_DECLARE_STUB(arange_stub, void, (const Tensor& out, const Scalar& start, const Scalar& step, bool exact_integers))
// out [steps] double from start to end, the upper half computed back from end so the last value is exact.
EMBER_DECLARE_STUB(linspace_stub, void, (const Tensor& out, double start, double end))
