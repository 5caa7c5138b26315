#include "ember/parallel/parallel.h"

#include <omp.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "ember/core/error.h"

extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace ember {

namespace {
int initial_threads() {
  // OpenMP reads OMP_NUM_THREADS; otherwise use every core, as PyTorch does.
  return std::max(1, omp_get_max_threads());
}
std::atomic<int> g_threads{0};
// libgomp's pool does not survive fork(): a forked child (DataLoader worker, Hogwild process) would
// hang in its next parallel region, so it starts single-threaded, as PyTorch's workers run.
const bool g_atfork_registered = [] {
  return pthread_atfork(nullptr, nullptr, [] { g_threads.store(1); }) == 0;
}();
}  // namespace

int get_num_threads() {
  int n = g_threads.load();
  if (n == 0) {
    n = initial_threads();
    g_threads.store(n);
  }
  return n;
}

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_threads expects a positive integer, got ", n);
  g_threads.store(n);
  omp_set_num_threads(n);
  if (openblas_set_num_threads) openblas_set_num_threads(n);
}

bool in_parallel_region() { return omp_in_parallel(); }

void set_blas_threads(int n) {
  if (openblas_set_num_threads) openblas_set_num_threads(n);
}

void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  int64_t n = end - begin;
  int threads = get_num_threads();
  if (threads <= 1 || n <= grain || omp_in_parallel()) {
    f(begin, end);
    return;
  }
  int64_t max_chunks = (n + grain - 1) / std::max<int64_t>(grain, 1);
  int nt = int(std::min<int64_t>(threads, max_chunks));
  std::exception_ptr err;
  std::atomic<bool> failed{false};
#pragma omp parallel num_threads(nt)
  {
    int tid = omp_get_thread_num(), nth = omp_get_num_threads();
    int64_t chunk = (n + nth - 1) / nth;
    int64_t b = begin + tid * chunk, e = std::min(end, b + chunk);
    if (b < e) {
      try {
        f(b, e);
      } catch (...) {
        if (!failed.exchange(true)) err = std::current_exception();
      }
    }
  }
  if (err) std::rethrow_exception(err);
}

}  // namespace ember
