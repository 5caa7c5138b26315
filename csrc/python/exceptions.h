#pragma once
// C++ exceptions -> Python exceptions, written once: the hand-written bindings' catch blocks
// (EMBER_PY_CATCH) and nanobind's translator for the nanobind-bound functions both use this file,
// so an ember::Error raises the same Python type from every entry point.
#include <Python.h>

#include "ember/core/error.h"

namespace ember::py {

// The Python exception type raised for an ember::Error of this kind (a borrowed reference).
PyObject* python_exception_type(ErrorKind kind);

// The Python type for ember::OutOfMemoryError (a RuntimeError subclass); until set, RuntimeError.
void set_out_of_memory_type(PyObject* type);

// Set the Python error indicator from `e`: its kind's type (an out-of-memory error: the type set
// above), its message.
void set_python_error(const Error& e);

// Set the Python error indicator from the exception being handled; call only inside a catch block.
void set_python_error();

// Make nanobind raise ember::Error through python_exception_type (other C++ exceptions keep
// nanobind's own translation). Called once, when the module is created.
void register_exception_translator();

}  // namespace ember::py
