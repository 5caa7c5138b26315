#include "ember/kernels/dispatch.h"

#include <cstdlib>
#include <cstring>

namespace ember {

static CpuCapability detect() {
  CpuCapability best = CpuCapability::Default;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) best = CpuCapability::AVX2;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq"))
    best = CpuCapability::AVX512;
  if (const char* env = std::getenv("EMBER_CPU_CAPABILITY")) {
    CpuCapability want = best;
    if (!std::strcmp(env, "default")) want = CpuCapability::Default;
    else if (!std::strcmp(env, "avx2")) want = CpuCapability::AVX2;
    else if (!std::strcmp(env, "avx512")) want = CpuCapability::AVX512;
    if (int(want) < int(best)) best = want;  // never pick more than the machine has
  }
  return best;
}

CpuCapability cpu_capability() {
  static const CpuCapability cap = detect();
  return cap;
}

const char* cpu_capability_name() {
  switch (cpu_capability()) {
    case CpuCapability::Default: return "default";
    case CpuCapability::AVX2: return "avx2";
    case CpuCapability::AVX512: return "avx512";
  }
  return "default";
}

}  // namespace ember
