#pragma once
// Small portability macros shared by every Ember source file.
#define EMBER_LIKELY(x) __builtin_expect(!!(x), 1)
#define EMBER_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define EMBER_API __attribute__((visibility("default")))
#define EMBER_ALWAYS_INLINE inline __attribute__((always_inline))
