#pragma once
// Python's subscripts in C++: x[1:3, None, ..., idx] is x.index({Slice(1, 3), None, Ellipsis, idx})
// and x[...] = v is x.index_put_({...}, v), with the names libtorch uses (torch::indexing).
#include <optional>

#include "ember/core/tensor.h"

namespace ember {
namespace indexing {

// x[None]: a new dimension of size 1. nullopt, so that Slice(None, 2) reads like Python's [:2].
constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
constexpr EllipsisIndexType Ellipsis{};

// start:stop:step, each optional as in Python
struct Slice {
  std::optional<int64_t> start, stop, step;
  Slice(std::optional<int64_t> start_ = std::nullopt, std::optional<int64_t> stop_ = std::nullopt,
        std::optional<int64_t> step_ = std::nullopt)
      : start(start_), stop(stop_), step(step_) {}
};

}  // namespace indexing

// One entry of a subscript: an integer, a bool, a slice, None, Ellipsis or an index tensor.
class TensorIndex {
 public:
  enum class Kind : uint8_t { None, Ellipsis, Integer, Boolean, Slice, Tensor };
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}
  TensorIndex(indexing::EllipsisIndexType) : kind_(Kind::Ellipsis) {}
  TensorIndex(const char* s);  // "..." as libtorch also accepts
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}
  TensorIndex(int i) : TensorIndex(int64_t(i)) {}
  TensorIndex(bool b) : kind_(Kind::Boolean), integer_(b) {}
  TensorIndex(indexing::Slice s) : kind_(Kind::Slice), slice_(s) {}
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return integer_ != 0; }
  const indexing::Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  indexing::Slice slice_;
  Tensor tensor_;
};

}  // namespace ember
