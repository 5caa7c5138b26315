// x[index] and x[index] = value. Basic indices (ints, slices, None, Ellipsis, bools) make views;
// tensor and list indices switch to advanced indexing (ember::index / index_put_).
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

bool is_numpy_array(PyObject* o) { return std::strcmp(Py_TYPE(o)->tp_name, "numpy.ndarray") == 0; }

bool is_advanced(PyObject* o) {
  if (is_tensor(o)) {
    const Tensor& t = unpack(o);
    // a 0-d integer tensor acts as an int
    return !(t.dim() == 0 && is_integral(t.dtype(), false));
  }
  if (is_numpy_array(o)) {  // an array is an index tensor, except a 0-d integer one (an int)
    nb::object nd = nb::steal(PyObject_GetAttrString(o, "ndim"));
    if (!nd.is_valid()) throw nb::python_error();
    return PyLong_AsLong(nd.ptr()) != 0 || !PyIndex_Check(o);
  }
  // any other sequence (list, tuple, range, ...) inside an index is index data, as in PyTorch:
  // x[range(n), target], x[(0, 1),]; a str is not (it fails below as PyTorch's does)
  return PySequence_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) && !PySlice_Check(o) && !PyIndex_Check(o);
}

Tensor to_index_tensor(PyObject* o) {
  if (is_tensor(o)) return unpack(o);
  Tensor t = tensor_from_data(o, std::nullopt);
  // a list or array of numbers indexes as int64 (x[[0.5]] is x[[0]]), as PyTorch converts index data
  if (t.dtype() != kBool) t = t.to(kLong);
  return t;
}

// PyTorch (like NumPy's legacy rule) reads a short list holding sequences, tensors, slices,
// Ellipsis or None as a tuple of indices: x[[0, [1, 2]]] is x[0, [1, 2]].
// Other non-tuple sequences follow the same rule (x[range(2)] is an index tensor).
bool treat_sequence_as_tuple(PyObject* index) {
  if (PyTuple_Check(index) || is_tensor(index) || is_numpy_array(index) || !PySequence_Check(index) ||
      PyUnicode_Check(index) || PyBytes_Check(index))
    return false;
  Py_ssize_t n = PySequence_Size(index);
  if (n < 0) throw nb::python_error();
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; i++) {
    nb::object item = nb::steal(PySequence_GetItem(index, i));
    if (!item.is_valid()) throw nb::python_error();
    PyObject* it = item.ptr();
    if (is_tensor(it) || PySlice_Check(it) || it == Py_Ellipsis || it == Py_None) return true;
    if (PySequence_Check(it) && !PyUnicode_Check(it) && !PyBytes_Check(it)) return true;
  }
  return false;
}

// The index tensor a boolean stands for on its new size-1 dim: [0] for True, [] for False.
Tensor bool_index(bool b) {
  Tensor t = empty_tensor({b ? 1 : 0}, kLong);
  if (b) *static_cast<int64_t*>(t.data_ptr()) = 0;
  return t;
}

struct Indexed {
  Tensor view;                   // after the basic indices
  std::vector<Tensor> advanced;  // per dim of `view`: undefined = full slice
  bool has_advanced = false;
};

