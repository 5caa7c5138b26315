// The Python Tensor type: a nanobind class holding an ember::Tensor, with the number, mapping and
// comparison protocols implemented as direct C slots (no Python in the hot path), the generated
// op methods attached as fast vectorcall descriptors, and properties.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/iter/layout.h"
#include "ember/autograd/node.h"
#include "ember/generated/ops.h"
#include "ember/jit/tracer.h"
#include "ember/ops/conj.h"
#include "ember/sparse/sparse_tensor.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

extern PyMethodDef ember_generated_methods[];

namespace ember::py {

namespace {

// mT / mH / H / adjoint(): views of real tensors; the conjugate transposes of a complex tensor are
// conjugate views (Note [Conjugate views]). A 0-D tensor comes back as itself (conjugated)
// with torch's deprecation warning; H takes matrices only.
nb::object matrix_transpose(const Tensor& t, const char* what, const char* prefix, bool matrices_only, bool conj) {
  conj = conj && is_complex(t.dtype());
  if (t.dim() == 0) {
    std::string msg = std::string(prefix) + what + " is deprecated on 0-D tensors. " +
                      (std::string(what) == "mT" ? "This function is the identity in these cases." : "Consider using x.conj().");
    if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw nb::python_error();
    return nb::steal(wrap(conj ? t.conj() : t.view(t.sizes())));
  }
  if (matrices_only) {
    EMBER_CHECK(t.dim() == 2, "tensor.", what, " is only supported on matrices (2-D tensors). Got ", t.dim(),
                "-D tensor.", t.dim() > 2 ? " For batches of matrices, consider using tensor.mH" : "");
  } else {
    EMBER_CHECK(t.dim() >= 2, "tensor.", what, " is only supported on matrices or batches of matrices. Got ", t.dim(),
                "-D tensor.");
  }
  return nb::steal(wrap(conj ? t.mH() : t.transpose(-2, -1)));
}

// Operand of a binary operator: a Tensor object or a Python number (wrapped); else NotImplemented.
struct Operand {
  const Tensor* t = nullptr;
  Tensor holder;
  bool ok(PyObject* o) {
    if (is_tensor(o)) { t = &unpack(o); return true; }
    Scalar s;
    if (!PyBool_Check(o) && !PyLong_Check(o) && !PyFloat_Check(o) && !PyComplex_Check(o)) {
      const char* tn = Py_TYPE(o)->tp_name;
      if (std::strncmp(tn, "numpy.", 6) != 0 || !to_scalar(o, &s)) return false;
    } else if (!to_scalar(o, &s)) {
      return false;
    }
    holder = scalar_to_tensor(s);
    t = &holder;
    return true;
  }
};

template <class F>
PyObject* binary(PyObject* a, PyObject* b, F f) {
  EMBER_PY_TRY
  Operand x, y;
  if (!x.ok(a) || !y.ok(b)) Py_RETURN_NOTIMPLEMENTED;
  return wrap(f(*x.t, *y.t));
  EMBER_PY_CATCH
}

template <class F>
PyObject* inplace(PyObject* a, PyObject* b, F f) {
  EMBER_PY_TRY
  Operand y;
  if (!is_tensor(a) || !y.ok(b)) Py_RETURN_NOTIMPLEMENTED;
  f(unpack(a), *y.t);
  return incref(a);
  EMBER_PY_CATCH
}

#define BIN(name, expr) \
  PyObject* name(PyObject* a, PyObject* b) { return binary(a, b, [](const Tensor& x, const Tensor& y) { return expr; }); }
#define INPL(name, expr) \
  PyObject* name(PyObject* a, PyObject* b) { return inplace(a, b, [](const Tensor& x, const Tensor& y) { expr; }); }
BIN(nb_add, ember::add(x, y))
BIN(nb_sub, ember::sub(x, y))
// number * tensor is tensor.mul(number), as PyTorch's Tensor.__rmul__ (the number second matters
// for half/bfloat16, where mul reads a second scalar operand unrounded)
PyObject* nb_mul(PyObject* a, PyObject* b) {
  if (!is_tensor(a) && is_tensor(b))
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::mul(y, x); });
  return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::mul(x, y); });
}
// number / tensor is reciprocal(tensor) * number, as PyTorch's Tensor.__rtruediv__ computes it
PyObject* nb_truediv(PyObject* a, PyObject* b) {
  if (!is_tensor(a) && is_tensor(b))
    return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::mul(ember::reciprocal(y), x); });
  return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::div(x, y); });
}
BIN(nb_floordiv, ember::floor_divide(x, y))
BIN(nb_mod, ember::remainder(x, y))
BIN(nb_and, ember::bitwise_and(x, y))
BIN(nb_or, ember::bitwise_or(x, y))
BIN(nb_xor, ember::bitwise_xor(x, y))
BIN(nb_lshift, ember::bitwise_left_shift(x, y))
BIN(nb_rshift, ember::bitwise_right_shift(x, y))

