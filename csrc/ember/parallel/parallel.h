#pragma once
// Intra-op parallelism: one OpenMP pool, sized by ember.set_num_threads, which also sets
// OpenBLAS's thread count so the two never oversubscribe the cores (see DESIGN.md, Threads).
#include <cstdint>
#include <functional>

#include "ember/core/macros.h"

namespace ember {

// Elements below which an elementwise op stays on the calling thread.
constexpr int64_t kGrainSize = 32768;

EMBER_API int get_num_threads();
EMBER_API void set_num_threads(int n);
EMBER_API bool in_parallel_region();
// OpenBLAS's own thread count (set_num_threads sets both); batched GEMMs that parallelize over the
// batch run BLAS single-threaded inside, so the two pools never oversubscribe the cores.
EMBER_API void set_blas_threads(int n);

// Calls f(begin, end) over [begin, end) split into chunks of at least `grain` elements across
// the pool; runs inline when the range is small, one thread is set, or already inside a region.
EMBER_API void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f);

}  // namespace ember
