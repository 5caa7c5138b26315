#include "python/arg_parser.h"

#include <algorithm>

#include "ember/cuda/cuda.h"

#include <nanobind/nanobind.h>

#include <cmath>
#include <cstring>
#include <sstream>

namespace nb = nanobind;

namespace ember::py {

// ---------------------------------------------------------------- registered Python types
static PyTypeObject* g_tensor_type = nullptr;   // _C.TensorBase: for type checks
static PyTypeObject* g_tensor_class = nullptr;  // ember.Tensor (Python subclass): what ops return
static PyObject* g_dtype_type = nullptr;
static PyObject* g_dtype_objects[kNumDtypes] = {};
static PyObject* g_device_type = nullptr;
static PyObject* g_generator_type = nullptr;
static PyObject* g_size_type = nullptr;

PyTypeObject* tensor_type() { return g_tensor_type; }
void set_tensor_type(PyTypeObject* t) { g_tensor_type = t; }
void set_tensor_class(PyTypeObject* t) { g_tensor_class = t; Py_INCREF(t); }

const Tensor& unpack(PyObject* o) { return *nb::inst_ptr<Tensor>(nb::handle(o)); }

PyObject* wrap(Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  nb::object o = nb::inst_alloc(nb::handle((PyObject*)(g_tensor_class ? g_tensor_class : g_tensor_type)));
  new (nb::inst_ptr<Tensor>(o)) Tensor(std::move(t));
  nb::inst_mark_ready(o);
  return o.release().ptr();
}

PyObject* wrap_list(const std::vector<Tensor>& ts) {
  PyObject* tup = PyTuple_New(Py_ssize_t(ts.size()));
  if (!tup) throw nb::python_error();
  for (size_t i = 0; i < ts.size(); i++) PyTuple_SET_ITEM(tup, Py_ssize_t(i), wrap(ts[i]));
  return tup;
}


// torch.return_types.<name>(values=..., indices=...) as a struct sequence, one type per name.
PyTypeObject* named_tuple_type(const char* name, const std::vector<const char*>& fields) {
  static std::vector<std::pair<std::string, PyTypeObject*>> types;
  for (auto& [n, t] : types)
    if (n == name) return t;
  auto* f = new PyStructSequence_Field[fields.size() + 1];
  size_t i = 0;
  for (const char* fn : fields) f[i++] = {fn, nullptr};
  f[i] = {nullptr, nullptr};
  std::string* qual = new std::string(std::string("ember.return_types.") + name);
  std::string base(name);
  const bool out = base.size() > 4 && base.compare(base.size() - 4, 4, "_out") == 0;
  std::string* doc = new std::string("Named tuple (");
  for (size_t k = 0; k < fields.size(); k++) *doc += (k ? ", " : "") + std::string(fields[k]);
  *doc += ") returned by " + (out ? base.substr(0, base.size() - 4) + " with out=" : base) + ".";
  auto* desc = new PyStructSequence_Desc{qual->c_str(), doc->c_str(), f, int(fields.size())};
  PyTypeObject* type = PyStructSequence_NewType(desc);
  if (!type) throw nb::python_error();
  types.emplace_back(name, type);
  return type;
}

PyObject* wrap_named_list(const std::vector<Tensor>& ts, const char* name, std::initializer_list<const char*> fields) {
  PyObject* r = PyStructSequence_New(named_tuple_type(name, std::vector<const char*>(fields)));
  if (!r) throw nb::python_error();
  for (size_t i = 0; i < ts.size(); i++) PyStructSequence_SetItem(r, Py_ssize_t(i), wrap(ts[i]));
  return r;
}

PyObject* return_types_dict() {
  PyObject* d = PyDict_New();
  if (!d) throw nb::python_error();
  for (const GeneratedReturnType* t = generated_return_types; t->name; t++) {
    std::vector<const char*> fields;
    for (const char* f : t->fields)
      if (f) fields.push_back(f);
    if (PyDict_SetItemString(d, t->name, (PyObject*)named_tuple_type(t->name, fields)) < 0) {
      Py_DECREF(d);
      throw nb::python_error();
    }
  }
  return d;
}

PyObject* wrap_out_tuple(PyObject* outs, const char* name, std::initializer_list<const char*> fields) {
  Py_ssize_t n = PySequence_Fast_GET_SIZE(outs);
  PyObject** items = PySequence_Fast_ITEMS(outs);
  if (fields.size() == 0) {
    PyObject* tup = PyTuple_New(n);
    if (!tup) throw nb::python_error();
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(tup, i, incref(items[i]));
    return tup;
  }
  std::vector<Tensor> ts;
  for (Py_ssize_t i = 0; i < n; i++) ts.push_back(unpack(items[i]));
  PyObject* r = wrap_named_list(ts, name, fields);  // then the very objects passed in, not new wrappers
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* old = PyStructSequence_GET_ITEM(r, i);
    PyStructSequence_SET_ITEM(r, i, incref(items[i]));
    Py_DECREF(old);
  }
  return r;
}