INPL(nb_iadd, ember::add_(x, y))
INPL(nb_isub, ember::sub_(x, y))
INPL(nb_imul, ember::mul_(x, y))
INPL(nb_itruediv, ember::div_(x, y))
INPL(nb_ifloordiv, ember::floor_divide_(x, y))
INPL(nb_imod, ember::remainder_(x, y))
INPL(nb_iand, ember::bitwise_and_(x, y))
INPL(nb_ior, ember::bitwise_or_(x, y))
INPL(nb_ixor, ember::bitwise_xor_(x, y))
INPL(nb_ilshift, ember::bitwise_left_shift_(x, y))
INPL(nb_irshift, ember::bitwise_right_shift_(x, y))
#undef BIN
#undef INPL

// x @ 2 is a TypeError ("unsupported operand type(s) for @"), as in PyTorch: no number operands.
PyObject* nb_matmul(PyObject* a, PyObject* b) {
  if (!is_tensor(a) || !is_tensor(b)) Py_RETURN_NOTIMPLEMENTED;
  return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::matmul(x, y); });
}

PyObject* nb_pow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::pow(x, y); });
}
PyObject* nb_ipow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return inplace(a, b, [](const Tensor& x, const Tensor& y) { ember::pow_(x, y); });
}

PyObject* nb_neg(PyObject* a) { EMBER_PY_TRY return wrap(ember::neg(unpack(a))); EMBER_PY_CATCH }
PyObject* nb_pos(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack(a);
  EMBER_CHECK(t.dtype() != kBool, "The `+` operator, on a bool tensor is not supported.");
  return incref(a);  // +x is x itself, as in PyTorch
  EMBER_PY_CATCH
}
PyObject* nb_abs(PyObject* a) { EMBER_PY_TRY return wrap(ember::abs(unpack(a))); EMBER_PY_CATCH }
PyObject* nb_invert(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack(a);
  EMBER_CHECK_KIND(!is_floating(t.dtype()) && !is_complex(t.dtype()), Type,
                   "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return wrap(ember::bitwise_not(t));
  EMBER_PY_CATCH
}

int nb_bool(PyObject* a) {
  try {
    const Tensor& t = unpack(a);
    EMBER_CHECK(t.numel() == 1, "Boolean value of Tensor with ", t.numel() == 0 ? "no values" : "more than one value",
                " is ambiguous");
    return t.item().to_bool() ? 1 : 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

PyObject* nb_float(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack(a);
  EMBER_CHECK_KIND(t.numel() == 1, Value, "only one element tensors can be converted to Python scalars");
  Scalar s = t.item();
  EMBER_CHECK(s.imag() == 0, "value cannot be converted to type double without overflow");
  return PyFloat_FromDouble(s.to_double());
  EMBER_PY_CATCH
}
PyObject* nb_int(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack(a);
  EMBER_CHECK_KIND(t.numel() == 1, Value, "only one element tensors can be converted to Python scalars");
  Scalar s = t.item();
  EMBER_CHECK(s.imag() == 0, "value cannot be converted to type int64_t without overflow");
  if (s.is_floating() || s.is_complex()) return PyLong_FromDouble(s.to_double());  // NaN: ValueError, inf: OverflowError (Python's)
  return PyLong_FromLongLong(s.to_long());
  EMBER_PY_CATCH
}
PyObject* nb_index(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack(a);
  EMBER_CHECK_KIND(t.numel() == 1 && is_integral(t.dtype(), true), Type,
                   "only integer tensors of a single element can be converted to an index");
  return PyLong_FromLongLong(t.item().to_long());
  EMBER_PY_CATCH
}

PyObject* richcompare(PyObject* a, PyObject* b, int op) {
  switch (op) {
    case Py_EQ: return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::eq(x, y); });
    case Py_NE: return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::ne(x, y); });
    case Py_LT: return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::lt(x, y); });
    case Py_LE: return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::le(x, y); });
    case Py_GT: return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::gt(x, y); });
    case Py_GE: return binary(a, b, [](const Tensor& x, const Tensor& y) { return ember::ge(x, y); });
  }
  Py_RETURN_NOTIMPLEMENTED;
}

