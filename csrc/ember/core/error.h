#pragma once
// Ember's exceptions. Each carries the kind of Python exception it maps to, so
// the binding layer raises exactly what PyTorch raises (RuntimeError, IndexError, ...).
#include <sstream>
#include <stdexcept>
#include <string>

#include "ember/core/macros.h"

namespace ember {

enum class ErrorKind { Runtime, Index, Type, Value, NotImplemented, Assertion };

class EMBER_API Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

namespace detail {
inline void concat(std::ostringstream&) {}
template <class T, class... Rest>
void concat(std::ostringstream& os, const T& t, const Rest&... rest) {
  os << t;
  concat(os, rest...);
}
template <class... Args>
[[noreturn]] __attribute__((noinline, cold)) void fail(ErrorKind kind, const Args&... args) {
  std::ostringstream os;
  concat(os, args...);
  throw Error(kind, os.str());
}
}  // namespace detail

}  // namespace ember

// EMBER_CHECK(cond, "op(): message ", value, ...) throws RuntimeError; the _KIND form picks the
// Python exception type. The message is only built on failure. One statement (do/while): a bare `if`
// would take the else of `if (a) EMBER_CHECK(x, ...); else ...` for itself.
#define EMBER_CHECK(cond, ...)                                                                  \
  do {                                                                                          \
    if (EMBER_UNLIKELY(!(cond))) ::ember::detail::fail(::ember::ErrorKind::Runtime, __VA_ARGS__); \
  } while (0)
#define EMBER_CHECK_KIND(cond, kind, ...)                                                    \
  do {                                                                                       \
    if (EMBER_UNLIKELY(!(cond))) ::ember::detail::fail(::ember::ErrorKind::kind, __VA_ARGS__); \
  } while (0)
#define EMBER_FAIL(kind, ...) ::ember::detail::fail(::ember::ErrorKind::kind, __VA_ARGS__)
