#pragma once
// Runtime CPU dispatch. Each file in kernels/cpu/ is compiled three times (baseline x86-64,
// AVX2+FMA, AVX-512) into namespaces cpu_DEFAULT / cpu_AVX2 / cpu_AVX512; EMBER_KERNEL(name)
// picks the best one this machine supports, once. EMBER_CPU_CAPABILITY=default|avx2|avx512
// overrides the choice (for testing every path on one machine).
#include "ember/core/macros.h"

namespace ember {

enum class CpuCapability { Default = 0, AVX2 = 1, AVX512 = 2 };
EMBER_API CpuCapability cpu_capability();
EMBER_API const char* cpu_capability_name();

}  // namespace ember

// Declare a kernel entry point for every capability: EMBER_DECLARE_KERNEL(void, copy_kernel, (TensorIter&))
#define EMBER_DECLARE_KERNEL(ret, name, params) \
  namespace ember::cpu_DEFAULT { ret name params; } \
  namespace ember::cpu_AVX2 { ret name params; }    \
  namespace ember::cpu_AVX512 { ret name params; }

// Call the best implementation: EMBER_KERNEL(copy_kernel)(iter)
#define EMBER_KERNEL(name)                                                    \
  (::ember::cpu_capability() == ::ember::CpuCapability::AVX512 ? &::ember::cpu_AVX512::name \
   : ::ember::cpu_capability() == ::ember::CpuCapability::AVX2 ? &::ember::cpu_AVX2::name   \
                                                              : &::ember::cpu_DEFAULT::name)
