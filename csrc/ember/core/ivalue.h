#pragma once
// A value of any type with libtorch's typed accessors (ctx->saved_data["k"].toDouble()). It is a
// std::any, so std::any_cast keeps working on it.
#include <any>
#include <memory>
#include <string>
#include <typeinfo>

#include "ember/core/tensor.h"

namespace ember {
namespace jit {
struct Tuple;  // ember/jit/module.h: a traced graph's tuple result
}

class IValue : public std::any {
 public:
  using std::any::any;
  IValue() = default;

  bool isDouble() const { return type() == typeid(double) || type() == typeid(float); }
  bool isInt() const { return type() == typeid(int64_t) || type() == typeid(int); }
  bool isBool() const { return type() == typeid(bool); }
  bool isTensor() const { return type() == typeid(Tensor); }
  bool isString() const { return type() == typeid(std::string); }
  bool isNone() const { return !has_value(); }
  bool isTuple() const { return type() == typeid(std::shared_ptr<jit::Tuple>); }

  double toDouble() const {
    if (type() == typeid(float)) return std::any_cast<float>(*this);
    return get<double>("Double");
  }
  int64_t toInt() const {
    if (type() == typeid(int)) return std::any_cast<int>(*this);
    return get<int64_t>("Int");
  }
  bool toBool() const { return get<bool>("Bool"); }
  Tensor toTensor() const { return get<Tensor>("Tensor"); }
  std::shared_ptr<jit::Tuple> toTuple() const { return get<std::shared_ptr<jit::Tuple>>("Tuple"); }
  const std::string& toStringRef() const {
    const auto* s = std::any_cast<std::string>(static_cast<const std::any*>(this));
    EMBER_CHECK(s, "expected String but got ", type().name());
    return *s;
  }

 private:
  template <class T> T get(const char* what) const {
    const T* v = std::any_cast<T>(static_cast<const std::any*>(this));
    EMBER_CHECK(v, "expected ", what, " but got ", has_value() ? type().name() : "None");
    return *v;
  }
};

}  // namespace ember