bool is_dtype(PyObject* o) { return g_dtype_type && Py_TYPE(o) == (PyTypeObject*)g_dtype_type; }
ScalarType unpack_dtype(PyObject* o) {
  for (int i = 0; i < kNumDtypes; i++)
    if (g_dtype_objects[i] == o) return ScalarType(i);
  if (o == (PyObject*)&PyFloat_Type) return kDouble;
  if (o == (PyObject*)&PyLong_Type) return kLong;
  if (o == (PyObject*)&PyBool_Type) return kBool;
  EMBER_FAIL(Type, "expected a dtype, got ", type_name(o));
}
PyObject* wrap_dtype(ScalarType t) { return g_dtype_objects[int(t)]; }
void register_dtype_objects(PyObject* type, PyObject* const* objects) {
  g_dtype_type = type;
  for (int i = 0; i < kNumDtypes; i++) {
    g_dtype_objects[i] = objects[i];
    Py_INCREF(objects[i]);
  }
}

bool is_device(PyObject* o) { return g_device_type && PyObject_TypeCheck(o, (PyTypeObject*)g_device_type); }
Device unpack_device(PyObject* o) {
  if (PyUnicode_Check(o)) return Device(std::string(PyUnicode_AsUTF8(o)));
  // a bare int names an accelerator device, and a CPU-only build has none (PyTorch's error)
  EMBER_CHECK(!PyLong_Check(o), "Cannot access accelerator device when none is available.");
  if (is_device(o)) return *nb::inst_ptr<Device>(nb::handle(o));
  EMBER_FAIL(Type, "expected a device, got ", type_name(o));
}
void register_device_type(PyObject* type) { g_device_type = type; }
PyObject* make_device(Device d) { return nb::cast(d).release().ptr(); }

bool is_generator(PyObject* o) { return g_generator_type && PyObject_TypeCheck(o, (PyTypeObject*)g_generator_type); }
Generator* unpack_generator(PyObject* o) {
  if (o == nullptr || o == Py_None) return nullptr;
  return nb::inst_ptr<Generator>(nb::handle(o));
}
void register_generator_type(PyObject* type) { g_generator_type = type; }

PyObject* size_type() { return g_size_type; }
void register_size_type(PyObject* type) { g_size_type = type; Py_INCREF(type); }
PyObject* make_size(IntArrayRef sizes) {
  PyObject* tup = PyTuple_New(Py_ssize_t(sizes.size()));
  if (!tup) throw nb::python_error();
  for (size_t i = 0; i < sizes.size(); i++) PyTuple_SET_ITEM(tup, Py_ssize_t(i), PyLong_FromLongLong(sizes[i]));
  if (!g_size_type) return tup;
  PyObject* r = PyObject_CallOneArg(g_size_type, tup);
  Py_DECREF(tup);
  if (!r) throw nb::python_error();
  return r;
}

std::string type_name(PyObject* o) {
  if (o == Py_None) return "NoneType";
  if (is_tensor(o)) return "Tensor";
  return Py_TYPE(o)->tp_name;
}

// ---------------------------------------------------------------- numbers
static bool is_int_like(PyObject* o) {
  if (PyLong_Check(o)) return !PyBool_Check(o);
  if (is_tensor(o)) return false;
  return PyIndex_Check(o) && !PyFloat_Check(o);  // numpy integers
}

bool to_scalar(PyObject* o, Scalar* out) {
  if (PyBool_Check(o)) { *out = Scalar(o == Py_True); return true; }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      // Beyond uint64: Python's OverflowError, as PyTorch. [2**63, 2**64) fits PyTorch's unsigned
      // Scalars, which Ember's Scalar cannot hold: a RuntimeError here.
      unsigned long long u = PyLong_AsUnsignedLongLong(o);
      if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_OverflowError, "int too big to convert");
        throw nb::python_error();
      }
      EMBER_FAIL(Runtime, "Overflow when unpacking long");
    }
    *out = Scalar(int64_t(v));
    return true;
  }
  if (PyFloat_Check(o)) { *out = Scalar(PyFloat_AS_DOUBLE(o)); return true; }
  if (PyComplex_Check(o)) {
    *out = Scalar(std::complex<double>(PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)));
    return true;
  }
  if (is_tensor(o)) {
    const Tensor& t = unpack(o);
    if (t.numel() != 1 || t.dim() != 0) return false;
    *out = t.item();
    return true;
  }
  // numpy scalars (not arrays) and other numbers
  const char* tn = Py_TYPE(o)->tp_name;
  if (std::strncmp(tn, "numpy.", 6) == 0 && std::strcmp(tn, "numpy.ndarray") != 0) {
    if (std::strcmp(tn, "numpy.bool") == 0 || std::strcmp(tn, "numpy.bool_") == 0) {
      *out = Scalar(bool(PyObject_IsTrue(o)));
      return true;
    }
    if (PyIndex_Check(o)) {
      PyObject* i = PyNumber_Index(o);
      if (!i) throw nb::python_error();
      long long v = PyLong_AsLongLong(i);
      Py_DECREF(i);
      *out = Scalar(int64_t(v));
      return true;
    }
    if (std::strncmp(tn, "numpy.complex", 13) == 0) {
      Py_complex z = PyComplex_AsCComplex(o);
      if (z.real == -1.0 && PyErr_Occurred()) throw nb::python_error();
      *out = Scalar(std::complex<double>(z.real, z.imag));
      return true;
    }
    if (Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float) {
      double d = PyFloat_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
      *out = Scalar(d);
      return true;
    }
  }
  return false;
}

