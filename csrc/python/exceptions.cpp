#include "python/exceptions.h"

#include <nanobind/nanobind.h>

#include <exception>
#include <new>

#include "ember/alloc/caching_allocator.h"

namespace nb = nanobind;

namespace ember::py {

PyObject* python_exception_type(ErrorKind kind) {
  // no default: a new ErrorKind fails the build (-Wswitch) until it is mapped here
  switch (kind) {
    case ErrorKind::Runtime: return PyExc_RuntimeError;
    case ErrorKind::Index: return PyExc_IndexError;
    case ErrorKind::Type: return PyExc_TypeError;
    case ErrorKind::Value: return PyExc_ValueError;
    case ErrorKind::NotImplemented: return PyExc_NotImplementedError;
    case ErrorKind::Assertion: return PyExc_AssertionError;
  }
  return PyExc_RuntimeError;  // a value outside the enum
}

namespace {
PyObject* g_oom_type = nullptr;  // ember.OutOfMemoryError, once ember.cuda has set it
}  // namespace

void set_out_of_memory_type(PyObject* type) {
  Py_XINCREF(type);
  Py_XDECREF(g_oom_type);
  g_oom_type = type;
}

void set_python_error(const Error& e) {
  if (g_oom_type && dynamic_cast<const OutOfMemoryError*>(&e)) return PyErr_SetString(g_oom_type, e.what());
  PyErr_SetString(python_exception_type(e.kind()), e.what());
}

void set_python_error() {
  try {
    throw;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const Error& e) {
    set_python_error(e);
  } catch (const nb::builtin_exception& e) {
    // nanobind's own cast/type errors
    PyErr_SetString(PyExc_TypeError, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_SetString(PyExc_RuntimeError, "DefaultCPUAllocator: not enough memory");
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (...) {
    PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
  }
}

void register_exception_translator() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      set_python_error(e);
    }
  });
}

}  // namespace ember::py
