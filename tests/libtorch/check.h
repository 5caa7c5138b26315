#pragma once
// The libtorch-style test programs' checks: EXPECT(cond) reports a failed condition and counts it;
// main returns finish("name"), nonzero when anything failed, so the test runner sees it.
#include <cstdio>

namespace libtorch_test {
inline int failures = 0;
inline int finish(const char* program) {
  if (failures) {
    std::fprintf(stderr, "%s: %d check(s) failed\n", program, failures);
    return 1;
  }
  std::printf("%s: all checks passed\n", program);
  return 0;
}
}  // namespace libtorch_test

#define EXPECT(cond)                                                                        \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);        \
      ++::libtorch_test::failures;                                                          \
    }                                                                                       \
  } while (0)