Tensor number_to_tensor(PyObject* o) {
  Scalar s;
  if (!to_scalar(o, &s)) EMBER_FAIL(Type, "expected a number, got ", type_name(o));
  return scalar_to_tensor(s);
}

static bool is_number(PyObject* o) {
  if (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) || PyComplex_Check(o)) return true;
  const char* tn = Py_TYPE(o)->tp_name;
  return std::strncmp(tn, "numpy.", 6) == 0 && (PyIndex_Check(o) || PyFloat_Check(o) ||
                                                 std::strncmp(tn, "numpy.bool", 10) == 0 ||
                                                 std::strncmp(tn, "numpy.float", 11) == 0 ||
                                                 std::strncmp(tn, "numpy.complex", 13) == 0);
}

// ---------------------------------------------------------------- signature parsing
static Param parse_param(const std::string& text, bool kwonly) {
  Param p;
  p.kwonly = kwonly;
  auto sp = text.find(' ');
  std::string type = text.substr(0, sp), rest = text.substr(sp + 1);
  auto eq = rest.find('=');
  p.name = rest.substr(0, eq);
  std::string def = eq == std::string::npos ? "" : rest.substr(eq + 1);
  p.has_default = eq != std::string::npos;
  if (!type.empty() && type.back() == '?') {
    p.optional = true;
    type.pop_back();
  }
  if (type.rfind("int[", 0) == 0) {
    p.type = ArgType::IntList;
    std::string n = type.substr(4, type.size() - 5);
    p.list_size = n.empty() ? 0 : std::stoi(n);
  } else if (type == "Tensor") p.type = ArgType::Tensor;
  else if (type == "Tensor[]") p.type = ArgType::TensorList;
  else if (type == "Scalar") p.type = ArgType::Scalar;
  else if (type == "int") p.type = ArgType::Int;
  else if (type == "float") p.type = ArgType::Float;
  else if (type == "bool") p.type = ArgType::Bool;
  else if (type == "str") p.type = ArgType::String;
  else if (type == "ScalarType") p.type = ArgType::Dtype;
  else if (type == "Generator") p.type = ArgType::Generator;
  else if (type == "Device") p.type = ArgType::Device;
  else if (type == "Layout") p.type = ArgType::Layout;
  else if (type == "MemoryFormat") p.type = ArgType::MemoryFormat;
  else throw std::runtime_error("ember: unknown argument type in signature: " + type);
  if (!p.has_default) return p;
  if (def == "None") { p.default_none = true; p.optional = true; return p; }
  switch (p.type) {
    case ArgType::Scalar:
      if (def.find_first_of(".e") != std::string::npos) p.default_scalar = Scalar(std::stod(def));
      else if (def == "True" || def == "False") p.default_scalar = Scalar(def == "True");
      else p.default_scalar = Scalar(int64_t(std::stoll(def)));
      break;
    case ArgType::Int: p.default_int = std::stoll(def); break;
    case ArgType::Float: p.default_float = std::stod(def); break;
    case ArgType::Bool: p.default_bool = def == "True"; break;
    case ArgType::String: p.default_str = def.substr(1, def.size() - 2); break;
    case ArgType::IntList: {
      std::string body = def;
      if (!body.empty() && body.front() == '[') body = body.substr(1, body.size() - 2);
      std::stringstream ss(body);
      std::string item;
      while (std::getline(ss, item, ',')) if (!item.empty()) p.default_ints.push_back(std::stoll(item));
      if (p.list_size > 1 && p.default_ints.size() == 1) p.default_ints.assign(size_t(p.list_size), p.default_ints[0]);
      break;
    }
    default: break;
  }
  return p;
}

