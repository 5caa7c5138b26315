// x[index] and x[index] = value. Basic indices (ints, slices, None, Ellipsis, bools) make views;
// tensor and list indices switch to advanced indexing (ember::index / index_put_).
#include "ember/generated/ops.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

bool is_advanced(PyObject* o) {
  if (is_tensor(o)) {
    const Tensor& t = unpack(o);
    // a 0-d integer tensor acts as an int
    return !(t.dim() == 0 && is_integral(t.dtype(), false));
  }
  return PyList_Check(o) || (PySequence_Check(o) && !PyUnicode_Check(o) && !PyTuple_Check(o) && !PySlice_Check(o) &&
                             std::strncmp(Py_TYPE(o)->tp_name, "numpy.", 6) == 0 && !PyIndex_Check(o));
}

Tensor to_index_tensor(PyObject* o) {
  if (is_tensor(o)) return unpack(o);
  return tensor_from_data(o, std::nullopt);
}

struct Indexed {
  Tensor view;                   // after the basic indices
  std::vector<Tensor> advanced;  // per dim of `view`: undefined = full slice
  bool has_advanced = false;
};

Indexed apply_indices(const Tensor& self, PyObject* index) {
  nb::object tup;
  if (PyTuple_Check(index)) tup = nb::borrow(index);
  else tup = nb::steal(PyTuple_Pack(1, index));
  Py_ssize_t n = PyTuple_GET_SIZE(tup.ptr());
  // count the dims the index consumes
  int64_t consumed = 0;
  bool ellipsis = false;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject* it = PyTuple_GET_ITEM(tup.ptr(), i);
    if (it == Py_None || PyBool_Check(it)) continue;
    if (it == Py_Ellipsis) {
      EMBER_CHECK_KIND(!ellipsis, Index, "an index can only have a single ellipsis ('...')");
      ellipsis = true;
      continue;
    }
    if (is_tensor(it) && (unpack(it).dtype() == kBool || unpack(it).dtype() == kByte)) consumed += std::max<int64_t>(unpack(it).dim(), 1);
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
      int64_t skip = self.dim() - consumed;
      for (int64_t k = 0; k < skip; k++) r.advanced.push_back(Tensor());
      dim += skip;
    } else if (PyBool_Check(it)) {
      // x[True] adds a dim of size 1; x[False] one of size 0
      v = v.unsqueeze(dim);
      if (it == Py_False) v = v.narrow(dim, 0, 0);
      r.advanced.push_back(Tensor());
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
        // a 0-d mask acts like a Python bool: a new dim of size 1 (True) or 0 (False)
        v = v.unsqueeze(dim);
        if (!idx.item().to_bool()) v = v.narrow(dim, 0, 0);
        r.advanced.push_back(Tensor());
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
      } else {
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
    int64_t size = self.sizes()[0];
    EMBER_CHECK_KIND(i >= -size && i < size, Index, "index ", i, " is out of bounds for dimension 0 with size ", size);
    return self.select(0, i);
  }
  Indexed r = apply_indices(self, index);
  if (!r.has_advanced) return r.view;
  return ember::index(r.view, r.advanced);
}

void tensor_setitem(const Tensor& self, PyObject* index, PyObject* value) {
  Tensor v;
  Scalar s;
  bool is_scalar = !is_tensor(value) && to_scalar(value, &s);
  if (!is_scalar) v = is_tensor(value) ? unpack(value) : tensor_from_data(value, self.dtype());
  Indexed r = apply_indices(self, index);
  if (!r.has_advanced) {
    if (is_scalar) r.view.fill_(s);
    else r.view.copy_(v);
    return;
  }
  // x[mask] = number with a full-shape mask: masked_fill_
  if (is_scalar && r.advanced.size() == 1 && r.advanced[0].dtype() == kBool && r.advanced[0].sizes() == r.view.sizes()) {
    r.view.masked_fill_(r.advanced[0], s);
    return;
  }
  if (is_scalar) v = scalar_to_tensor(s);
  r.view.index_put_(r.advanced, v, false);
}

}  // namespace ember::py
