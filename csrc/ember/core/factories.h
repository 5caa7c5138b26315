#pragma once
// Factory spellings libtorch code uses beside the generated ops: options without a generator
// (randn({2, 3}, kFloat), randn(n, requires_grad())), option helpers (dtype(kFloat), device(d),
// requires_grad()), and tensor({...}) from nested braces of numbers.
#include <initializer_list>
#include <vector>

#include "ember/autograd/node.h"
#include "ember/generated/ops.h"

namespace ember {

inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }
inline TensorOptions requires_grad(bool on = true) { return TensorOptions().requires_grad(on); }

inline Tensor rand(IntArrayRef size, const TensorOptions& options) { return rand(size, nullptr, options); }
inline Tensor randn(IntArrayRef size, const TensorOptions& options) { return randn(size, nullptr, options); }
inline Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options) {
  return randint(high, size, nullptr, options);
}
inline Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options) {
  return randint(low, high, size, nullptr, options);
}
inline Tensor randperm(int64_t n, const TensorOptions& options) { return randperm(n, nullptr, options); }

// The values of tensor({...}): a number, or a brace list of equally shaped TensorData.
class TensorData {
 public:
  TensorData(double v) : scalar_(v), is_scalar_(true) {}
  TensorData(float v) : scalar_(double(v)), is_scalar_(true) {}
  TensorData(int v) : scalar_(int64_t(v)), is_scalar_(true) {}
  TensorData(int64_t v) : scalar_(v), is_scalar_(true) {}
  TensorData(bool v) : scalar_(v), is_scalar_(true) {}
  TensorData(std::initializer_list<TensorData> items) : items_(items) {}
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  TensorData(const std::vector<T>& values) : items_(values.begin(), values.end()) {}

  // Shape, checked to be rectangular, and the dtype the numbers imply (bool < int < float).
  std::vector<int64_t> sizes() const {
    if (is_scalar_) return {};
    std::vector<int64_t> out{int64_t(items_.size())};
    if (items_.empty()) return out;
    std::vector<int64_t> inner = items_[0].sizes();
    for (const TensorData& item : items_)
      EMBER_CHECK_KIND(item.sizes() == inner, Value, "tensor(): expected sequences of equal length, got ",
                       item.sizes().empty() ? 0 : item.sizes()[0], " after ", inner.empty() ? 0 : inner[0]);
    out.insert(out.end(), inner.begin(), inner.end());
    return out;
  }
  ScalarType inferred_dtype() const {
    if (is_scalar_) return scalar_.is_floating() ? default_dtype() : scalar_.is_bool() ? kBool : kLong;
    ScalarType t = kBool;
    bool any = false;
    for (const TensorData& item : items_) {
      ScalarType s = item.inferred_dtype();
      t = any ? promote_types(t, s) : s;
      any = true;
    }
    return any ? t : default_dtype();
  }
  // Appends the numbers in row-major order.
  void flatten(std::vector<Scalar>& out) const {
    if (is_scalar_) out.push_back(scalar_);
    for (const TensorData& item : items_) item.flatten(out);
  }

 private:
  Scalar scalar_;
  bool is_scalar_ = false;
  std::vector<TensorData> items_;
};

// tensor({1, 2, 3}) is int64, tensor({0.5, 1.0}) the default float dtype, unless options say otherwise.
inline Tensor tensor(const TensorData& data, const TensorOptions& options = {}) {
  std::vector<Scalar> values;
  data.flatten(values);
  ScalarType dtype = options.dtype_or(data.inferred_dtype());
  Tensor out = empty_tensor(data.sizes(), dtype);
  EMBER_DISPATCH_ALL(dtype, "tensor", [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data_ptr<T>();
    for (size_t i = 0; i < values.size(); ++i) p[i] = values[i].to<T>();
  });
  if (options.device_ && !options.device_->is_cpu()) out = out.to(*options.device_);
  if (options.requires_grad_) out.requires_grad_(true);
  return out;
}

}  // namespace ember