// Which Tensor parameters accept a Python number, as PyTorch's Python API does. PyTorch binds some
// ops with "numbers as tensors" for every Tensor argument (add, sub, mul, div, ...), and others
// through Scalar overloads of particular arguments (eq(Tensor, Scalar), remainder(Scalar, Tensor),
// clamp(Tensor, Scalar?, Scalar?), ...). Elsewhere (maximum, atan2, logical_and, ...) a number is
// a TypeError. Ember declares such arguments as Tensor in ops.yaml; this table restores the rule.
enum class NumberAsTensor { No, EveryArg, ByOverload };
static NumberAsTensor tensor_param_takes_number(std::string op, const std::string& param) {
  if (op.size() > 1 && op.back() == '_') op.pop_back();  // add_ -> add
  static const char* every_arg[] = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
                                    "floor_divide", "copy"};
  for (const char* n : every_arg)
    if (op == n) return NumberAsTensor::EveryArg;
  // (op, parameter) pairs covered by a Scalar overload in PyTorch
  static const char* pairs[][2] = {
      {"remainder", "other"}, {"remainder", "input"}, {"fmod", "other"},
      {"pow", "exponent"}, {"pow", "input"}, {"float_power", "exponent"}, {"float_power", "input"},
      {"eq", "other"}, {"ne", "other"}, {"lt", "other"}, {"le", "other"}, {"gt", "other"}, {"ge", "other"},
      {"not_equal", "other"}, {"less", "other"}, {"less_equal", "other"}, {"greater", "other"},
      {"greater_equal", "other"},
      {"bitwise_and", "other"}, {"bitwise_or", "other"}, {"bitwise_xor", "other"},
      {"bitwise_left_shift", "other"}, {"bitwise_right_shift", "other"},
      {"bitwise_and", "input"}, {"bitwise_or", "input"}, {"bitwise_xor", "input"},
      {"bitwise_left_shift", "input"}, {"bitwise_right_shift", "input"},
      {"clamp", "min"}, {"clamp", "max"}, {"clip", "min"}, {"clip", "max"},
      {"clamp_min", "min"}, {"clamp_max", "max"},
      {"lerp", "weight"}, {"bernoulli", "p"},
  };
  for (auto& pr : pairs)
    if (op == pr[0] && param == pr[1]) return NumberAsTensor::ByOverload;
  return NumberAsTensor::No;
}

// Scalar and int parameters that PyTorch also binds as a Tensor overload (fill_(Tensor value),
// masked_fill(mask, Tensor value), linspace/logspace(Tensor start, Tensor end), narrow(Tensor start)): any
// tensor parses, and one that is not 0-d (an int's: 0-d integral) is a RuntimeError when read.
static bool param_takes_tensor(std::string op, const std::string& param, ArgType type) {
  if (op.size() > 1 && op.back() == '_') op.pop_back();
  if (type == ArgType::Int) return param == "start" && op == "narrow";
  return type == ArgType::Scalar && ((param == "value" && (op == "fill" || op == "masked_fill")) ||
                                     ((param == "start" || param == "end") && (op == "linspace" || op == "logspace")));
}

static Signature parse_signature(const char* text) {
  Signature s;
  s.text = text;
  std::string t(text);
  auto lp = t.find('(');
  s.name = t.substr(0, lp);
  std::string body = t.substr(lp + 1, t.rfind(')') - lp - 1);
  bool kwonly = false;
  // split on the commas outside brackets (a list default: int[] dims=[0,1])
  std::vector<std::string> items(1);
  int depth = 0;
  for (char ch : body) {
    if (ch == ',' && depth == 0) { items.emplace_back(); continue; }
    depth += (ch == '[') - (ch == ']');
    items.back() += ch;
  }
  for (std::string item : items) {
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    if (item.empty()) continue;
    if (item == "*") { kwonly = true; continue; }
    s.params.push_back(parse_param(item, kwonly));
    Param& p = s.params.back();
    if (p.type == ArgType::Tensor) {
      const NumberAsTensor how = tensor_param_takes_number(s.name, p.name);
      p.number_ok = how != NumberAsTensor::No;
      p.number_by_overload = how == NumberAsTensor::ByOverload;
    }
    p.tensor_ok = param_takes_tensor(s.name, p.name, p.type);
    if (!kwonly) s.max_positional++;
  }
  // f(2, 3) == f((2, 3)) only when the int list is the one positional parameter, as in PyTorch
  // (x.view(2, 3), torch.zeros(2, 3); but x.roll(1, 0) is shifts=1, dims=0).
  s.varargs_intlist = s.max_positional == 1 && s.params[0].type == ArgType::IntList && !s.params[0].kwonly;
  return s;
}

ArgParser::ArgParser(std::initializer_list<const char*> signatures, bool method) : method_(method) {
  for (const char* s : signatures) sigs_.push_back(parse_signature(s));
}

// ---------------------------------------------------------------- matching
bool arg_matches(const Param& p, PyObject* o, bool allow_number_as_tensor, bool strict) {
  if (o == Py_None) return p.optional;
  switch (p.type) {
    case ArgType::Tensor: return is_tensor(o) || ((allow_number_as_tensor || p.number_ok) && is_number(o));
    case ArgType::Scalar: {
      if (is_number(o)) return true;
      return is_tensor(o) && (p.tensor_ok || unpack(o).dim() == 0);
    }
    case ArgType::Int:
      if (is_int_like(o) || (p.tensor_ok && is_tensor(o))) return true;
      if (is_tensor(o) && !strict) { const Tensor& t = unpack(o); return t.dim() == 0 && is_integral(t.dtype(), false); }
      return false;
    case ArgType::Float: return PyFloat_Check(o) || is_int_like(o) || PyBool_Check(o) ||  // bool is an int, as in torch
                                (is_number(o) && !PyComplex_Check(o) &&
                                 std::strncmp(Py_TYPE(o)->tp_name, "numpy.complex", 13) != 0) ||
                                (is_tensor(o) && unpack(o).numel() == 1 && !is_complex(unpack(o).dtype()));
    case ArgType::Bool: return PyBool_Check(o) || std::strncmp(Py_TYPE(o)->tp_name, "numpy.bool", 10) == 0;
    case ArgType::String: return PyUnicode_Check(o);
    case ArgType::Dtype: return is_dtype(o) || o == (PyObject*)&PyFloat_Type || o == (PyObject*)&PyLong_Type ||
                                o == (PyObject*)&PyBool_Type;
    case ArgType::Generator: return is_generator(o);
    case ArgType::Device: return PyUnicode_Check(o) || is_device(o) || is_int_like(o);
    case ArgType::Layout: return true;
    case ArgType::MemoryFormat: return std::strcmp(Py_TYPE(o)->tp_name, "memory_format") == 0;
    case ArgType::IntList: {
      if (p.list_size > 0 && is_int_like(o)) return true;
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      PyObject** items = PySequence_Fast_ITEMS(o);
      for (Py_ssize_t i = 0; i < n; i++) {
        if (is_int_like(items[i])) continue;
        if (!strict && is_tensor(items[i]) && unpack(items[i]).numel() == 1 &&
            is_integral(unpack(items[i]).dtype(), false))
          continue;
        return false;
      }
      return true;
    }
    case ArgType::TensorList: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      PyObject** items = PySequence_Fast_ITEMS(o);
      for (Py_ssize_t i = 0; i < n; i++)
        if (!is_tensor(items[i])) return false;
      return true;
    }
  }
  return false;
}

