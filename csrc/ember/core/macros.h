#pragma once
// Small portability macros shared by every Ember source file.
#define EMBER_LIKELY(x) __builtin_expect(!!(x), 1)
#define EMBER_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define EMBER_API __attribute__((visibility("default")))
// Code compiled for the CPU and, in the CUDA kernels (nvcc), for the GPU too: written once.
#ifdef __CUDACC__
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif
#define EMBER_ALWAYS_INLINE inline __attribute__((always_inline))
// A parameter whose referent the result points into (a view built from it): clang then diagnoses a
// view that outlives it (-Wdangling). GCC has no such attribute; there the expansion is empty.
#if defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
#define EMBER_LIFETIME_BOUND [[clang::lifetimebound]]
#endif
#endif
#ifndef EMBER_LIFETIME_BOUND
#define EMBER_LIFETIME_BOUND
#endif
