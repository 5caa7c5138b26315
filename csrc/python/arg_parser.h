#pragma once
// The Python side of every generated binding: a fast argument parser over vectorcall arguments
// (PyTorch's Python signatures: overloads, keyword-only args, defaults, int lists given as
// varargs, numbers accepted where a Tensor is expected) and the Tensor <-> PyObject glue.
#include <Python.h>
#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/random/generator.h"
#include "python/exceptions.h"

namespace ember::py {

// ---- Tensor objects
PyTypeObject* tensor_type();
void set_tensor_type(PyTypeObject* t);
void set_tensor_class(PyTypeObject* t);  // the Python class `ember.Tensor` that results are made of
inline bool is_tensor(PyObject* o) { return Py_TYPE(o) == tensor_type() || PyObject_TypeCheck(o, tensor_type()); }
const Tensor& unpack(PyObject* o);            // o must be a Tensor object
PyObject* wrap(Tensor t);                     // new reference; None for an undefined tensor
PyObject* wrap_list(const std::vector<Tensor>& ts);  // tuple
template <class... Ts>
PyObject* wrap_tuple(const std::tuple<Ts...>& ts) {
  PyObject* tup = PyTuple_New(Py_ssize_t(sizeof...(Ts)));
  Py_ssize_t i = 0;
  std::apply([&](const auto&... t) { ((PyTuple_SET_ITEM(tup, i++, wrap(t))), ...); }, ts);
  return tup;
}
PyObject* wrap_named_list(const std::vector<Tensor>& ts, const char* name, std::initializer_list<const char*> fields);
// Every named result type the generated bindings use (codegen's table, ending with a null name), so
// ember.return_types can list them before any op has run.
struct GeneratedReturnType {
  const char* name;
  const char* fields[6];
};
extern const GeneratedReturnType generated_return_types[];
PyObject* return_types_dict();  // {name: type}
template <class... Ts>
PyObject* wrap_named(const std::tuple<Ts...>& ts, const char* name, std::initializer_list<const char*> fields) {
  std::vector<Tensor> v;
  std::apply([&](const auto&... t) { (v.push_back(t), ...); }, ts);
  return wrap_named_list(v, name, fields);
}
inline PyObject* incref(PyObject* o) { Py_INCREF(o); return o; }
// The result of an op called with out=(a, b): those tensor objects, as torch.return_types.<name>
// (a plain tuple when `fields` is empty).
PyObject* wrap_out_tuple(PyObject* outs, const char* name, std::initializer_list<const char*> fields);

// Python number -> Scalar; false if `o` is not a number (bool, int, float, numpy scalar, 0-d tensor).
bool to_scalar(PyObject* o, Scalar* out);
// Python number -> wrapped 0-d tensor (does not decide the result dtype).
Tensor number_to_tensor(PyObject* o);

// dtype / device / generator objects, registered by the module.
bool is_dtype(PyObject* o);
ScalarType unpack_dtype(PyObject* o);
PyObject* wrap_dtype(ScalarType t);  // borrowed singleton
void register_dtype_objects(PyObject* type, PyObject* const* objects);
bool is_device(PyObject* o);
Device unpack_device(PyObject* o);
// PyTorch's error for pin_memory=True without an accelerator
inline constexpr const char* kNoPinnedMemory =
    "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available on this "
    "system.";
void register_device_type(PyObject* type);
// An ember.memory_format object (its .name) as the core's MemoryFormat; raises for an unknown one.
MemoryFormat unpack_memory_format(PyObject* o);
// The device factory calls use when they name none (nullopt: the CPU).
void set_default_device(std::optional<Device> d);
std::optional<Device> default_device();
// pin_memory=True for a new tensor on `device`: raises as PyTorch where pinning is impossible
void check_pin_memory_request(Device device);
PyObject* make_device(Device d);
bool is_generator(PyObject* o);
Generator* unpack_generator(PyObject* o);
void register_generator_type(PyObject* type);
PyObject* size_type();
void register_size_type(PyObject* type);
PyObject* make_size(IntArrayRef sizes);  // ember.Size

// ---- the parser
enum class ArgType {
  Tensor, Scalar, Int, IntList, Float, Bool, String, Dtype, Generator, Device, Layout, TensorList, MemoryFormat,
};

struct Param {
  ArgType type;
  std::string name;
  bool optional = false;   // None accepted
  bool kwonly = false;
  bool has_default = false;
  int list_size = 0;       // int[N]: a single int is accepted
  bool number_ok = false;  // Tensor: a Python number is accepted (PyTorch's Scalar overloads, see arg_parser.cpp)
  bool number_by_overload = false;  // ... through a Scalar overload of this argument alone (not all numbers)
  bool tensor_ok = false;  // Scalar / Int: any Tensor passes parsing; a non-0-d one raises RuntimeError when read
  // parsed default
  Scalar default_scalar;
  int64_t default_int = 0;
  double default_float = 0;
  bool default_bool = false;
  std::vector<int64_t> default_ints;
  std::string default_str;
  bool default_none = false;
};

struct Signature {
  std::string name, text;
  std::vector<Param> params;
  int max_positional = 0;
  bool varargs_intlist = false;  // the only positional is an int list: f(2, 3) == f((2, 3))
};

constexpr int kMaxArgs = 24;

class ParsedArgs {
 public:
  PyObject* args[kMaxArgs];
  const Signature* sig = nullptr;
  PyObject* self = nullptr;  // the tensor a method is called on (nullptr for functions)
  nanobind::object owned;  // a tuple the parser built (varargs int lists)
  // When parse() returns -1: what an argument's __torch_function__ returned for the call (a new reference).
  PyObject* override_result = nullptr;

