// ember._C: the extension module. Registers the Tensor type, dtype/device/Generator objects,
// the generated op functions (in ember._C._ops, ember._C._nn and ember._C._special) and the hand-written helpers.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/alloc/allocator.h"
#include "ember/core/blocking.h"
#include "ember/core/deterministic.h"
#include "ember/core/fresh.h"
#include "ember/cuda/cuda.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/dispatch.h"
#include "ember/parallel/parallel.h"
#include "python/arg_parser.h"
#include "python/bindings.h"
#include "python/dlpack.h"
#include "python/exceptions.h"

namespace nb = nanobind;
using namespace ember;

extern PyMethodDef ember_generated_functions[];
extern PyMethodDef ember_generated_nn_functions[];
extern PyMethodDef ember_generated_special_functions[];

namespace {

struct DtypeObj {
  ScalarType t;
};

nb::object dtype_obj(ScalarType t) { return nb::borrow(py::wrap_dtype(t)); }

// device("cuda:1"), device("cuda", 1), device(type="cuda", index=None), device(other). A bare int
// names an accelerator, which a CPU-only build lacks (PyTorch's error).
void construct_device(Device* d, nb::handle type, nb::handle index) {
  if (py::is_device(type.ptr())) {
    EMBER_CHECK_KIND(index.is_none(), Type, "device(): a device takes no index");
    new (d) Device(py::unpack_device(type.ptr()));
    return;
  }
  EMBER_CHECK(!PyLong_Check(type.ptr()) || PyLong_AsLong(type.ptr()) >= 0, "Device index must not be negative");
  EMBER_CHECK(!PyLong_Check(type.ptr()), "Cannot access accelerator device when none is available.");
  EMBER_CHECK_KIND(PyUnicode_Check(type.ptr()), Type, "device() received an invalid combination of arguments - got (",
                   py::type_name(type.ptr()), ")");
  std::string spec = nb::cast<std::string>(type);
  if (index.is_none()) {
    new (d) Device(spec);
    return;
  }
  EMBER_CHECK_KIND(PyLong_Check(index.ptr()) && !PyBool_Check(index.ptr()), Type,
                   "device(): argument 'index' must be int, not ", py::type_name(index.ptr()));
  EMBER_CHECK(spec.find(':') == std::string::npos,
              "type (string) must not include an index because index was passed explicitly: ", spec);
  long i = PyLong_AsLong(index.ptr());
  EMBER_CHECK(i >= 0, "Device index must not be negative");
  new (d) Device(spec + ":" + std::to_string(i));
}

// Pickles as device('cpu') / device('cuda', 1), as PyTorch's does.
nb::tuple reduce_device(nb::handle self) {
  const Device& d = *nb::inst_ptr<Device>(self);
  const char* type = device_type_name(d.type);
  nb::object args = d.index < 0 ? nb::make_tuple(type) : nb::make_tuple(type, int(d.index));
  return nb::make_tuple(nb::borrow(reinterpret_cast<PyObject*>(Py_TYPE(self.ptr()))), args);
}

// ember.tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False)
PyObject* py_tensor(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  // `data` is any Python object: parse by hand
  nargs = PyVectorcall_NARGS(nargs);
  PyObject* data = nargs > 0 ? args[0] : nullptr;
  std::optional<ScalarType> dtype;
  std::optional<Device> device;
  bool requires_grad = false, pin_memory = false;
  EMBER_CHECK_KIND(nargs <= 1, Type, "tensor() takes 1 positional argument but ", nargs, " were given");
  if (kwnames) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); k++) {
      const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
      PyObject* v = args[nargs + k];
      if (!std::strcmp(key, "data")) data = v;
      else if (!std::strcmp(key, "dtype")) { if (v != Py_None) dtype = py::unpack_dtype(v); }
      else if (!std::strcmp(key, "device")) {
        if (v != Py_None) {
          device = py::unpack_device(v);
          device->check_available();
        }
      } else if (!std::strcmp(key, "requires_grad")) requires_grad = PyObject_IsTrue(v) == 1;
      else if (!std::strcmp(key, "pin_memory")) pin_memory = PyObject_IsTrue(v) == 1;
      else EMBER_FAIL(Type, "tensor() got an unexpected keyword argument '", key, "'");
    }
  }
  EMBER_CHECK_KIND(data != nullptr, Type, "tensor() missing 1 required positional arguments: \"data\"");
  if (!device) device = py::default_device();
  if (pin_memory) py::check_pin_memory_request(device ? *device : Device());
  Tensor t = py::tensor_from_data(data, dtype);
  if (device && !device->is_cpu()) t = t.to(*device);  // built on the CPU from Python data, then moved once
  if (pin_memory) t = cuda::pin_memory(t);  // (before requires_grad is set below: a leaf)
  t = fresh(t);
  PyObject* r = py::wrap(t);
  if (requires_grad) {
    if (PyObject_SetAttrString(r, "requires_grad", Py_True) < 0) { Py_DECREF(r); return nullptr; }
  }
  return r;
  EMBER_PY_CATCH
}