static const char* type_label(const Param& p) {
  switch (p.type) {
    case ArgType::Tensor: return "Tensor";
    case ArgType::Scalar: return "Number";
    case ArgType::Int: return "int";
    case ArgType::IntList: return "tuple of ints";
    case ArgType::Float: return "float";
    case ArgType::Bool: return "bool";
    case ArgType::String: return "str";
    case ArgType::Dtype: return "torch.dtype";
    case ArgType::Generator: return "torch.Generator";
    case ArgType::Device: return "torch.device";
    case ArgType::Layout: return "torch.layout";
    case ArgType::MemoryFormat: return "torch.memory_format";
    case ArgType::TensorList: return "tuple of Tensors";
  }
  return "?";
}

bool ArgParser::try_parse(const Signature& s, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                          ParsedArgs& out, std::string* err, bool strict) {
  const size_t np = s.params.size();
  const Py_ssize_t kwbase = nargs;  // keyword values follow the positionals in `args`
  for (size_t i = 0; i < np; i++) out.args[i] = nullptr;
  // f(2, 3) for f(int[] size): gather the positionals into one tuple
  PyObject* gathered = nullptr;
  if (s.varargs_intlist && nargs >= 1 && is_int_like(args[0])) {
    bool all_ints = true;
    for (Py_ssize_t i = 0; i < nargs && all_ints; i++) all_ints = is_int_like(args[i]);
    if (all_ints && (nargs > 1 || s.params[0].list_size == 0)) {
      gathered = PyTuple_New(nargs);
      for (Py_ssize_t i = 0; i < nargs; i++) { Py_INCREF(args[i]); PyTuple_SET_ITEM(gathered, i, args[i]); }
      out.owned = nb::steal(gathered);  // alive as long as the parsed arguments
      out.args[0] = gathered;
      nargs = 0;
      if (s.params.size() == 0) return false;
    }
  }
  Py_ssize_t pos_start = gathered ? 1 : 0;
  if (nargs > s.max_positional - pos_start) {
    if (err) *err = s.name + "() takes " + std::to_string(s.max_positional) + " positional argument(s) but " +
                    std::to_string(nargs) + " were given";
    return false;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) {
    const Param& p = s.params[size_t(i + pos_start)];
    if (!arg_matches(p, args[i], false, strict)) {
      if (err) *err = s.name + "(): argument '" + p.name + "' (position " + std::to_string(i + 1) + ") must be " +
                      type_label(p) + ", not " + type_name(args[i]);
      return false;
    }
    out.args[i + pos_start] = args[i];
  }
  if (kwnames) {
    Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nk; k++) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      PyObject* val = args[kwbase + k];
      const char* kname = PyUnicode_AsUTF8(key);
      size_t idx = np;
      for (size_t i = 0; i < np; i++)
        if (s.params[i].name == kname) { idx = i; break; }
      if (idx == np) {
        // NumPy-style spellings PyTorch also accepts: axis=, keepdims=, x=/a=/x1= (input), x2= (other)
        const char* alias = nullptr;
        if (!std::strcmp(kname, "axis")) alias = "dim";
        else if (!std::strcmp(kname, "keepdims")) alias = "keepdim";
        else if (!std::strcmp(kname, "self") || !std::strcmp(kname, "x") || !std::strcmp(kname, "a") ||
                 !std::strcmp(kname, "x1")) alias = "input";
        else if (!std::strcmp(kname, "x2")) alias = "other";
        if (alias)
          for (size_t i = 0; i < np; i++)
            if (s.params[i].name == alias) { idx = i; break; }
      }
      if (idx == np) {
        if (err) *err = s.name + "() got an unexpected keyword argument '" + kname + "'";
        return false;
      }
      if (out.args[idx]) {
        if (err) *err = s.name + "() got multiple values for argument '" + kname + "'";
        return false;
      }
      if (!arg_matches(s.params[idx], val, false, strict)) {
        if (err) *err = s.name + "(): argument '" + s.params[idx].name + "' must be " + type_label(s.params[idx]) +
                        ", not " + type_name(val);
        return false;
      }
      out.args[idx] = val;
    }
  }
  for (size_t i = 0; i < np; i++) {
    // a parameter without a default is required even when it takes None (sum(x, dim=None) vs sum(x))
    if (!out.args[i] && !s.params[i].has_default) {
      if (err) *err = s.name + "() missing 1 required positional arguments: \"" + s.params[i].name + "\"";
      return false;
    }
  }
  // a Scalar overload takes a number for one tensor argument, never for all of them: remainder(2, 3)
  // and bitwise_and(2, 3) are TypeErrors in PyTorch, where add(2, 3) (numbers as tensors) is not
  bool by_overload = false, all_numbers = true;
  int tensors = 0;
  for (size_t i = 0; i < np; i++) {
    if (s.params[i].type != ArgType::Tensor || !out.args[i] || out.args[i] == Py_None) continue;
    tensors++;
    by_overload = by_overload || s.params[i].number_by_overload;
    all_numbers = all_numbers && !is_tensor(out.args[i]);
  }
  if (!method_ && by_overload && all_numbers && tensors >= 2) {  // (a method's self is a tensor)
    if (err) *err = s.name + "(): expected a Tensor among its arguments, got only numbers";
    return false;
  }
  out.sig = &s;
  return true;
}

