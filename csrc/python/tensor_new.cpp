// Tensors from Python data (ember.tensor), back to Python (tolist), and zero-copy interop with
// NumPy (__array_interface__) and DLPack (capsules, both directions).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstring>

#include "ember/generated/ops.h"
#include "python/arg_parser.h"
#include "python/bindings.h"
#include "python/dlpack.h"

namespace nb = nanobind;

namespace ember::py {

// ---------------------------------------------------------------- ember.tensor(data)
namespace {

bool is_numpy_nd_array(PyObject* o) {  // a NumPy array of at least one dim (a sequence of its rows)
  if (std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") != 0) return false;
  nb::object nd = nb::steal(PyObject_GetAttrString(o, "ndim"));
  if (!nd.is_valid()) throw nb::python_error();
  return PyLong_AsLong(nd.ptr()) > 0;
}

bool is_sequence(PyObject* o) {
  return PyList_Check(o) || PyTuple_Check(o) || (is_tensor(o)) || is_numpy_nd_array(o) ||
         (PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) && PyObject_HasAttrString(o, "__len__") &&
          !PyIndex_Check(o) && !PyFloat_Check(o));
}

// A NumPy scalar's dtype (numpy.int16 -> int16), as PyTorch infers it; nullopt for other objects.
std::optional<ScalarType> numpy_scalar_dtype(PyObject* o) {
  const char* tn = Py_TYPE(o)->tp_name;
  if (std::strncmp(tn, "numpy.", 6) != 0) return std::nullopt;
  static const std::pair<const char*, ScalarType> names[] = {
      {"bool", kBool}, {"bool_", kBool}, {"int8", kChar}, {"int16", kShort}, {"int32", kInt}, {"int64", kLong},
      {"uint8", kByte}, {"float16", kHalf}, {"float32", kFloat}, {"float64", kDouble},
      {"complex64", kComplexFloat}, {"complex128", kComplexDouble}};
  for (auto& [n, t] : names)
    if (std::strcmp(tn + 6, n) == 0) return t;
  return std::nullopt;
}

bool is_str(PyObject* o) { return PyUnicode_Check(o) || PyBytes_Check(o); }

// The shape, from the first item at each level (PyTorch's compute_sizes): a str met on that
// path is "too many dimensions".
void compute_sizes(PyObject* o, DimVector& shape) {
  nb::object hold;
  PyObject* cur = o;
  while (true) {
    if (is_tensor(cur)) return;  // a tensor inside a list is one number (its item), as in PyTorch
    if (PyUnicode_Check(cur)) {  // a str first in a list: "too many dimensions"; as the data it fails when stored
      EMBER_CHECK_KIND(cur == o, Value, "too many dimensions 'str'");
      return;
    }
    Scalar s;
    if (PyBool_Check(cur) || PyLong_Check(cur) || PyFloat_Check(cur) || PyComplex_Check(cur) ||
        numpy_scalar_dtype(cur))
      return;
    if (!is_sequence(cur)) return;  // an unknown leaf: the dtype inference names it
    nb::object seq = nb::steal(PySequence_Fast(cur, "not a sequence"));
    if (!seq.is_valid()) throw nb::python_error();
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
    shape.push_back(n);
    if (n == 0) return;
    cur = PySequence_Fast_ITEMS(seq.ptr())[0];
    hold = seq;
  }
}

// The dtype from every leaf (PyTorch's infer_scalar_type): tensors and NumPy scalars keep their
// dtype, Python floats are the default dtype, ints int64, bools bool; promoted together.
void infer_dtype(PyObject* o, ScalarType& dt, bool& any_value) {
  auto add = [&](ScalarType t) {
    dt = any_value ? promote_types(dt, t) : t;
    any_value = true;
  };
  if (is_tensor(o)) return add(unpack(o).dtype());
  if (auto nt = numpy_scalar_dtype(o)) return add(*nt);
  if (PyBool_Check(o)) return add(kBool);
  if (PyLong_Check(o)) {
    int overflow = 0;
    PyLong_AsLongLongAndOverflow(o, &overflow);
    EMBER_CHECK_KIND(!overflow, Value, "Overflow when unpacking long long");
    return add(kLong);
  }
  if (PyFloat_Check(o)) return add(default_dtype());
  if (PyComplex_Check(o)) return add(to_complex_dtype(default_dtype()));
  if (is_str(o)) return;  // storing it fails: "invalid data type"
  EMBER_CHECK(is_sequence(o), "Could not infer dtype of ", Py_TYPE(o)->tp_name);
  nb::object seq = nb::steal(PySequence_Fast(o, "not a sequence"));
  if (!seq.is_valid()) throw nb::python_error();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  for (Py_ssize_t i = 0; i < n; i++) infer_dtype(items[i], dt, any_value);
}

// A Python number stored into an integer dtype must fit it (PyTorch's checked conversion).
void check_fits(PyObject* o, const Scalar& s, ScalarType target) {
  EMBER_CHECK_KIND(!s.is_complex() || is_complex(target), Type, "must be real number, not complex");
  if (!is_integral(target, true)) return;
  // NumPy float scalars (other than float64, a Python float) are not read as integers or bools;
  // NumPy bools are not read as integers
  if (auto nt = numpy_scalar_dtype(o)) {
    bool ok = PyFloat_Check(o) || is_integral(*nt, false) || (*nt == kBool && target == kBool);
    EMBER_CHECK_KIND(ok, Type, "'", Py_TYPE(o)->tp_name, "' object cannot be interpreted as an integer");
  }
  if (s.is_bool() || target == kBool) return;
  double lo = 0, hi = 0;
  switch (target) {
    case kByte: lo = -255; hi = 255; break;  // negative values wrap, as PyTorch's overflow check allows
    case kChar: lo = -128; hi = 127; break;
    case kShort: lo = -32768; hi = 32767; break;
    case kInt: lo = -2147483648.0; hi = 2147483647.0; break;
    default: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
  }
  bool ok;
  if (s.is_floating()) {
    double d = s.to_double();
    ok = d >= lo && (target == kLong ? d < hi : d <= hi);  // false for NaN
  } else {
    ok = target == kLong || (double(s.to_long()) >= lo && double(s.to_long()) <= hi);
  }
  EMBER_CHECK(ok, "value cannot be converted to type ", dtype_name(target), " without overflow");
}

// Write leaves in row-major order as doubles / int64 / bools into `out`, raising PyTorch's errors
// for ragged data (ValueError) and for numbers and sequences in each other's place (TypeError).
template <class T>
void fill(PyObject* o, int64_t depth, const DimVector& shape, T*& out, ScalarType target) {
  const bool at_leaf = depth == int64_t(shape.size());
  if (is_tensor(o)) {  // one number: a tensor of one element
    const Tensor& t = unpack(o);
    EMBER_CHECK_KIND(t.numel() == 1, Value, "only one element tensors can be converted to Python scalars");
    EMBER_CHECK_KIND(at_leaf, Type, "not a sequence");
    *out++ = t.item().to<T>();
    return;
  }
  EMBER_CHECK_KIND(!is_str(o), Type, "new(): invalid data type '", Py_TYPE(o)->tp_name, "'");
  Scalar s;
  if (to_scalar(o, &s)) {
    EMBER_CHECK_KIND(at_leaf, Type, "not a sequence");
    check_fits(o, s, target);
    *out++ = s.to<T>();
    return;
  }
  EMBER_CHECK_KIND(is_sequence(o), Type, "new(): invalid data type '", type_name(o), "'");
  if (at_leaf) {
    if (is_floating(target)) EMBER_FAIL(Type, "must be real number, not ", Py_TYPE(o)->tp_name);
    EMBER_FAIL(Type, "'", Py_TYPE(o)->tp_name, "' object cannot be interpreted as an integer");
  }
  nb::object seq = nb::steal(PySequence_Fast(o, "not a sequence"));
  if (!seq.is_valid()) throw nb::python_error();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
  EMBER_CHECK_KIND(n == shape[depth], Value, "expected sequence of length ", shape[depth], " at dim ", depth, " (got ",
                   n, ")");
  PyObject** items = PySequence_Fast_ITEMS(seq.ptr());
  for (Py_ssize_t i = 0; i < n; i++) fill<T>(items[i], depth + 1, shape, out, target);
}

// NumPy's protocol: a dict (an object that answers every attribute, such as torch.fx's Proxy, is no array)
bool has_array_interface(PyObject* o) {
  PyObject* ai = PyObject_GetAttrString(o, "__array_interface__");
  if (!ai) {
    PyErr_Clear();
    return false;
  }
  const bool is_dict = PyDict_Check(ai);
  Py_DECREF(ai);
  return is_dict;
}

}  // namespace

Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype) {
  if (is_tensor(data)) return unpack(data).to(dtype ? *dtype : unpack(data).dtype(), true);
  if (has_array_interface(data) && !PyList_Check(data) && !PyTuple_Check(data)) {
    nb::object np_arr = nb::borrow(data);
    Tensor t = tensor_from_numpy(data, /*allow_readonly=*/true);
    return t.to(dtype ? *dtype : t.dtype(), true);
  }
  DimVector shape;
  compute_sizes(data, shape);
  ScalarType dt = default_dtype();
  bool any_value = false;
  infer_dtype(data, dt, any_value);
  if (!any_value) dt = default_dtype();  // tensor([]) is float32
  ScalarType target = dtype ? *dtype : dt;
  Tensor r;
  if (is_complex(dt)) {
    Tensor buf = empty_tensor(shape, kComplexDouble);
    auto* p = static_cast<std::complex<double>*>(buf.data_ptr());
    fill<std::complex<double>>(data, 0, shape, p, target);
    r = buf;
  } else if (is_floating(dt)) {
    Tensor buf = empty_tensor(shape, kDouble);
    double* p = static_cast<double*>(buf.data_ptr());
    fill<double>(data, 0, shape, p, target);
    r = buf;
  } else if (dt == kBool) {
    Tensor buf = empty_tensor(shape, kBool);
    bool* p = static_cast<bool*>(buf.data_ptr());
    fill<bool>(data, 0, shape, p, target);
    r = buf;
  } else {
    Tensor buf = empty_tensor(shape, kLong);
    int64_t* p = static_cast<int64_t*>(buf.data_ptr());
    fill<int64_t>(data, 0, shape, p, target);
    r = buf;
  }
  return r.to(target);
}