PyMethodDef extra_functions[] = {
    {"tensor", (PyCFunction)(void (*)(void))py_tensor, METH_FASTCALL | METH_KEYWORDS,
     "Build a tensor by copying data: a number, a (nested) sequence, a NumPy array or a tensor.\n\n"
     "tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False) -> Tensor"},
    {nullptr, nullptr, 0, nullptr},
};

void add_functions(nb::module_& target, PyMethodDef* defs) {
  for (PyMethodDef* d = defs; d->ml_name; d++) {
    // self is the module: a call that an argument's __torch_function__ takes over finds its function there
    nb::object f = nb::steal(PyCFunction_NewEx(d, target.ptr(), target.attr("__name__").ptr()));
    if (!f.is_valid()) throw nb::python_error();
    target.attr(d->ml_name) = f;
  }
}

// Joins of threads that may be running Python callbacks (a process group's worker finishing a
// collective) release the GIL when this thread holds it, as torch's process-group holders do.
void release_gil_while(void (*fn)(void*), void* ctx) {
  if (Py_IsInitialized() && PyGILState_Check()) {
    nb::gil_scoped_release nogil;
    fn(ctx);
  } else {
    fn(ctx);
  }
}

}  // namespace

NB_MODULE(_C, m) {
  // dtype singletons and the tensor class live for the whole process by design
  nb::set_leak_warnings(false);
  py::register_exception_translator();
  set_blocking_hook(release_gil_while);

  // ---- dtypes
  auto dtype_cls = nb::class_<DtypeObj>(m, "dtype", "The element type of a tensor (ember.float32, ember.int64, ...).")
                       .def_prop_ro("is_floating_point", [](const DtypeObj& d) { return is_floating(d.t); })
                       .def_prop_ro("is_signed", [](const DtypeObj& d) { return is_signed(d.t); })
                       .def_prop_ro("is_complex", [](const DtypeObj& d) { return is_complex(d.t); })
                       .def_prop_ro("itemsize", [](const DtypeObj& d) { return itemsize(d.t); })
                       .def("__repr__", [](const DtypeObj& d) { return std::string("ember.") + dtype_name(d.t); })
                       .def("__reduce__", [](const DtypeObj& d) { return std::string(dtype_name(d.t)); })
                       .def("_cname", [](const DtypeObj& d) { return std::string(dtype_cname(d.t)); });
  PyObject* dtype_objects[kNumDtypes];
  for (int i = 0; i < kNumDtypes; i++) {
    nb::object o = nb::cast(DtypeObj{ScalarType(i)});
    m.attr(dtype_name(ScalarType(i))) = o;
    dtype_objects[i] = o.ptr();
  }
  py::register_dtype_objects(dtype_cls.ptr(), dtype_objects);

  // ---- devices
  auto device_cls = nb::class_<Device>(m, "device", "Where a tensor's data lives: a device type and an optional index.")
                        .def("__init__", &construct_device, nb::arg("type"), nb::arg("index").none() = nb::none())
                        .def("__reduce__", &reduce_device)
                        .def_prop_ro("type", [](const Device& d) { return device_type_name(d.type); })
                        .def_prop_ro("index", [](const Device& d) -> nb::object {
                          if (d.index < 0) return nb::none();
                          return nb::int_(int(d.index));
                        })
                        .def("__str__", &Device::str)
                        .def("__repr__", [](const Device& d) {
                          std::string s = "device(type='" + std::string(device_type_name(d.type)) + "'";
                          if (d.index >= 0) s += ", index=" + std::to_string(d.index);
                          return s + ")";
                        })
                        .def("__eq__", [](const Device& a, nb::handle b) {
                          if (py::is_device(b.ptr())) return a == py::unpack_device(b.ptr());
                          if (PyUnicode_Check(b.ptr())) return a == Device(nb::cast<std::string>(b));
                          return false;
                        }, nb::arg("other").none())
                        .def("__hash__", [](const Device& d) { return int(d.type) * 256 + d.index; });
  py::register_device_type(device_cls.ptr());

  // ---- generators
  auto gen_cls = nb::class_<Generator>(m, "Generator", "A random number generator (Philox) with its own state.")
                     .def("__init__", [](Generator* g, nb::handle device) {
                       Device d = device.is_none() ? Device() : py::unpack_device(device.ptr());
                       if (!d.is_cpu()) {
                         EMBER_CHECK(d.type == DeviceType::CUDA && cuda::is_compiled(), "Cannot get a ",
                                     device_type_name(d.type), " generator: Ember was built without CUDA support");
                         d.check_available();  // PyTorch's errors without a driver or a GPU, or for a bad index
                         if (d.index < 0) d = Device(DeviceType::CUDA, int8_t(cuda::current_device()));
                       }
                       new (g) Generator(Generator::kDefaultSeed, d);
                     }, nb::arg("device").none() = "cpu")
                     .def("manual_seed", [](nb::handle self, int64_t seed) {
                       nb::inst_ptr<Generator>(self)->manual_seed(uint64_t(seed));
                       return nb::borrow(self);
                     }, nb::arg("seed"))
                     .def("seed", [](Generator& g) { return g.seed(); })
                     .def("initial_seed", &Generator::initial_seed)
                     .def_prop_ro("device", [](const Generator& g) { return g.device(); })
                     .def("get_state", [](const Generator& g) {
                       Tensor t = empty_tensor({16}, kByte);
                       g.get_state(static_cast<uint8_t*>(t.data_ptr()));
                       return nb::steal(py::wrap(t));
                     })
                     .def("set_state", [](nb::handle self, const Tensor& t) {
                       EMBER_CHECK(t.device().is_cpu(), "set_state: the state must be a CPU ByteTensor, got one on ",
                                   t.device());
                       EMBER_CHECK(t.dtype() == kByte && t.numel() == 16,
                                   "set_state: expected a ByteTensor of 16 elements (Ember's Philox state), got ",
                                   t.dtype(), " of size ", t.sizes());
                       Tensor c = t.contiguous();
                       nb::inst_ptr<Generator>(self)->set_state(static_cast<const uint8_t*>(c.data_ptr()));
                       return nb::borrow(self);
                     });
  py::register_generator_type(gen_cls.ptr());
  m.attr("default_generator") = nb::cast(&default_generator(), nb::rv_policy::reference);

  // ---- the Tensor type and ops
  py::bind_tensor(m);
  py::bind_autograd(m);
  py::bind_profiler(m);
  py::bind_fuser(m);
  py::bind_shm(m);
  py::bind_jit(m);
  py::bind_distributed(m);
  py::bind_amp(m);
  py::bind_cuda(m);
  nb::module_ ops = m.def_submodule("_ops", "generated op functions");
  add_functions(ops, ember_generated_functions);
  add_functions(ops, extra_functions);
  // ops that PyTorch keeps in torch._C._nn (torch.nn.functional's builtins): ops.yaml's python_module: nn
  nb::module_ nn_ops = m.def_submodule("_nn", "generated torch.nn.functional ops");
  add_functions(nn_ops, ember_generated_nn_functions);
  // torch.special's ops (torch._C._special): ops.yaml's python_module: special
  nb::module_ special_ops = m.def_submodule("_special", "generated torch.special ops");
  add_functions(special_ops, ember_generated_special_functions);

  m.def("_set_tensor_class", [](nb::handle cls) { py::set_tensor_class((PyTypeObject*)cls.ptr()); });
  m.def("_set_size_class", [](nb::handle cls) { py::register_size_type(cls.ptr()); });
  m.def("_return_types", [] { return nb::steal(py::return_types_dict()); });

  // ---- threads, dtypes, memory
  m.def("set_num_threads", &set_num_threads, "Set the number of threads used for intra-op parallelism.");
  m.def("get_num_threads", &get_num_threads, "Number of threads used for intra-op parallelism.");
  m.def("get_default_dtype", []() { return dtype_obj(default_dtype()); },
      "The floating-point dtype new tensors get by default.");
  m.def("set_default_dtype", [](nb::handle d) { set_default_dtype(py::unpack_dtype(d.ptr())); });
  m.def("_set_default_device", [](nb::handle d) {
    py::set_default_device(d.is_none() ? std::nullopt : std::optional<Device>(py::unpack_device(d.ptr())));
  }, nb::arg("device").none());
  m.def("promote_types", [](nb::handle a, nb::handle b) {
    return dtype_obj(promote_types(py::unpack_dtype(a.ptr()), py::unpack_dtype(b.ptr())));
  }, "The smallest dtype both given dtypes promote to.");
  m.def("can_cast", [](nb::handle from, nb::handle to) {
    return can_cast(py::unpack_dtype(from.ptr()), py::unpack_dtype(to.ptr()));
  }, "True when a value of one dtype may be cast to another under the type-promotion rules.");
  m.def("result_type", [](nb::handle a, nb::handle b) {
    Tensor ts[2];
    nb::handle hs[2] = {a, b};
    for (int i = 0; i < 2; i++) ts[i] = py::is_tensor(hs[i].ptr()) ? py::unpack(hs[i].ptr()) : py::number_to_tensor(hs[i].ptr());
    return dtype_obj(result_type(ts, 2));
  }, "The dtype an arithmetic op on the two tensors or numbers would produce.");
  m.def("_cpu_capability", []() { return std::string(cpu_capability_name()); });
  m.def("_set_deterministic_algorithms", &set_deterministic_algorithms);
  // warn_only's warnings become Python UserWarnings (an op may run with the GIL released)
  set_warning_hook([](const char* message) {
    nb::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_UserWarning, message, 1) < 0) PyErr_Clear();  // an error filter: the op goes on
  });
  m.def("_memory_stats", []() {
    MemoryStats s = cpu_memory_stats();
    nb::dict d;
    d["allocated_bytes.all.current"] = s.allocated_bytes;
    d["allocated_bytes.all.peak"] = s.peak_allocated_bytes;
    d["allocation.all.allocated"] = s.allocation_count;
    d["allocation.all.freed"] = s.free_count;
    d["allocation.all.current"] = s.allocation_count - s.free_count;
    d["allocated_bytes.all.allocated"] = s.total_allocated_bytes;
    d["allocated_bytes.all.freed"] = s.total_freed_bytes;
    return d;
  });
  m.def("_reset_peak_memory_stats", &reset_peak_memory_stats);
  m.def("_cpu_empty_cache", &cpu_empty_cache);
  m.def("_cpu_cached_bytes", &cpu_cached_bytes);

  // ---- interop
  m.def("from_numpy", [](nb::handle arr) {
    EMBER_CHECK_KIND(nb::hasattr(arr, "__array_interface__") && std::strncmp(Py_TYPE(arr.ptr())->tp_name, "numpy.", 6) == 0,
                     Type, "expected np.ndarray (got ", py::type_name(arr.ptr()), ")");
    return nb::steal(py::wrap(py::tensor_from_numpy(arr.ptr(), true)));
  }, "A tensor sharing the memory of a NumPy array.");
  m.def("_to_dlpack", [](const Tensor& t, bool versioned, bool copied) {
    return nb::steal(py::tensor_to_dlpack(t, versioned, copied));
  }, nb::arg("t"), nb::arg("versioned") = false, nb::arg("copied") = false);
  m.def("from_dlpack", [](nb::handle o) { return nb::steal(py::wrap(py::tensor_from_dlpack(o.ptr()))); },
      "A tensor sharing the memory of a DLPack capsule or an object with __dlpack__.");
  m.def("_tensor_from_data", [](nb::handle data, nb::handle dtype) {
    return nb::steal(py::wrap(py::tensor_from_data(
        data.ptr(), dtype.is_none() ? std::nullopt : std::optional<ScalarType>(py::unpack_dtype(dtype.ptr())))));
  }, nb::arg("data"), nb::arg("dtype").none());
  m.def("_array_interface", [](const Tensor& t) {
    // typestr, data pointer and byte strides for numpy's __array_interface__
    const char* ts = nullptr;
    switch (t.dtype()) {
      case kBool: ts = "|b1"; break;
      case kByte: ts = "|u1"; break;
      case kChar: ts = "|i1"; break;
      case kShort: ts = "<i2"; break;
      case kInt: ts = "<i4"; break;
      case kLong: ts = "<i8"; break;
      case kHalf: ts = "<f2"; break;
      case kFloat: ts = "<f4"; break;
      case kDouble: ts = "<f8"; break;
      case kComplexFloat: ts = "<c8"; break;
      case kComplexDouble: ts = "<c16"; break;
      case kBFloat16: EMBER_FAIL(Type, "Got unsupported ScalarType BFloat16");
      case ScalarType::Undefined: break;
    }
    std::vector<int64_t> strides;
    for (int64_t s : t.strides()) strides.push_back(s * t.element_size());
    return nb::make_tuple(std::string(ts), uintptr_t(t.data_ptr()), nb::tuple(nb::cast(strides)));
  });
}
