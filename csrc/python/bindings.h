#pragma once
// Shared declarations of the hand-written parts of the Python module.
#include <nanobind/nanobind.h>

#include "ember/core/tensor.h"

namespace ember::py {

// A Python object that may be released from any thread (the autograd engine's, a process
// group's): takes the GIL to drop its reference.
struct PyRef {
  PyObject* obj;
  explicit PyRef(nanobind::handle h) : obj(h.ptr()) { Py_XINCREF(obj); }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  // Lets go now; the caller holds the GIL. A callback that ran on another thread calls it, so that
  // the reference does not outlive the callback and need the GIL again from that thread later.
  void drop() {
    Py_XDECREF(obj);
    obj = nullptr;
  }
  ~PyRef() {
    if (!obj || !Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(obj);
    PyGILState_Release(g);
  }
};

void bind_tensor(nanobind::module_& m);
void bind_creation(nanobind::module_& m);
void bind_interop(nanobind::module_& m);
void bind_autograd(nanobind::module_& m);
void bind_profiler(nanobind::module_& m);
void bind_fuser(nanobind::module_& m);  // fuser_bindings.cpp
void bind_shm(nanobind::module_& m);
void bind_jit(nanobind::module_& m);
void bind_distributed(nanobind::module_& m);  // distributed_bindings.cpp
void bind_amp(nanobind::module_& m);  // amp_bindings.cpp: autocast state
void bind_cuda(nanobind::module_& m);  // cuda_bindings.cpp: ember.cuda's devices, memory, streams, events

nanobind::object scalar_to_python(const Scalar& s);
nanobind::object tensor_tolist(const Tensor& t);
Tensor tensor_getitem(const Tensor& self, PyObject* index);
void tensor_setitem(const Tensor& self, PyObject* index, PyObject* value);
// Build a tensor from nested sequences / numbers / arrays (ember.tensor's data argument).
Tensor tensor_from_data(PyObject* data, std::optional<ScalarType> dtype);

}  // namespace ember::py
