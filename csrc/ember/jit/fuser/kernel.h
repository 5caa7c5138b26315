#pragma once
// What a backend makes of a Program: a function over one row segment of the iteration space.
// The runner (runner.cpp) handles shapes, strides, threads and autograd; a kernel only sees
// pointers. Inputs arrive in the program's dtype with stride 1, or stride 0 where bit k of the
// broadcast mask it was built for is set (one kernel per mask).
#include <cstdint>
#include <memory>
#include <string>

#include "ember/core/macros.h"
#include "ember/jit/fuser/program.h"

namespace ember::jit::fuser {

class EMBER_API Kernel {
 public:
  virtual ~Kernel() = default;
  // n elements: in[k] -> input k's first element; out[j] -> output j's first element (contiguous;
  // unused for reduced outputs); acc[j] += the sum of reduced output j over the n elements.
  virtual void run(int64_t n, const void* const* in, void* const* out, double* acc) const = 0;
};

// The vectorizing interpreter: blocks of kBlock elements, one vector loop per instruction.
EMBER_API std::shared_ptr<const Kernel> make_interp_kernel(const Program& p, uint64_t bcast_mask);

// C++ source for the program compiled by the system compiler, cached on disk ($EMBER_CACHE_DIR,
// default ~/.cache/ember/kernels). Throws RuntimeError with the compiler's message on failure.
EMBER_API std::shared_ptr<const Kernel> make_codegen_kernel(const Program& p, uint64_t bcast_mask);
// The C++ source make_codegen_kernel compiles (for tests and for reading).
EMBER_API std::string codegen_source(const Program& p, uint64_t bcast_mask);
// Whether kernels can be built here: a C++ compiler ($CXX, c++, g++) that compiles and links a
// probe kernel (SLEEF's header and library present, the cache directory writable).
EMBER_API bool codegen_available();

}  // namespace ember::jit::fuser