Indexed apply_indices(const Tensor& self, PyObject* index) {
  nb::object tup;
  if (PyTuple_Check(index)) tup = nb::borrow(index);
  else if (treat_sequence_as_tuple(index)) tup = nb::steal(PySequence_Tuple(index));
  else tup = nb::steal(PyTuple_Pack(1, index));
  if (!tup.is_valid()) throw nb::python_error();
  Py_ssize_t n = PyTuple_GET_SIZE(tup.ptr());
  // count the dims the index consumes
  int64_t consumed = 0;
  bool ellipsis = false;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* it = PyTuple_GET_ITEM(tup.ptr(), i);
    if (it == Py_None || PyBool_Check(it) || it == Py_Ellipsis) continue;
    if (is_tensor(it) && (unpack(it).dtype() == kBool || unpack(it).dtype() == kByte)) consumed += unpack(it).dim();
    else consumed++;
  }
  EMBER_CHECK_KIND(consumed <= self.dim(), Index, "too many indices for tensor of dimension ", self.dim());
  Indexed r;
  Tensor v = ember::alias(self);
  int64_t dim = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* it = PyTuple_GET_ITEM(tup.ptr(), i);
    if (it == Py_None) {
      v = v.unsqueeze(dim);
      r.advanced.push_back(Tensor());
      dim++;
    } else if (it == Py_Ellipsis) {
      // PyTorch lets an index repeat `...`; only the first one stands for the remaining dims
      int64_t skip = ellipsis ? 0 : self.dim() - consumed;
      ellipsis = true;
      for (int64_t k = 0; k < skip; k++) r.advanced.push_back(Tensor());
      dim += skip;
    } else if (PyBool_Check(it)) {
      // x[True] / x[False]: a new dim of size 1, indexed by [0] (True) or [] (False): advanced
      // indexing, as in PyTorch (the result is a copy; x[:, False] = v goes through index_put_)
      v = v.unsqueeze(dim);
      r.advanced.push_back(bool_index(it == Py_True));
      r.has_advanced = true;
      dim++;
    } else if (PySlice_Check(it)) {
      Py_ssize_t start, stop, step;
      if (PySlice_Unpack(it, &start, &stop, &step) < 0) throw nb::python_error();
      EMBER_CHECK_KIND(step > 0, Value, "step must be greater than zero");
      int64_t size = v.sizes()[dim];
      PySlice_AdjustIndices(Py_ssize_t(size), &start, &stop, step);
      if (!(start == 0 && stop == size && step == 1)) v = ember::slice(v, dim, int64_t(start), int64_t(stop), int64_t(step));
      r.advanced.push_back(Tensor());
      dim++;
    } else if (is_advanced(it)) {
      Tensor idx = to_index_tensor(it);
      if ((idx.dtype() == kBool || idx.dtype() == kByte) && idx.dim() == 0) {
        // a 0-d mask acts like a Python bool
        v = v.unsqueeze(dim);
        r.advanced.push_back(bool_index(idx.item().to_bool()));
        r.has_advanced = true;
        dim++;
        continue;
      }
      r.has_advanced = true;
      if (idx.dtype() == kBool || idx.dtype() == kByte) {
        r.advanced.push_back(idx);
        dim += idx.dim();
      } else {
        r.advanced.push_back(idx);
        dim++;
      }
    } else {
      Scalar s;
      int64_t i64;
      if (PyLong_Check(it) || PyIndex_Check(it)) {
        nb::object as_int = nb::steal(PyNumber_Index(it));
        if (!as_int.is_valid()) throw nb::python_error();
        i64 = PyLong_AsLongLong(as_int.ptr());
        if (i64 == -1 && PyErr_Occurred()) {  // beyond int64: PyTorch's ValueError, not a pending error
          PyErr_Clear();
          EMBER_FAIL(Value, "Overflow when unpacking long long");
        }
      } else {
        // PyTorch tries to read other objects as index data: a str fails as tensor data would
        EMBER_CHECK_KIND(!PyUnicode_Check(it), Type, "new(): invalid data type 'str'");
        EMBER_FAIL(Index, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                   "indices (got ", type_name(it), ")");
      }
      EMBER_CHECK_KIND(v.dim() > dim, Index, "too many indices for tensor of dimension ", self.dim());
      int64_t size = v.sizes()[dim];
      EMBER_CHECK_KIND(i64 >= -size && i64 < size, Index, "index ", i64, " is out of bounds for dimension ", dim,
                       " with size ", size);
      v = v.select(dim, i64);
      (void)s;
    }
  }
  r.view = v;
  return r;
}

}  // namespace