namespace {

// An argument that takes the call over: not a Tensor (nor None, a number or a string), and its type has
// __torch_function__.
bool overloads(PyObject* o) {
  if (o == Py_None || is_tensor(o) || PyLong_Check(o) || PyFloat_Check(o) || PyUnicode_Check(o) || PyBool_Check(o))
    return false;
  return PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(o)), "__torch_function__");
}

void collect_overloads(PyObject* o, std::vector<PyObject*>& types) {
  if (PyList_Check(o) || PyTuple_Check(o)) {  // tensor lists: cat([proxy, proxy])
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    for (Py_ssize_t i = 0; i < n; i++) collect_overloads(PySequence_Fast_ITEMS(o)[i], types);
    return;
  }
  if (!overloads(o)) return;
  PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(o));
  if (std::find(types.begin(), types.end(), t) != types.end()) return;
  // a subclass is asked before its base class, as in PyTorch
  auto pos = std::find_if(types.begin(), types.end(), [&](PyObject* u) {
    return PyType_IsSubtype(Py_TYPE(o), reinterpret_cast<PyTypeObject*>(u));
  });
  types.insert(pos, t);
}

// PyTorch's __torch_function__ protocol for the generated bindings: each overloading type's
// __torch_function__(func, types, args, kwargs) in turn until one answers something other than
// NotImplemented. func is the public function (module functions) or the Tensor method; a method's
// args start with the tensor. nullptr when no argument overloads.
PyObject* dispatch_torch_function(PyObject* self, const std::string& name, bool method, PyObject* const* args,
                                  Py_ssize_t nargs, PyObject* kwnames) {
  std::vector<PyObject*> types;
  if (method) collect_overloads(self, types);
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nargs + nkw; i++) collect_overloads(args[i], types);
  if (types.empty()) return nullptr;
  // A handler that calls the same function again with the same arguments (torch.Tensor's own
  // __torch_function__, when a torch tensor reaches an Ember function) must not come back here: that
  // call raises the plain argument error instead of recursing without end.
  thread_local std::vector<std::pair<std::string, PyObject*>> active;
  const std::pair<std::string, PyObject*> key{name, types.front()};
  if (std::find(active.begin(), active.end(), key) != active.end()) return nullptr;
  active.push_back(key);
  struct Pop {
    ~Pop() { active.pop_back(); }
  } pop;
  nb::object func = method ? nb::getattr(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(self))), name.c_str())
                           : nb::getattr(nb::handle(self), name.c_str());
  nb::list pargs;
  if (method) pargs.append(nb::handle(self));
  for (Py_ssize_t i = 0; i < nargs; i++) pargs.append(nb::handle(args[i]));
  nb::dict kwargs;
  for (Py_ssize_t k = 0; k < nkw; k++) kwargs[nb::handle(PyTuple_GET_ITEM(kwnames, k))] = nb::handle(args[nargs + k]);
  nb::list type_list;
  for (PyObject* t : types) type_list.append(nb::handle(t));
  nb::tuple types_t = nb::tuple(type_list), args_t = nb::tuple(pargs);
  for (PyObject* t : types) {
    nb::object r = nb::handle(t).attr("__torch_function__")(func, types_t, args_t, kwargs);
    if (!r.is(nb::handle(Py_NotImplemented))) return r.release().ptr();
  }
  // PyTorch's message: the public name and the list of the types
  EMBER_FAIL(Type, "no implementation found for '", method ? "ember.Tensor." : "ember.", name,
             "' on types that implement __torch_function__: ", nb::repr(type_list).c_str());
}

}  // namespace

