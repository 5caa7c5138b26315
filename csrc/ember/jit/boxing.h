#pragma once
// Reading a node's arguments as C++ values, for the generated boxed ops (generated_jit.cpp) and
// the interpreter. A graph may come from a file: every read checks the argument's kind and says
// which op and argument was wrong, rather than trusting the file.
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/scalar.h"
#include "ember/core/tensor.h"
#include "ember/jit/ir.h"

namespace ember::jit {

using Env = std::vector<Tensor>;
using BoxedOp = void (*)(Env&, const Node&);
struct BoxedEntry {
  const char* schema;
  Variant variant;
  BoxedOp fn;
  size_t num_args;  // the schema's parameters (plus out= tensors)
};
const BoxedEntry* boxed_ops(size_t* n);  // generated
// The boxed op for a schema name and variant, or nullptr.
EMBER_API const BoxedEntry* find_boxed(const std::string& schema, Variant variant);

[[noreturn]] EMBER_API void bad_arg(const char* expected, const Arg& a);
EMBER_API void need_args(const Node& n, size_t count);

inline const Tensor& ten(const Env& e, const Arg& a) {
  static const Tensor undefined;
  if (a.kind == Arg::Kind::None) return undefined;
  if (a.kind != Arg::Kind::Value) bad_arg("a tensor", a);
  return e[size_t(a.i)];
}
inline std::vector<Tensor> tens(const Env& e, const Arg& a) {
  if (a.kind != Arg::Kind::Values) bad_arg("a tensor list", a);
  std::vector<Tensor> out;
  out.reserve(a.ints.size());
  for (int64_t id : a.ints) out.push_back(e[size_t(id)]);
  return out;
}
inline Scalar scal(const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::Int: return Scalar(a.i);
    case Arg::Kind::Float: return Scalar(a.f);
    case Arg::Kind::Bool: return Scalar(a.b);
    default: bad_arg("a number", a);
  }
}
inline std::optional<Scalar> oscal(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return scal(a);
}
inline int64_t integer(const Arg& a) {
  if (a.kind == Arg::Kind::Int) return a.i;
  if (a.kind == Arg::Kind::Bool) return a.b;
  bad_arg("an int", a);
}
inline std::optional<int64_t> ointeger(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return integer(a);
}
inline IntArrayRef ints(const Arg& a) {
  if (a.kind != Arg::Kind::Ints) bad_arg("an int list", a);
  return IntArrayRef(a.ints.data(), a.ints.size());
}
inline OptionalIntArrayRef oints(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return OptionalIntArrayRef(std::optional<IntArrayRef>(ints(a)));
}
inline double real(const Arg& a) {
  if (a.kind == Arg::Kind::Float) return a.f;
  if (a.kind == Arg::Kind::Int) return double(a.i);
  if (a.kind == Arg::Kind::Bool) return a.b;
  bad_arg("a float", a);
}
inline std::optional<double> oreal(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return real(a);
}
inline bool boolean(const Arg& a) {
  if (a.kind == Arg::Kind::Bool) return a.b;
  if (a.kind == Arg::Kind::Int) return a.i != 0;
  bad_arg("a bool", a);
}
inline std::optional<bool> oboolean(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return boolean(a);
}
inline std::string_view str(const Arg& a) {
  if (a.kind != Arg::Kind::Str) bad_arg("a string", a);
  return a.s;
}
inline std::optional<std::string_view> ostr(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return str(a);
}
inline ScalarType dtype(const Arg& a) {
  if (a.kind != Arg::Kind::Dtype) bad_arg("a dtype", a);
  return ScalarType(a.i);
}
inline std::optional<ScalarType> odtype(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  return dtype(a);
}
EMBER_API TensorOptions options(const Arg& a);
inline std::optional<MemoryFormat> omemory_format(const Arg& a) {
  if (a.kind == Arg::Kind::None) return std::nullopt;
  if (a.kind != Arg::Kind::MemoryFormat) bad_arg("a memory format", a);
  return MemoryFormat(a.i);
}

EMBER_API void put_results(Env& e, const Node& n, const Tensor* outs, size_t count);
inline void put(Env& e, const Node& n, const Tensor& t) { put_results(e, n, &t, 1); }
inline void put(Env& e, const Node& n, const std::vector<Tensor>& ts) { put_results(e, n, ts.data(), ts.size()); }
template <class... Ts>
void put(Env& e, const Node& n, const std::tuple<Ts...>& t) {
  std::apply([&](const auto&... xs) {
    const Tensor items[] = {xs...};
    put_results(e, n, items, sizeof...(xs));
  }, t);
}

}  // namespace ember::jit
