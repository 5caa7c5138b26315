#pragma once
// Runtime CPU dispatch. Each file in kernels/cpu/isa/ is compiled three times (baseline x86-64,
// AVX2+FMA, AVX-512) into namespaces cpu_DEFAULT / cpu_AVX2 / cpu_AVX512; the CPU entry of the
// kernel's stub (kernels/registry.h) is the best one this machine supports, picked once at start-up
// (kernels/cpu/isa_entries.cpp). EMBER_CPU_CAPABILITY=default|avx2|avx512 overrides the choice (for
// testing every path on one machine).
#include "ember/core/macros.h"
#include "ember/kernels/registry.h"

namespace ember {

enum class CpuCapability { Default = 0, AVX2 = 1, AVX512 = 2 };
EMBER_API CpuCapability cpu_capability();
EMBER_API const char* cpu_capability_name();

}  // namespace ember

// Declare a kernel entry point for every capability, and its stub `name_stub` that ops call by
// device: EMBER_DECLARE_KERNEL(void, copy_kernel, (TensorIter&)) -> copy_kernel_stub(device)(iter)
#define EMBER_DECLARE_KERNEL(ret, name, params)     \
  namespace ember::cpu_DEFAULT { ret name params; } \
  namespace ember::cpu_AVX2 { ret name params; }    \
  namespace ember::cpu_AVX512 { ret name params; }  \
  EMBER_DECLARE_STUB(name##_stub, ret, params)

// The best implementation on this CPU (what the stub's CPU entry is set to).
#define EMBER_KERNEL(name)                                                    \
  (::ember::cpu_capability() == ::ember::CpuCapability::AVX512 ? &::ember::cpu_AVX512::name \
   : ::ember::cpu_capability() == ::ember::CpuCapability::AVX2 ? &::ember::cpu_AVX2::name   \
                                                              : &::ember::cpu_DEFAULT::name)