Py_hash_t tensor_hash(PyObject* a) { return Py_hash_t(uintptr_t(a) >> 4); }

// Reading a shape into Python while a jit trace runs may bake it into the graph (ember/jit).
// The message names the Python line that read it.
void shape_read(const Tensor& t, const char* what) {
  if (EMBER_UNLIKELY(jit::tracing())) {
    std::string where = what;
    if (PyFrameObject* f = PyEval_GetFrame()) {
      PyCodeObject* code = PyFrame_GetCode(f);
      const char* file = PyUnicode_AsUTF8(code->co_filename);
      where += std::string(" at ") + (file ? file : "?") + ":" + std::to_string(PyFrame_GetLineNumber(f));
      Py_DECREF(code);
    }
    jit::on_shape_read(t, where.c_str());
  }
}

Py_ssize_t mp_length(PyObject* a) {
  try {
    const Tensor& t = unpack(a);
    EMBER_CHECK_KIND(t.dim() > 0, Type, "len() of a 0-d tensor");
    shape_read(t, "len(Tensor)");
    return Py_ssize_t(t.sizes()[0]);
  } catch (...) {
    set_python_error();
    return -1;
  }
}

PyObject* mp_subscript(PyObject* a, PyObject* index) {
  EMBER_PY_TRY
  return wrap(tensor_getitem(unpack(a), index));
  EMBER_PY_CATCH
}