int ArgParser::parse(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, ParsedArgs& out) {
  out.self = method_ ? self : nullptr;
  nargs = PyVectorcall_NARGS(nargs);
  // With several overloads, first match without reading 0-d integer tensors as ints, so that
  // max(x, y) with a 0-d int64 `y` is max(Tensor other), not max(int dim) as PyTorch resolves it.
  if (sigs_.size() > 1)
    for (size_t k = 0; k < sigs_.size(); k++)
      if (try_parse(sigs_[k], args, nargs, kwnames, out, nullptr, true)) return int(k);
  for (size_t k = 0; k < sigs_.size(); k++)
    if (try_parse(sigs_[k], args, nargs, kwnames, out, nullptr)) return int(k);
  // no match: a tensor-like argument may take the call (only now, so matching calls pay nothing for it)
  if ((out.override_result = dispatch_torch_function(self, sigs_[0].name, method_, args, nargs, kwnames))) return -1;
  if (sigs_.size() == 1) {
    std::string err;
    try_parse(sigs_[0], args, nargs, kwnames, out, &err);
    EMBER_FAIL(Type, err);
  }
  std::string got = "(";
  for (Py_ssize_t i = 0; i < nargs; i++) got += (i ? ", " : "") + type_name(args[i]);
  if (kwnames)
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++)
      got += std::string(nargs + k ? ", " : "") + PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k)) + "=" +
             type_name(args[nargs + k]);
  got += ")";
  std::string msg = sigs_[0].name + "() received an invalid combination of arguments - got " + got +
                    ", but expected one of:";
  for (auto& s : sigs_) msg += "\n * " + s.text.substr(s.text.find('('));
  EMBER_FAIL(Type, msg);
}

// ---------------------------------------------------------------- accessors
const Tensor& ParsedArgs::tensor(int i) {
  PyObject* o = args[i];
  if (!o) return undefined_;
  if (is_tensor(o)) return unpack(o);
  tmp_[i] = number_to_tensor(o);
  return tmp_[i];
}

std::vector<Tensor> ParsedArgs::tensorlist(int i) {
  std::vector<Tensor> r;
  PyObject* o = args[i];
  if (!o) return r;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  r.reserve(size_t(n));
  for (Py_ssize_t k = 0; k < n; k++) r.push_back(unpack(items[k]));
  return r;
}

Scalar ParsedArgs::scalar(int i) {
  if (!args[i]) return sig->params[i].default_scalar;
  if (sig->params[i].tensor_ok && is_tensor(args[i]) && unpack(args[i]).dim() == 0 && sig->name == "fill_") {
    // fill_(Tensor value) casts the value to self's dtype like a copy (no overflow check, unlike a
    // Python number or masked_fill's value)
    PyObject* self_obj = self ? self : args[0];
    const Tensor& v = unpack(args[i]);
    if (self_obj && self_obj != args[i] && is_tensor(self_obj)) return v.to(unpack(self_obj).dtype()).item();
    return v.item();
  }
  Scalar s;
  if (!to_scalar(args[i], &s)) {
    if (is_tensor(args[i]) && sig->params[i].name == "value")  // a tensor-valued Scalar must be 0-d
      EMBER_FAIL(Runtime, sig->name, " only supports a 0-dimensional value tensor, but got tensor with ",
                 unpack(args[i]).dim(), " dimension(s).");
    if (is_tensor(args[i]))
      EMBER_FAIL(Runtime, sig->name, " only supports 0-dimensional start and end tensors, but got ",
                 sig->params[i].name, " with ", unpack(args[i]).dim(), " dimension(s).");
    EMBER_FAIL(Type, "expected a number for argument '", sig->params[i].name, "'");
  }
  return s;
}
std::optional<Scalar> ParsedArgs::scalar_opt(int i) {
  if (is_none(i)) return args[i] || sig->params[i].default_none ? std::nullopt : std::optional<Scalar>(scalar(i));
  return scalar(i);
}

static int64_t to_int64(PyObject* o) {
  if (is_tensor(o)) return unpack(o).item().to_long();
  long long v = PyLong_AsLongLong(o);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    PyObject* idx = PyNumber_Index(o);
    if (!idx) throw nb::python_error();
    v = PyLong_AsLongLong(idx);
    Py_DECREF(idx);
    if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); EMBER_FAIL(Value, "Overflow when unpacking long long"); }
  }
  return v;
}

int64_t ParsedArgs::int64(int i) {
  if (args[i] && sig->params[i].tensor_ok && is_tensor(args[i])) {
    const Tensor& t = unpack(args[i]);
    EMBER_CHECK(t.dim() == 0 && is_integral(t.dtype(), false), sig->params[i].name, " must be an 0-dim integral Tensor.");
  }
  return args[i] ? to_int64(args[i]) : sig->params[i].default_int;
}
std::optional<int64_t> ParsedArgs::int64_opt(int i) {
  if (is_none(i)) return std::nullopt;
  return int64(i);
}

