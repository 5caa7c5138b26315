#pragma once
// Random sampling. The ops (random/random_ops.cpp) check arguments and allocate; a backend's entry
// draws from the Generator, reserving the Philox counters it reads (random/generator.h), so the
// values for a seed are the backend's business. The CPU's entries: kernels/cpu/random.cpp.
#include <cstdint>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {
class Generator;
}

// Each fills a contiguous `out` (any floating dtype unless said otherwise).
// uniform in [from, to)
EMBER_DECLARE_STUB(uniform_stub, void, (const Tensor& out, double from, double to, Generator& gen))
// normal with the given mean and standard deviation
EMBER_DECLARE_STUB(normal_stub, void, (const Tensor& out, double mean, double std, Generator& gen))
// exponential with rate lambd (out of any dtype when empty)
EMBER_DECLARE_STUB(exponential_stub, void, (const Tensor& out, double lambd, Generator& gen))
// 1 with probability p[i], else 0; out of any dtype, p contiguous double of out's shape. Raises
// unless every p[i] is in [0, 1], before drawing.
EMBER_DECLARE_STUB(bernoulli_stub, void, (const Tensor& out, const Tensor& p, Generator& gen))
// integers uniform in [from, from + range) (range up to 2**64 - 1), out of any dtype
EMBER_DECLARE_STUB(random_stub, void, (const Tensor& out, int64_t from, uint64_t range, Generator& gen))
// a random permutation of 0 .. n-1 into int64 out [n]
EMBER_DECLARE_STUB(randperm_stub, void, (const Tensor& out, Generator& gen))
// int64 out [rows, samples] = category indices drawn from the weights of each row of probs
// (contiguous double [rows, categories]); raises on invalid weights
EMBER_DECLARE_STUB(multinomial_stub, void, (const Tensor& out, const Tensor& probs, bool replacement, Generator& gen))
// double out = Poisson(rates) elementwise (rates contiguous double of out's shape, NaN stays NaN);
// raises on a negative rate, before drawing
EMBER_DECLARE_STUB(poisson_stub, void, (const Tensor& out, const Tensor& rates, Generator& gen))