int mp_ass_subscript(PyObject* a, PyObject* index, PyObject* value) {
  try {
    EMBER_CHECK_KIND(value != nullptr, Type, "Tensor does not support item deletion");
    tensor_setitem(unpack(a), index, value);
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

PyType_Slot tensor_slots[] = {
    {Py_nb_add, (void*)nb_add},
    {Py_nb_subtract, (void*)nb_sub},
    {Py_nb_multiply, (void*)nb_mul},
    {Py_nb_true_divide, (void*)nb_truediv},
    {Py_nb_floor_divide, (void*)nb_floordiv},
    {Py_nb_remainder, (void*)nb_mod},
    {Py_nb_power, (void*)nb_pow},
    {Py_nb_and, (void*)nb_and},
    {Py_nb_or, (void*)nb_or},
    {Py_nb_xor, (void*)nb_xor},
    {Py_nb_lshift, (void*)nb_lshift},
    {Py_nb_rshift, (void*)nb_rshift},
    {Py_nb_matrix_multiply, (void*)nb_matmul},
    {Py_nb_inplace_add, (void*)nb_iadd},
    {Py_nb_inplace_subtract, (void*)nb_isub},
    {Py_nb_inplace_multiply, (void*)nb_imul},
    {Py_nb_inplace_true_divide, (void*)nb_itruediv},
    {Py_nb_inplace_floor_divide, (void*)nb_ifloordiv},
    {Py_nb_inplace_remainder, (void*)nb_imod},
    {Py_nb_inplace_power, (void*)nb_ipow},
    {Py_nb_inplace_and, (void*)nb_iand},
    {Py_nb_inplace_or, (void*)nb_ior},
    {Py_nb_inplace_xor, (void*)nb_ixor},
    {Py_nb_inplace_lshift, (void*)nb_ilshift},
    {Py_nb_inplace_rshift, (void*)nb_irshift},
    {Py_nb_negative, (void*)nb_neg},
    {Py_nb_positive, (void*)nb_pos},
    {Py_nb_absolute, (void*)nb_abs},
    {Py_nb_invert, (void*)nb_invert},
    {Py_nb_bool, (void*)nb_bool},
    {Py_nb_float, (void*)nb_float},
    {Py_nb_int, (void*)nb_int},
    {Py_nb_index, (void*)nb_index},
    {Py_tp_richcompare, (void*)richcompare},
    {Py_tp_hash, (void*)tensor_hash},
    {Py_mp_length, (void*)mp_length},
    {Py_mp_subscript, (void*)mp_subscript},
    {Py_mp_ass_subscript, (void*)mp_ass_subscript},
    {0, nullptr},
};

nb::object size_of(const Tensor& t) {
  shape_read(t, "Tensor.shape / Tensor.size()");
  return nb::steal(make_size(t.sizes()));
}

}  // namespace

void bind_tensor(nb::module_& m) {
  auto cls = nb::class_<Tensor>(m, "TensorBase", nb::type_slots(tensor_slots), nb::dynamic_attr(),
                                nb::is_weak_referenceable(),
                                "The C++ half of ember.Tensor: the data, its metadata and the op methods.");
  set_tensor_type((PyTypeObject*)cls.ptr());

  // Generated op methods, attached as plain method descriptors (METH_FASTCALL).
  for (PyMethodDef* d = ember_generated_methods; d->ml_name; d++) {
    nb::object descr = nb::steal(PyDescr_NewMethod((PyTypeObject*)cls.ptr(), d));
    if (!descr.is_valid()) throw nb::python_error();
    nb::setattr(cls, d->ml_name, descr);
  }

  // Tensor._make_subclass(cls, data, require_grad=False): an instance of the Python subclass `cls`
  // (nn.Parameter, ...) aliasing `data` (same storage and version counter, no history).
  cls.def_static("_make_subclass", [](nb::handle sub, const Tensor& data, bool require_grad) {
    EMBER_CHECK_KIND(PyType_Check(sub.ptr()) && PyType_IsSubtype((PyTypeObject*)sub.ptr(), tensor_type()), Type,
                     "_make_subclass(): expected a subclass of ember.Tensor, got ", type_name(sub.ptr()));
    nb::object o = nb::inst_alloc(sub);
    new (nb::inst_ptr<Tensor>(o)) Tensor(data.detach());
    nb::inst_mark_ready(o);
    autograd::set_requires_grad(unpack(o.ptr()), require_grad);
    return o;
  }, nb::arg("cls"), nb::arg("data"), nb::arg("require_grad") = false);

  cls.def_prop_ro("shape", &size_of, "The sizes of the dimensions, as an ember.Size.")
      // The shape for argument checks in Ember's own Python code: a jit trace does not record this
      // read, so use it only where the sizes never reach an op.
      .def_prop_ro("_checked_shape", [](const Tensor& t) { return nb::steal(make_size(t.sizes())); })
      .def_prop_ro("dtype", [](const Tensor& t) { return nb::borrow(wrap_dtype(t.dtype())); }, "The element type.")
      .def_prop_ro("device", [](const Tensor& t) { return t.device(); }, "The device the data lives on.")
      .def_prop_ro("ndim", &Tensor::dim, "Number of dimensions.")
      .def_prop_ro("is_cuda", [](const Tensor& t) { return t.device().type == DeviceType::CUDA; },
          "True when the data lives on a CUDA device.")
      .def_prop_ro("is_cpu", [](const Tensor& t) { return t.device().is_cpu(); },
          "True when the data lives on the CPU.")
      .def_prop_ro("is_meta", &Tensor::is_meta, "True for a tensor on the meta device (sizes and dtype, no data).")
      .def_prop_ro("itemsize", &Tensor::element_size, "Size of one element in bytes.")
      .def_prop_ro("nbytes", [](const Tensor& t) {
        EMBER_CHECK(!t.is_sparse(), "nbytes is not defined for sparse tensors. If you want the size of the "
                    "constituent tensors, add the nbytes of the indices and values.");
        return t.nbytes();
      }, "Number of bytes the elements occupy.")
      .def_prop_ro("_version", &Tensor::_version)
      .def_prop_ro("is_sparse", &Tensor::is_sparse, "True for a sparse COO tensor (layout ember.sparse_coo).")
      .def("_nnz", [](const Tensor& t) { return sparse::impl_of(t).nnz(); },
          "Number of stored entries of a sparse COO tensor (duplicates counted).")
      .def("sparse_dim", [](const Tensor& t) { return t.is_sparse() ? sparse::impl_of(t).sparse_dim() : 0; },
          "Number of sparse dimensions (0 for a strided tensor).")
      .def("dense_dim", [](const Tensor& t) { return t.is_sparse() ? sparse::impl_of(t).dense_dim() : t.dim(); },
          "Number of dense dimensions (all of them for a strided tensor).")
      .def("is_coalesced", [](const Tensor& t) {
        EMBER_CHECK(t.is_sparse(), "is_coalesced expected sparse coordinate tensor layout but got Strided");
        return sparse::impl_of(t).coalesced();
      }, "Whether a sparse COO tensor's indices are known to be sorted and unique.")
      .def_prop_ro("T", [](const Tensor& t) {
        std::vector<int64_t> p(size_t(t.dim()));
        for (int64_t i = 0; i < t.dim(); i++) p[size_t(i)] = t.dim() - 1 - i;
        return nb::steal(wrap(t.permute(p)));
      }, "The tensor with all dimensions reversed (a view).")
      .def_prop_ro("mT", [](const Tensor& t) { return matrix_transpose(t, "mT", "Tensor.", false, false); },
          "Transpose of the last two dimensions (a view).")
      .def_prop_ro("mH", [](const Tensor& t) { return matrix_transpose(t, "mH", "Tensor.", false, true); },
          "Conjugate transpose of the last two dimensions (a view).")
      .def_prop_ro("H", [](const Tensor& t) { return matrix_transpose(t, "H", "Tensor.", true, true); },
          "Conjugate transpose of a matrix (a view).")
      .def("adjoint", [](const Tensor& t) { return matrix_transpose(t, "adjoint()", "", false, true); },
          "Conjugate transpose of the last two dimensions (a view).")
      .def("dim", &Tensor::dim, "Number of dimensions.")
      .def("ndimension", &Tensor::dim, "Number of dimensions (alias of dim()).")
      .def("numel", [](const Tensor& t) { shape_read(t, "Tensor.numel()"); return t.numel(); }, "Number of elements.")
      .def("nelement", [](const Tensor& t) { shape_read(t, "Tensor.nelement()"); return t.numel(); },
          "Number of elements (alias of numel()).")
      .def("element_size", &Tensor::element_size, "Size of one element in bytes.")
      .def("storage_offset", &Tensor::storage_offset, "Offset of the first element in the storage, in elements.")
      .def("data_ptr", [](const Tensor& t) { return t.is_meta() ? uintptr_t(0) : uintptr_t(t.data_ptr()); },
           "Address of the first element (0 on the meta device, which has no data).")
      .def("is_floating_point", &Tensor::is_floating_point, "True when the dtype is a floating-point type.")
      .def("is_signed", [](const Tensor& t) { return is_signed(t.dtype()); },
          "True when the dtype can hold negative values.")
      .def("is_contiguous", [](const Tensor& t, nb::handle mf) {
        return mf.is_none() ? t.is_contiguous() : is_contiguous_in(t, unpack_memory_format(mf.ptr()));
      }, nb::arg("memory_format") = nb::none(),
          "True when the elements are laid out densely in the memory format (row-major by default).")
      .def("size", [](const Tensor& t, std::optional<int64_t> d) -> nb::object {
        if (!d) return size_of(t);
        shape_read(t, "Tensor.size(dim)");
        return nb::int_(t.size(*d));
      }, nb::arg("dim") = nb::none(), "The sizes of the dimensions, or the size of one dimension.")
      .def("stride", [](const Tensor& t, std::optional<int64_t> d) -> nb::object {
        if (d) return nb::int_(t.stride(*d));
        return nb::tuple(nb::cast(t.strides().vec()));
      }, nb::arg("dim") = nb::none(), "Strides of the dimensions in elements, or the stride of one dimension.")
      .def("item", [](const Tensor& t) { return scalar_to_python(t.item()); },
          "The value of a one-element tensor as a Python number.")
      .def("tolist", [](const Tensor& t) {
        if (EMBER_UNLIKELY(jit::tracing())) jit::on_values_read(t, "Tensor.tolist()");
        jit::TracePause pause;  // its item() reads are covered by the guard above
        // one copy, not one per item; a conjugate view's values are materialized (Note [Conjugate views])
        const Tensor h = t.device().is_cpu() ? t : t.to(Device());
        return tensor_tolist(resolve_bits(h));
      }, "The data as (nested) Python lists of numbers.")
      .def("is_conj", [](const Tensor& t) { return t.is_conj(); },
          "Whether the tensor is a conjugate view (conj() of a complex tensor), whose values are the conjugates of "
          "its storage's.")
      .def("is_neg", [](const Tensor& t) { return t.is_neg(); },
          "Whether the tensor is a negative view (the imaginary part of a conjugate view), whose values are its "
          "storage's negated.")
      .def("resolve_neg", [](nb::handle self) {
        const Tensor& t = unpack(self.ptr());
        return t.is_neg() ? nb::steal(wrap(resolve_neg(t))) : nb::borrow(self);
      }, "The tensor itself, or for a negative view a new tensor holding its values (no negative bit).")
      .def("resolve_conj", [](nb::handle self) {
        const Tensor& t = unpack(self.ptr());
        return t.is_conj() ? nb::steal(wrap(resolve_conj(t))) : nb::borrow(self);
      },
          "The tensor itself, or for a conjugate view a new tensor holding its values (no conjugate bit).")
      .def("_is_same", [](const Tensor& a, const Tensor& b) { return a.is_same(b); })
      .def("_use_count", [](const Tensor& t) { return t.use_count(); })
      .def("_storage_nbytes", [](const Tensor& t) { return t.impl()->storage()->nbytes(); })
      .def("_storage_ptr", [](const Tensor& t) { return uintptr_t(t.impl()->storage()->data()); });
}

nb::object scalar_to_python(const Scalar& s) {
  switch (s.tag()) {
    case Scalar::Tag::Bool: return nb::bool_(s.to_bool());
    case Scalar::Tag::Int: return nb::int_(s.to_long());
    case Scalar::Tag::Double: return nb::float_(s.to_double());
    case Scalar::Tag::Complex: return nb::steal(PyComplex_FromDoubles(s.to_double(), s.imag()));
  }
  return nb::none();
}

}  // namespace ember::py