// ---------------------------------------------------------------- tolist
namespace {
nb::object tolist_rec(const Tensor& t, int64_t dim, const char* p) {
  if (dim == t.dim()) {
    switch (t.dtype()) {
      case kBool: return nb::bool_(*reinterpret_cast<const bool*>(p));
      case kByte: return nb::int_(*reinterpret_cast<const uint8_t*>(p));
      case kChar: return nb::int_(*reinterpret_cast<const int8_t*>(p));
      case kShort: return nb::int_(*reinterpret_cast<const int16_t*>(p));
      case kInt: return nb::int_(*reinterpret_cast<const int32_t*>(p));
      case kLong: return nb::int_(*reinterpret_cast<const int64_t*>(p));
      case kHalf: return nb::float_(double(float(*reinterpret_cast<const Half*>(p))));
      case kBFloat16: return nb::float_(double(float(*reinterpret_cast<const BFloat16*>(p))));
      case kFloat: return nb::float_(double(*reinterpret_cast<const float*>(p)));
      case kDouble: return nb::float_(*reinterpret_cast<const double*>(p));
      case kComplexFloat: {
        auto z = *reinterpret_cast<const std::complex<float>*>(p);
        return nb::steal(PyComplex_FromDoubles(z.real(), z.imag()));
      }
      case kComplexDouble: {
        auto z = *reinterpret_cast<const std::complex<double>*>(p);
        return nb::steal(PyComplex_FromDoubles(z.real(), z.imag()));
      }
      case ScalarType::Undefined: break;
    }
    return nb::none();
  }
  // a dim of size <= 1 may carry any stride (as_strided((1,), (2**62,))): its byte stride is never used
  int64_t n = t.sizes()[dim], st = n > 1 ? t.strides()[dim] * t.element_size() : 0;
  PyObject* list = PyList_New(Py_ssize_t(n));
  if (!list) throw nb::python_error();
  nb::object result = nb::steal(list);
  for (int64_t i = 0; i < n; i++) PyList_SET_ITEM(list, Py_ssize_t(i), tolist_rec(t, dim + 1, p + i * st).release().ptr());
  return result;
}
}  // namespace