  PyObject* obj(int i) const { return args[i]; }
  bool is_none(int i) const { return args[i] == nullptr || args[i] == Py_None; }

  const Tensor& tensor(int i);
  const Tensor& tensor_opt(int i) { return is_none(i) ? undefined_ : tensor(i); }
  std::vector<Tensor> tensorlist(int i);
  Scalar scalar(int i);
  std::optional<Scalar> scalar_opt(int i);
  int64_t int64(int i);
  std::optional<int64_t> int64_opt(int i);
  IntArrayRef intlist(int i);
  OptionalIntArrayRef intlist_opt(int i);
  double float64(int i);
  std::optional<double> float64_opt(int i);
  bool boolean(int i);
  std::optional<bool> boolean_opt(int i);
  std::string_view string(int i);
  std::optional<std::string_view> string_opt(int i);
  ScalarType dtype(int i);
  std::optional<ScalarType> dtype_opt(int i);
  Generator* generator(int i);
  // device None: the default device (set_default_device) when `use_default_device` (factories; not
  // the *_like and new_* ones, whose device is their tensor's)
  TensorOptions options(int i, bool use_default_device = true);  // reads dtype, layout, device, pin_memory, requires_grad at i..i+4
  std::optional<MemoryFormat> memory_format_opt(int i);
  // A factory's result, in pinned memory when options() read pin_memory=True (one host copy: the
  // ops allocate from the device's allocator).
  Tensor pinned_if_asked(Tensor t) const;

 private:
  Tensor tmp_[kMaxArgs];
  std::vector<int64_t> ints_[kMaxArgs];
  Tensor undefined_;
  bool pin_memory_ = false;
};

class ArgParser {
 public:
  ArgParser(std::initializer_list<const char*> signatures, bool method);
  // Matches the call against each signature in order; returns the index of the first match or
  // raises TypeError like PyTorch ("... received an invalid combination of arguments ..."). When no
  // signature matches and an argument that is not a Tensor has __torch_function__ (a tensor-like type,
  // torch.fx's Proxy), the call goes to it (PyTorch's protocol): -1, its answer in out.override_result.
  int parse(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, ParsedArgs& out);

 private:
  bool try_parse(const Signature& s, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, ParsedArgs& out,
                 std::string* err, bool strict = false);
  std::vector<Signature> sigs_;
  bool method_;
};

// Type check used by the parser and by hand-written bindings. A Python number matches a Tensor
// parameter when the parameter allows it (p.number_ok) or allow_number_as_tensor is set.
// strict: a 0-d integer tensor does not count as an int (see ArgParser::parse).
bool arg_matches(const Param& p, PyObject* o, bool allow_number_as_tensor = false, bool strict = false);
std::string type_name(PyObject* o);

}  // namespace ember::py

#define EMBER_PY_TRY try {
#define EMBER_PY_CATCH                   \
  }                                      \
  catch (...) {                          \
    ::ember::py::set_python_error();     \
    return nullptr;                      \
  }