IntArrayRef ParsedArgs::intlist(int i) {
  PyObject* o = args[i];
  if (!o) return IntArrayRef(sig->params[i].default_ints);
  auto& v = ints_[i];
  v.clear();
  if (is_int_like(o)) {
    v.assign(size_t(std::max(sig->params[i].list_size, 1)), to_int64(o));
  } else {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
    PyObject** items = PySequence_Fast_ITEMS(o);
    for (Py_ssize_t k = 0; k < n; k++) {
      try {
        v.push_back(to_int64(items[k]));
      } catch (const Error& e) {  // an element beyond int64: PyTorch names the argument and position
        EMBER_FAIL(Type, sig->name, "(): argument '", sig->params[i].name, "' failed to unpack the object at pos ",
                   k + 1, " with error \"", e.what(), "\"");
      }
    }
  }
  return IntArrayRef(v);
}
OptionalIntArrayRef ParsedArgs::intlist_opt(int i) {
  if (is_none(i)) return std::nullopt;
  return intlist(i);
}

double ParsedArgs::float64(int i) {
  PyObject* o = args[i];
  if (!o) return sig->params[i].default_float;
  if (is_tensor(o)) return unpack(o).item().to_double();
  double d = PyFloat_AsDouble(o);
  if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return d;
}
std::optional<double> ParsedArgs::float64_opt(int i) {
  if (is_none(i)) return std::nullopt;
  return float64(i);
}

bool ParsedArgs::boolean(int i) { return args[i] ? PyObject_IsTrue(args[i]) == 1 : sig->params[i].default_bool; }
std::optional<bool> ParsedArgs::boolean_opt(int i) {
  if (is_none(i)) return args[i] || sig->params[i].default_none ? std::nullopt : std::optional<bool>(sig->params[i].default_bool);
  return boolean(i);
}

std::string_view ParsedArgs::string(int i) {
  if (!args[i]) return sig->params[i].default_str;
  Py_ssize_t n;
  const char* s = PyUnicode_AsUTF8AndSize(args[i], &n);
  return std::string_view(s, size_t(n));
}
std::optional<std::string_view> ParsedArgs::string_opt(int i) {
  if (is_none(i)) return std::nullopt;
  return string(i);
}

ScalarType ParsedArgs::dtype(int i) { return unpack_dtype(args[i]); }
std::optional<ScalarType> ParsedArgs::dtype_opt(int i) {
  if (is_none(i)) return std::nullopt;
  return dtype(i);
}
Generator* ParsedArgs::generator(int i) { return is_none(i) ? nullptr : unpack_generator(args[i]); }

// The device of factory calls that name none: set by ember.set_default_device and `with ember.device(d)`
// (as PyTorch's device context, it serves the Python factories, not C++ ones nor other ops; per thread).
static thread_local std::optional<Device> g_default_device;
void set_default_device(std::optional<Device> d) { g_default_device = d; }
std::optional<Device> default_device() { return g_default_device; }

TensorOptions ParsedArgs::options(int i, bool use_default_device) {
  TensorOptions o;
  if (!is_none(i)) o.dtype_ = unpack_dtype(args[i]);
  if (!is_none(i + 2)) o.device_ = unpack_device(args[i + 2]);
  else if (EMBER_UNLIKELY(g_default_device.has_value()) && use_default_device) o.device_ = g_default_device;
  if (o.device_) {
    o.device_->check_available();
    if (o.device_->is_cpu()) o.device_ = Device();  // a CPU tensor's device has no index ('cpu:0' makes device('cpu'))
  }
  if (!is_none(i + 3) && PyObject_IsTrue(args[i + 3]) == 1) {
    check_pin_memory_request(o.device_or_cpu());
    pin_memory_ = true;
  }
  o.requires_grad_ = !is_none(i + 4) && PyObject_IsTrue(args[i + 4]) == 1;
  return o;
}

Tensor ParsedArgs::pinned_if_asked(Tensor t) const {
  if (!pin_memory_) return t;
  Tensor pinned = cuda::pin_memory(t.detach());  // a leaf still: requires_grad=True carries over, no copy node
  if (t.requires_grad()) pinned.requires_grad_(true);
  return pinned;
}

void check_pin_memory_request(Device device) {
  EMBER_CHECK(cuda::is_compiled(), kNoPinnedMemory);
  EMBER_CHECK(device.is_cpu(), "Only dense CPU tensors can be pinned");
  cuda::lazy_init();  // PyTorch's errors without a driver or a GPU
}

std::optional<MemoryFormat> ParsedArgs::memory_format_opt(int i) {
  if (is_none(i)) return std::nullopt;
  return unpack_memory_format(args[i]);
}

MemoryFormat unpack_memory_format(PyObject* o) {
  nb::object name = nb::borrow(o).attr("name");
  const char* cn = PyUnicode_Check(name.ptr()) ? PyUnicode_AsUTF8(name.ptr()) : nullptr;
  std::string n = cn ? cn : "";
  if (n == "contiguous_format") return MemoryFormat::Contiguous;
  if (n == "preserve_format") return MemoryFormat::Preserve;
  if (n == "channels_last") return MemoryFormat::ChannelsLast;
  if (n == "channels_last_3d") return MemoryFormat::ChannelsLast3d;
  EMBER_FAIL(Runtime, "unsupported memory format ", n);
}

}  // namespace ember::py