nb::object tensor_tolist(const Tensor& t) { return tolist_rec(t, 0, static_cast<const char*>(t.data_ptr())); }

// ---------------------------------------------------------------- NumPy
namespace {
// Release a Python object from whatever thread frees the storage.
void decref_deleter(void* ctx, void*, size_t) {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE g = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(ctx));
  PyGILState_Release(g);
}

ScalarType dtype_from_typestr(const std::string& ts, PyObject* arr) {
  char kind = ts.size() > 1 ? ts[1] : '?';
  int bytes = ts.size() > 2 ? std::atoi(ts.c_str() + 2) : 0;
  if (ts[0] == '>' && bytes > 1)
    EMBER_FAIL(Value, "given numpy array has byte order different from the native byte order. Conversion between byte "
               "orders is currently not supported.");
  if (kind == 'b' && bytes == 1) return kBool;
  if (kind == 'u' && bytes == 1) return kByte;
  if (kind == 'i') {
    if (bytes == 1) return kChar;
    if (bytes == 2) return kShort;
    if (bytes == 4) return kInt;
    if (bytes == 8) return kLong;
  }
  if (kind == 'f') {
    if (bytes == 2) return kHalf;
    if (bytes == 4) return kFloat;
    if (bytes == 8) return kDouble;
  }
  if (kind == 'c') {
    if (bytes == 8) return kComplexFloat;
    if (bytes == 16) return kComplexDouble;
  }
  nb::object dt = nb::getattr(nb::handle(arr), "dtype", nb::none());
  std::string name = dt.is_none() ? ts : std::string(nb::str(nb::getattr(dt, "type")).c_str());
  EMBER_FAIL(Type, "can't convert np.ndarray of type ", name, ". The only supported types are: float64, float32, "
             "float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool.");
}
}  // namespace

