#pragma once
// error_kind(f): the ErrorKind of the ember::Error that f throws (a test failure if it throws none).
#include <gtest/gtest.h>

#include "ember/core/error.h"

namespace ember::test_util {

template <class F>
ErrorKind error_kind(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected an ember::Error";
  return ErrorKind::Runtime;
}

}  // namespace ember::test_util
