// use_deterministic_algorithms from C++: what an op without a deterministic variant does in each mode.
#include <gtest/gtest.h>

#include <string>

#include "ember/core/deterministic.h"
#include "ember/core/error.h"

using namespace ember;

namespace {
std::string g_warned;
void record_warning(const char* message) { g_warned = message; }

struct ModeGuard {
  ~ModeGuard() {
    set_deterministic_algorithms(false, false);
    set_warning_hook(nullptr);
  }
};
}  // namespace

TEST(Deterministic, AlertRaisesWarnsOrPasses) {
  ModeGuard guard;
  alert_not_deterministic("some_cuda_kernel");  // off: nothing happens
  set_deterministic_algorithms(true);
  EXPECT_TRUE(deterministic_algorithms());
  try {
    alert_not_deterministic("some_cuda_kernel");
    FAIL() << "expected a RuntimeError";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("some_cuda_kernel does not have a deterministic implementation"),
              std::string::npos);
  }
  set_warning_hook(&record_warning);
  set_deterministic_algorithms(true, true);
  EXPECT_TRUE(deterministic_warn_only());
  alert_not_deterministic("other_kernel");
  EXPECT_NE(g_warned.find("other_kernel does not have a deterministic implementation"), std::string::npos);
  EXPECT_NE(g_warned.find("warn_only=True"), std::string::npos);
}