Tensor tensor_from_numpy(PyObject* arr, bool allow_readonly) {
  (void)allow_readonly;
  nb::object ai = nb::steal(PyObject_GetAttrString(arr, "__array_interface__"));
  if (!ai.is_valid()) throw nb::python_error();
  EMBER_CHECK_KIND(PyDict_Check(ai.ptr()), Type, "expected __array_interface__ to be a dict, got ",
                   Py_TYPE(ai.ptr())->tp_name);
  nb::dict d = nb::borrow<nb::dict>(ai);
  std::string typestr = nb::cast<std::string>(d["typestr"]);
  ScalarType dt = dtype_from_typestr(typestr, arr);
  int64_t isz = itemsize(dt);
  nb::tuple shape_t = nb::borrow<nb::tuple>(d["shape"]);
  DimVector sizes;
  for (nb::handle h : shape_t) sizes.push_back(nb::cast<int64_t>(h));
  DimVector strides;
  nb::object st = d.contains("strides") ? nb::object(d["strides"]) : nb::none();
  if (st.is_none() && PyObject_HasAttrString(arr, "strides")) st = nb::getattr(nb::handle(arr), "strides");
  if (st.is_none()) {
    strides = contiguous_strides(sizes);
  } else {
    for (nb::handle h : nb::borrow<nb::tuple>(st)) {
      int64_t b = nb::cast<int64_t>(h);
      EMBER_CHECK_KIND(b >= 0, Value, "At least one stride in the given numpy array is negative, and tensors with "
                       "negative strides are not currently supported. (You can probably work around this by making a "
                       "copy of your array  with array.copy().) ");
      EMBER_CHECK_KIND(b % isz == 0, Value, "given numpy array strides not a multiple of the element byte size. Copy "
                       "the numpy array to reallocate the memory.");
      strides.push_back(b / isz);
    }
  }
  nb::tuple data = nb::borrow<nb::tuple>(d["data"]);
  void* ptr = reinterpret_cast<void*>(nb::cast<uintptr_t>(data[0]));
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (sizes[i] == 0) { extent = 0; break; }
    extent += (sizes[i] - 1) * strides[i];
  }
  Py_INCREF(arr);
  auto storage = StorageImpl::wrap(ptr, size_t(extent * isz), decref_deleter, arr);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dt, sizes, strides, 0));
}

