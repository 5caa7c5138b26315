#pragma once
// <torch/torch.h> for libtorch programs built against Ember. libtorch's namespaces present Ember's
// C++ API under libtorch's names: `torch`, `at` and `c10` see all of namespace ember through using
// directives (torch::Tensor is ember::Tensor, torch::nn::Linear is ember::nn::Linear), so nothing
// is wrapped and nothing costs time. What libtorch spells differently is declared here as aliases
// or one-line forwards. A namespace declared here (torch::cuda, torch::autograd) is searched before
// ember's, so libtorch-only names can be added to it without touching Ember.
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>

#include "ember/alloc/allocator.h"
#include "ember/autograd/function.h"
#include "ember/core/factories.h"
#include "ember/core/ivalue.h"
#include "ember/core/scalar_overloads.h"
#include "ember/core/tensor_indexing.h"
#include "ember/ember.h"

namespace c10 {
using namespace ::ember;
template <class T>
using optional = std::optional<T>;
using std::nullopt;
using std::nullopt_t;
using Error = ::ember::Error;

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kPrivateUse1 = DeviceType::PrivateUse1;
constexpr DeviceType kMeta = DeviceType::Meta;
// libtorch's short dtype names
constexpr ScalarType kF16 = kHalf, kF32 = kFloat, kF64 = kDouble, kI8 = kChar, kI16 = kShort, kI32 = kInt,
                     kI64 = kLong, kU8 = kByte;

// c10::str(a, b, ...): the arguments streamed into one string
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

namespace detail {
// TORCH_CHECK's failure: the caller's message, or the failed condition when there is none
template <class... Args>
[[noreturn]] void check_failed(const char* condition, const Args&... args) {
  if constexpr (sizeof...(Args) == 0) ::ember::detail::fail(::ember::ErrorKind::Runtime, "Expected ", condition,
                                                            " to be true, but got false.");
  else ::ember::detail::fail(::ember::ErrorKind::Runtime, args...);
}
}  // namespace detail
}  // namespace c10

namespace at {
using namespace ::ember;
using c10::kCPU;
using c10::kCUDA;
using c10::str;
// The loss reduction the functional losses take as an integer: at::Reduction::Mean.
namespace Reduction {
enum Reduction { None, Mean, Sum, END };
}
}  // namespace at

namespace torch {
using namespace ::ember;
using c10::kCPU;
using c10::kCUDA;
using c10::kPrivateUse1;
using c10::str;
using ::ember::autograd::AutoGradMode;
using ::ember::autograd::NoGradGuard;
namespace Reduction = ::at::Reduction;

namespace autograd {
using namespace ::ember::autograd;
using tensor_list = variable_list;
}  // namespace autograd

namespace cuda {
// True once a CUDA backend is registered with Ember (none is in a CPU build).
inline bool is_available() { return ::ember::allocator_registered(::ember::DeviceType::CUDA); }
// Ember's backend seam does not report a device count yet: a registered backend counts as one device.
inline int64_t device_count() { return is_available() ? 1 : 0; }
}  // namespace cuda
}  // namespace torch

// ---- libtorch's data and serialization layers (torch::data, torch::save/load), after the namespaces
#include <cassert>  // libtorch's header brings assert in; programs (custom-dataset) rely on it

#include "torch/data.h"
#include "torch/serialize.h"

#define TORCH_MODULE(Name) EMBER_MODULE(Name)
#define TORCH_CHECK(cond, ...)                                                       \
  do {                                                                               \
    if (EMBER_UNLIKELY(!(cond))) ::c10::detail::check_failed(#cond, ##__VA_ARGS__); \
  } while (0)
#define TORCH_INTERNAL_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
#define AT_ASSERT(cond, ...) TORCH_CHECK(cond, ##__VA_ARGS__)