Tensor tensor_getitem(const Tensor& self, PyObject* index) {
  // fast path: x[i]
  if (PyLong_CheckExact(index)) {
    EMBER_CHECK_KIND(self.dim() > 0, Index, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                     "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
    long long i = PyLong_AsLongLong(index);
    if (i == -1 && PyErr_Occurred()) {  // x[2**64] must not read as x[-1]
      PyErr_Clear();
      EMBER_FAIL(Value, "Overflow when unpacking long long");
    }
    int64_t size = self.sizes()[0];
    EMBER_CHECK_KIND(i >= -size && i < size, Index, "index ", i, " is out of bounds for dimension 0 with size ", size);
    return self.select(0, i);
  }
  Indexed r = apply_indices(self, index);
  if (!r.has_advanced) return r.view;
  return ember::index(r.view, r.advanced);
}

// Leading size-1 dims of an assigned value are dropped (x[0] = t.reshape(1, -1)), as in PyTorch.
static Tensor strip_leading_ones(const Tensor& v) {
  int64_t k = 0;
  while (k < v.dim() && v.sizes()[k] == 1) k++;
  if (k == 0) return v;
  return v.reshape(IntArrayRef(v.sizes().data() + k, size_t(v.dim() - k)));
}

void tensor_setitem(const Tensor& self, PyObject* index, PyObject* value) {
  // the value is a Tensor or a Python number; sequences and arrays are not converted (PyTorch)
  Tensor v;
  Scalar s;
  bool is_scalar = !is_tensor(value) && to_scalar(value, &s);
  if (!is_scalar) {
    EMBER_CHECK_KIND(is_tensor(value), Type, "can't assign a ", Py_TYPE(value)->tp_name, " to a ember.",
                     dtype_cname(self.dtype()), "Tensor");
    v = strip_leading_ones(unpack(value));
  }
  if (index == Py_False) return;  // x[False] = v assigns nothing (PyTorch's shortcut)
  // x[True] = v writes x (through a new size-1 dim), like x[None] = v
  Indexed r = apply_indices(self, index == Py_True ? Py_None : index);
  if (!r.has_advanced) {
    if (is_scalar) r.view.fill_(s);
    else r.view.copy_(v);
    return;
  }
  // x[..., mask, ...] = number or 0-d tensor, with the mask the only advanced index: masked_fill_
  // (PyTorch does the same; a 0-d value of another dtype is cast, unlike index_put_)
  if (is_scalar || v.dim() == 0) {
    int64_t pos = -1, n_defined = 0, p = 0;
    for (const Tensor& a : r.advanced) {
      if (a.defined()) {
        n_defined++;
        if (a.dtype() == kBool || a.dtype() == kByte) pos = p;
      }
      p += a.defined() && (a.dtype() == kBool || a.dtype() == kByte) ? a.dim() : 1;
    }
    if (n_defined == 1 && pos >= 0) {
      const Tensor* mask = nullptr;
      for (const Tensor& a : r.advanced)
        if (a.defined()) mask = &a;
      DimVector shape(size_t(pos), 1);
      for (int64_t d : mask->sizes()) shape.push_back(d);
      while (int64_t(shape.size()) < r.view.dim()) shape.push_back(1);
      if (int64_t(shape.size()) == r.view.dim()) {
        bool fits = true;
        for (int64_t d = 0; d < mask->dim(); d++) fits = fits && mask->sizes()[d] == r.view.sizes()[pos + d];
        EMBER_CHECK_KIND(fits, Index, "The shape of the mask ", mask->sizes(), " at index ", pos,
                         " does not match the shape of the indexed tensor ", r.view.sizes());
        Tensor m = mask->to(kBool).reshape(shape);
        r.view.masked_fill_(m, is_scalar ? s : v.item());
        return;
      }
    }
  }
  if (is_scalar) {  // a number takes the tensor's dtype (and must fit it, as fill_)
    check_scalar_fits(s, self.dtype());
    v = scalar_to_tensor(s).to(self.dtype());
  }
  r.view.index_put_(r.advanced, v, false);
}

}  // namespace ember::py