// ---------------------------------------------------------------- DLPack
namespace {
DLDataType to_dl(ScalarType t) {
  switch (t) {
    case kBool: return {kDLBool, 8, 1};
    case kByte: return {kDLUInt, 8, 1};
    case kChar: return {kDLInt, 8, 1};
    case kShort: return {kDLInt, 16, 1};
    case kInt: return {kDLInt, 32, 1};
    case kLong: return {kDLInt, 64, 1};
    case kHalf: return {kDLFloat, 16, 1};
    case kFloat: return {kDLFloat, 32, 1};
    case kDouble: return {kDLFloat, 64, 1};
    case kBFloat16: return {kDLBfloat, 16, 1};
    case kComplexFloat: return {kDLComplex, 64, 1};
    case kComplexDouble: return {kDLComplex, 128, 1};
    case ScalarType::Undefined: break;
  }
  EMBER_FAIL(Runtime, "unsupported dtype for DLPack");
}

ScalarType from_dl(DLDataType d) {
  EMBER_CHECK(d.lanes == 1, "DLPack: vector dtypes (lanes != 1) are not supported");
  switch (d.code) {
    case kDLBool: if (d.bits == 8) return kBool; break;
    case kDLUInt: if (d.bits == 8) return kByte; break;
    case kDLInt:
      if (d.bits == 8) return kChar;
      if (d.bits == 16) return kShort;
      if (d.bits == 32) return kInt;
      if (d.bits == 64) return kLong;
      break;
    case kDLFloat:
      if (d.bits == 16) return kHalf;
      if (d.bits == 32) return kFloat;
      if (d.bits == 64) return kDouble;
      break;
    case kDLBfloat: if (d.bits == 16) return kBFloat16; break;
    case kDLComplex:
      if (d.bits == 64) return kComplexFloat;
      if (d.bits == 128) return kComplexDouble;
      break;
    default: break;
  }
  EMBER_FAIL(Type, "DLPack: unsupported data type code=", int(d.code), " bits=", int(d.bits));
}

// DLPack 1.x ("dltensor_versioned" capsules): the managed tensor carries a version and flags.
// Consumers that ask for it (NumPy's from_dlpack) treat legacy capsules as read-only.
struct DLPackVersion {
  uint32_t major, minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

struct ExportCtx {
  Tensor t;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
  DLManagedTensorVersioned versioned;
};

void export_deleter(DLManagedTensor* m) { delete static_cast<ExportCtx*>(m->manager_ctx); }
void export_deleter_versioned(DLManagedTensorVersioned* m) { delete static_cast<ExportCtx*>(m->manager_ctx); }

void capsule_destructor(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {  // never consumed: free it ourselves
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}
void capsule_destructor_versioned(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
    if (m && m->deleter) m->deleter(m);
  } else {
    PyErr_Clear();
  }
}
void import_deleter_versioned(void* ctx, void*, size_t) {
  auto* m = static_cast<DLManagedTensorVersioned*>(ctx);
  if (!m->deleter) return;
  if (Py_IsInitialized()) {
    PyGILState_STATE g = PyGILState_Ensure();
    m->deleter(m);
    PyGILState_Release(g);
  } else {
    m->deleter(m);
  }
}

void import_deleter(void* ctx, void*, size_t) {
  auto* m = static_cast<DLManagedTensor*>(ctx);
  if (m->deleter) {
    // the producer may be Python (NumPy): hold the GIL while it frees
    if (Py_IsInitialized()) {
      PyGILState_STATE g = PyGILState_Ensure();
      m->deleter(m);
      PyGILState_Release(g);
    } else {
      m->deleter(m);
    }
  }
}
}  // namespace

PyObject* tensor_to_dlpack(const Tensor& t, bool versioned, bool copied) {
  // DLPack has no conjugate bit: the consumer would read the stored values (Note [Conjugate views])
  EMBER_CHECK(!t.is_conj(), "Can't export tensors with the conjugate bit set; call resolve_conj() first");
  EMBER_CHECK(!t.is_neg(), "Can't export tensors with the negative bit set; call resolve_neg() first");
  void* data = t.data_ptr();  // first: raises for a tensor without data (meta) before anything is allocated
  auto* ctx = new ExportCtx();
  ctx->t = t;
  ctx->shape = t.sizes().vec();
  ctx->strides = t.strides().vec();
  DLTensor& dl = versioned ? ctx->versioned.dl_tensor : ctx->managed.dl_tensor;
  // data points at the first element, byte_offset 0: what PyTorch exports and NumPy requires
  dl.data = data;
  dl.byte_offset = 0;
  dl.device = {kDLCPU, 0};
  dl.ndim = int32_t(t.dim());
  dl.dtype = to_dl(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  PyObject* cap;
  if (versioned) {
    ctx->versioned.version = {1, 0};
    ctx->versioned.manager_ctx = ctx;
    ctx->versioned.deleter = export_deleter_versioned;
    ctx->versioned.flags = copied ? (uint64_t(1) << 1) : 0;  // DLPACK_FLAG_BITMASK_IS_COPIED; writable
    cap = PyCapsule_New(&ctx->versioned, "dltensor_versioned", capsule_destructor_versioned);
  } else {
    ctx->managed.manager_ctx = ctx;
    ctx->managed.deleter = export_deleter;
    cap = PyCapsule_New(&ctx->managed, "dltensor", capsule_destructor);
  }
  if (!cap) {
    delete ctx;
    throw nb::python_error();
  }
  return cap;
}

Tensor tensor_from_dlpack(PyObject* obj) {
  nb::object cap;
  if (PyCapsule_CheckExact(obj)) {
    cap = nb::borrow(obj);
  } else {
    nb::object fn = nb::steal(PyObject_GetAttrString(obj, "__dlpack__"));
    if (!fn.is_valid()) {
      PyErr_Clear();
      EMBER_FAIL(Type, "from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got ", type_name(obj));
    }
    cap = fn();
  }
  const bool versioned = PyCapsule_IsValid(cap.ptr(), "dltensor_versioned");
  EMBER_CHECK(versioned || PyCapsule_IsValid(cap.ptr(), "dltensor"),
              "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you "
              "might have already constructed a tensor from it once.");
  DLManagedTensor* m = nullptr;
  DLManagedTensorVersioned* mv = nullptr;
  if (versioned) {
    mv = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap.ptr(), "dltensor_versioned"));
    EMBER_CHECK(mv->version.major == 1, "from_dlpack: unsupported DLPack version ", mv->version.major);
  } else {
    m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  }
  DLTensor& dl = versioned ? mv->dl_tensor : m->dl_tensor;
  EMBER_CHECK(dl.device.device_type == kDLCPU, "from_dlpack: only CPU tensors are supported (device type ",
              int(dl.device.device_type), ")");
  ScalarType dt = from_dl(dl.dtype);
  DimVector sizes(IntArrayRef(dl.shape, size_t(dl.ndim)));
  DimVector strides = dl.strides ? DimVector(IntArrayRef(dl.strides, size_t(dl.ndim))) : contiguous_strides(sizes);
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); i++) {
    EMBER_CHECK(strides[i] >= 0 || sizes[i] <= 1, "from_dlpack: negative strides are not supported");
    if (sizes[i] == 0) { extent = 0; break; }
    extent += (sizes[i] - 1) * strides[i];
  }
  int64_t isz = itemsize(dt);
  char* base = static_cast<char*>(dl.data) + dl.byte_offset;
  auto storage = versioned ? StorageImpl::wrap(base, size_t(extent * isz), import_deleter_versioned, mv)
                           : StorageImpl::wrap(base, size_t(extent * isz), import_deleter, m);
  PyCapsule_SetName(cap.ptr(), versioned ? "used_dltensor_versioned" : "used_dltensor");
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dt, sizes, strides, 0));
}

}  // namespace ember::py
