// _C._distributed: stores, the Gloo process group, Work handles and DDP's reducer, for
// python/ember/distributed. Blocking calls (store waits, Work.wait) run without the GIL, so other
// Python threads (a DataLoader, a second group) keep going.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/distributed/distributed.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

using namespace ember::distributed;

PyObject* g_dist_error = nullptr;
PyObject* g_store_error = nullptr;
PyObject* g_network_error = nullptr;
PyObject* g_backend_error = nullptr;

// A timedelta, or a number of seconds
Milliseconds to_ms(nb::handle h) {
  double s = nb::hasattr(h, "total_seconds") ? nb::cast<double>(h.attr("total_seconds")()) : nb::cast<double>(h);
  if (!(s >= 0)) throw nb::value_error("timeout must be a non-negative duration");
  return Milliseconds(int64_t(s * 1000.0 + 0.5));
}

nb::object to_timedelta(Milliseconds ms) {
  return nb::module_::import_("datetime").attr("timedelta")(nb::arg("milliseconds") = ms.count());
}

// str or bytes (torch's stores take both)
std::string to_bytes(nb::handle h) {
  if (PyBytes_Check(h.ptr())) return std::string(PyBytes_AS_STRING(h.ptr()), size_t(PyBytes_GET_SIZE(h.ptr())));
  if (PyUnicode_Check(h.ptr())) return nb::cast<std::string>(h);
  if (PyByteArray_Check(h.ptr()))
    return std::string(PyByteArray_AS_STRING(h.ptr()), size_t(PyByteArray_GET_SIZE(h.ptr())));
  throw nb::type_error("store values must be str or bytes");
}

nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

std::vector<Tensor> tensor_list(nb::handle seq) {
  std::vector<Tensor> out;
  if (seq.is_none()) return out;
  for (nb::handle h : seq) out.push_back(unpack(h.ptr()));
  return out;
}

template <class S, class C> void bind_store_methods(C& cls) {
  cls.def("set", [](S& s, const std::string& key, nb::handle value) {
        std::string v = to_bytes(value);
        nb::gil_scoped_release nogil;
        s.set(key, v);
      })
      .def("get", [](S& s, const std::string& key) {
        std::string v;
        {
          nb::gil_scoped_release nogil;
          v = s.get(key);
        }
        return as_bytes(v);
      })
      .def("add", [](S& s, const std::string& key, int64_t amount) {
        nb::gil_scoped_release nogil;
        return s.add(key, amount);
      })
      .def("compare_set", [](S& s, const std::string& key, nb::handle expected, nb::handle desired) {
        std::string e = to_bytes(expected), d = to_bytes(desired), r;
        {
          nb::gil_scoped_release nogil;
          r = s.compare_set(key, e, d);
        }
        return as_bytes(r);
      })
      .def("append", [](S& s, const std::string& key, nb::handle value) {
        std::string v = to_bytes(value);
        nb::gil_scoped_release nogil;
        s.append(key, v);
      })
      .def("check", [](S& s, const std::vector<std::string>& keys) {
        nb::gil_scoped_release nogil;
        return s.check(keys);
      })
      .def("delete_key", [](S& s, const std::string& key) {
        nb::gil_scoped_release nogil;
        return s.delete_key(key);
      })
      .def("num_keys", [](S& s) {
        nb::gil_scoped_release nogil;
        return s.num_keys();
      })
      .def("wait", [](S& s, const std::vector<std::string>& keys, nb::handle timeout) {
        Milliseconds t = timeout.is_none() ? s.timeout() : to_ms(timeout);
        nb::gil_scoped_release nogil;
        s.wait(keys, t);
      }, nb::arg("keys"), nb::arg("timeout").none() = nb::none())
      .def("set_timeout", [](S& s, nb::handle t) { s.set_timeout(to_ms(t)); })
      .def_prop_ro("timeout", [](S& s) { return to_timedelta(s.timeout()); });
}

nb::list tensor_pylist(const std::vector<Tensor>& ts) { return nb::list(nb::steal(wrap_list(ts))); }

// The Python class of a C++ error of ember::distributed (nullptr for others), and its message.
PyObject* error_class(const std::exception_ptr& p, std::string* msg) {
  try {
    std::rethrow_exception(p);
  } catch (const DistStoreError& e) {
    *msg = e.what();
    return g_store_error;
  } catch (const DistNetworkError& e) {
    *msg = e.what();
    return g_network_error;
  } catch (const DistBackendError& e) {
    *msg = e.what();
    return g_backend_error;
  } catch (const DistError& e) {
    *msg = e.what();
    return g_dist_error;
  } catch (...) {
    return nullptr;
  }
}

void translate(const std::exception_ptr& p, void*) {
  std::string msg;
  if (PyObject* cls = error_class(p, &msg)) PyErr_SetString(cls, msg.c_str());
  else std::rethrow_exception(p);  // the next translator's
}

// The Python exception object for an operation's error (Work.exception(), a future's error).
nb::object error_object(const std::exception_ptr& p) {
  std::string msg;
  PyObject* cls = error_class(p, &msg);
  if (!cls) {
    cls = PyExc_RuntimeError;
    try {
      std::rethrow_exception(p);
    } catch (const std::exception& e) {
      msg = e.what();
    } catch (...) {
      msg = "unknown error";
    }
  }
  return nb::handle(cls)(msg);
}

// A future for a Work (torch's Work.get_future()): completed with the work's output tensors, or its
// error, by whichever thread finishes the work; wait() first waits on the work itself, for work that
// only finishes when waited for (point-to-point, NCCL).
nb::object work_future(const std::shared_ptr<Work>& w) {
  nb::object fut = nb::module_::import_("ember.futures").attr("Future")();
  fut.attr("_pull") = nb::cpp_function([w] {
    nb::gil_scoped_release nogil;
    w->wait();
  });
  auto ref = std::make_shared<PyRef>(fut);
  Work* raw = w.get();  // the callback lives in *raw and runs while it finishes
  w->add_callback([ref, raw] {
    nb::gil_scoped_acquire gil;
    nb::handle f(ref->obj);
    try {
      std::exception_ptr e = raw->exception();
      if (e) f.attr("set_exception")(error_object(e));
      else f.attr("set_result")(tensor_pylist(raw->outputs));
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("ember.distributed: completing a Work's future");
    }
    ref->drop();
  });
  return fut;
}

// A DDP communication hook written in Python: hook(bucket) -> Future[Tensor].
CommHook python_comm_hook(nb::handle hook) {
  auto ref = std::make_shared<PyRef>(hook);
  return [ref](GradBucket& bucket) -> std::function<Tensor()> {
    nb::gil_scoped_acquire gil;
    // Python may keep the bucket (a then() callback reads it later): it gets its own copy
    nb::object fut = nb::borrow(ref->obj)(nb::cast(GradBucket(bucket), nb::rv_policy::move));
    if (!nb::hasattr(fut, "wait"))
      throw DistError(std::string("DistributedDataParallel: a communication hook must return an "
                                  "ember.futures.Future, got ") + nb::type_name(fut.type()).c_str());
    auto fref = std::make_shared<PyRef>(fut);
    return [fref]() -> Tensor {
      nb::gil_scoped_acquire gil;
      nb::object v = nb::borrow(fref->obj).attr("wait")();
      // a Future[Tensor], or a collective's own future (its value the list of its outputs)
      if ((PyList_Check(v.ptr()) || PyTuple_Check(v.ptr())) && nb::len(v) > 0) v = v[0];
      if (!is_tensor(v.ptr()))
        throw DistError(std::string("DistributedDataParallel: a communication hook's future must hold a Tensor, "
                                    "got ") + nb::type_name(v.type()).c_str());
      return unpack(v.ptr());
    };
  };
}

}  // namespace

void bind_distributed(nb::module_& parent) {
  nb::module_ m = parent.def_submodule("_distributed", "ember.distributed's C++ half");

  // ---- errors: RuntimeErrors, told apart by class as in torch.distributed
  g_dist_error = PyErr_NewExceptionWithDoc("ember.distributed.DistError",
      "Base class of the errors of ember.distributed.", PyExc_RuntimeError, nullptr);
  g_store_error = PyErr_NewExceptionWithDoc("ember.distributed.DistStoreError",
      "A key-value store operation failed (a timeout, a missing key).", g_dist_error, nullptr);
  g_network_error = PyErr_NewExceptionWithDoc("ember.distributed.DistNetworkError",
      "A network operation of ember.distributed failed.", g_dist_error, nullptr);
  g_backend_error = PyErr_NewExceptionWithDoc("ember.distributed.DistBackendError",
      "A process-group backend failed.", g_dist_error, nullptr);
  m.attr("DistError") = nb::handle(g_dist_error);
  m.attr("DistStoreError") = nb::handle(g_store_error);
  m.attr("DistNetworkError") = nb::handle(g_network_error);
  m.attr("DistBackendError") = nb::handle(g_backend_error);
  nb::register_exception_translator(translate);

  // ---- stores
  auto store = nb::class_<Store>(m, "Store", "A key-value store the processes of a group rendezvous through.");
  bind_store_methods<Store>(store);
  nb::class_<HashStore, Store>(m, "HashStore", "An in-process key-value store (threads of one process).")
      .def(nb::init<>());
  nb::class_<TCPStore, Store>(m, "TCPStore", "A key-value store served over TCP by one master process.")
      .def("__init__", [](TCPStore* self, const std::string& host, int port, std::optional<int64_t> world_size,
                          bool is_master, nb::handle timeout, bool wait_for_workers) {
        if (port < 0 || port > 65535) throw nb::value_error(("TCPStore: invalid port " + std::to_string(port)).c_str());
        TCPStoreOptions o;
        o.port = uint16_t(port);
        o.is_master = is_master;
        o.world_size = world_size;
        o.wait_for_workers = wait_for_workers;
        o.timeout = timeout.is_none() ? kDefaultStoreTimeout : to_ms(timeout);
        nb::gil_scoped_release nogil;
        new (self) TCPStore(host, o);
      }, nb::arg("host_name"), nb::arg("port"), nb::arg("world_size").none() = nb::none(), nb::arg("is_master") = false,
         nb::arg("timeout").none() = nb::none(), nb::arg("wait_for_workers") = true)
      .def_prop_ro("host", [](TCPStore& s) { return s.host(); })
      .def_prop_ro("port", [](TCPStore& s) { return int(s.port()); });
  nb::class_<FileStore, Store>(m, "FileStore", "A key-value store kept in a file that the processes share.")
      .def(nb::init<std::string, int64_t>(), nb::arg("file_name"), nb::arg("world_size") = -1)
      .def_prop_ro("path", [](FileStore& s) { return s.path(); });
  nb::class_<PrefixStore, Store>(m, "PrefixStore", "A view of another store with every key under a prefix.")
      .def(nb::init<std::string, std::shared_ptr<Store>>(), nb::arg("prefix"), nb::arg("store"))
      .def_prop_ro("underlying_store", [](PrefixStore& s) { return s.underlying_store(); });

  // ---- reduce ops: torch's ReduceOp.SUM ... are plain enum members here
  nb::enum_<ReduceOp>(m, "ReduceOp", "How a collective combines the ranks' tensors (SUM, AVG, PRODUCT, MIN, MAX, ...).")
      .value("SUM", ReduceOp::SUM)
      .value("AVG", ReduceOp::AVG)
      .value("PRODUCT", ReduceOp::PRODUCT)
      .value("MIN", ReduceOp::MIN)
      .value("MAX", ReduceOp::MAX)
      .value("BAND", ReduceOp::BAND)
      .value("BOR", ReduceOp::BOR)
      .value("BXOR", ReduceOp::BXOR);

  // ---- work handles
  nb::class_<Work>(m, "Work", "Handle of an asynchronous collective or point-to-point operation.")
      .def("wait", [](Work& w, nb::handle timeout) {
        Milliseconds t = timeout.is_none() ? Milliseconds(0) : to_ms(timeout);
        nb::gil_scoped_release nogil;
        w.wait(t);
        return true;
      }, nb::arg("timeout").none() = nb::none())
      .def("is_completed", &Work::is_completed)
      .def("is_success", &Work::is_success)
      .def("exception", [](Work& w) -> nb::object {
        std::exception_ptr e = w.exception();
        return e ? error_object(e) : nb::none();
      })
      .def("get_future", &work_future)
      .def("result", [](Work& w) {
        std::vector<Tensor> r;
        {
          nb::gil_scoped_release nogil;
          r = w.result();
        }
        return tensor_pylist(r);
      })
      .def("source_rank", [](Work& w) { return w.source_rank; })
      .def("_run_ns", [](Work& w) { return w.run_ns; });

  // ---- process groups
  nb::class_<ProcessGroup>(m, "ProcessGroup", "A group of processes that run collectives together over one backend.")
      .def("rank", &ProcessGroup::rank)
      .def("size", &ProcessGroup::size)
      .def("name", &ProcessGroup::backend_name)
      .def("allreduce", &ProcessGroup::allreduce, nb::arg("tensor"), nb::arg("op"), nb::arg("verify") = true)
      .def("allreduce_coalesced", [](ProcessGroup& pg, nb::handle ts, ReduceOp op) {
        return pg.allreduce_coalesced(tensor_list(ts), op);
      })
      .def("broadcast", &ProcessGroup::broadcast)
      .def("reduce", &ProcessGroup::reduce)
      .def("allgather", [](ProcessGroup& pg, nb::handle outs, const Tensor& in) { return pg.allgather(tensor_list(outs), in); })
      .def("allgather_into_tensor", &ProcessGroup::allgather_into_tensor)
      .def("reduce_scatter_tensor", &ProcessGroup::reduce_scatter_tensor)
      .def("gather", [](ProcessGroup& pg, nb::handle outs, const Tensor& in, int root) {
        return pg.gather(tensor_list(outs), in, root);
      })
      .def("scatter", [](ProcessGroup& pg, const Tensor& out, nb::handle ins, int root) {
        return pg.scatter(out, tensor_list(ins), root);
      })
      .def("alltoall_single", [](ProcessGroup& pg, const Tensor& out, const Tensor& in, std::vector<int64_t> out_splits,
                                 std::vector<int64_t> in_splits) {
        return pg.alltoall_single(out, in, AllToAllSplits{std::move(out_splits), std::move(in_splits)});
      })
      .def("barrier", &ProcessGroup::barrier)
      .def("send", &ProcessGroup::send)
      .def("recv", &ProcessGroup::recv);

  m.def("gloo_available", &gloo_available);
  m.def("new_gloo_group", [](std::shared_ptr<Store> store, int rank, int size, nb::handle timeout, const std::string& hostname) {
    GlooOptions o;
    o.timeout = to_ms(timeout);
    o.hostname = hostname;
    nb::gil_scoped_release nogil;
    return make_gloo_process_group(std::move(store), rank, size, o);
  }, nb::arg("store"), nb::arg("rank"), nb::arg("size"), nb::arg("timeout"), nb::arg("hostname") = "");

  m.def("nccl_available", &nccl_available);
  m.def("new_nccl_group", [](std::shared_ptr<Store> store, int rank, int size, nb::handle timeout) {
    NcclOptions o;
    o.timeout = to_ms(timeout);
    nb::gil_scoped_release nogil;
    return make_nccl_process_group(std::move(store), rank, size, o);
  }, nb::arg("store"), nb::arg("rank"), nb::arg("size"), nb::arg("timeout"));

  m.def("broadcast_coalesced", [](ProcessGroup& pg, nb::handle tensors, int root) {
    broadcast_coalesced(pg, tensor_list(tensors), root);
  });

  // ---- DDP's reducer
  nb::class_<GradBucket>(m, "GradBucket", "One bucket of gradients, as a DDP communication hook sees it.")
      .def("index", [](const GradBucket& b) { return b.index; })
      .def("buffer", [](const GradBucket& b) { return nb::steal(wrap(b.buffer)); })
      .def("gradients", [](const GradBucket& b) { return tensor_pylist(b.gradients()); })
      .def("parameters", [](const GradBucket& b) { return tensor_pylist(b.parameters); })
      .def("is_last", [](const GradBucket& b) { return b.is_last; })
      .def("set_buffer", [](GradBucket& b, const Tensor& t) { b.buffer = t; });
  nb::class_<Reducer>(m, "Reducer")
      .def("__init__", [](Reducer* self, nb::handle params, std::shared_ptr<ProcessGroup> pg, int64_t bucket_cap_bytes,
                          int64_t first_bucket_bytes, bool find_unused) {
        ReducerOptions o;
        o.bucket_cap_bytes = bucket_cap_bytes;
        o.first_bucket_bytes = first_bucket_bytes;
        o.find_unused_parameters = find_unused;
        new (self) Reducer(tensor_list(params), std::move(pg), o);
      })
      .def("prepare_for_backward", [](Reducer& r, nb::handle outputs) {
        std::vector<Tensor> outs = tensor_list(outputs);
        nb::gil_scoped_release nogil;  // it may wait for the last iteration's hooks, which take the GIL
        r.prepare_for_backward(outs);
      })
      .def("register_comm_hook", [](Reducer& r, nb::handle hook) { r.register_comm_hook(python_comm_hook(hook)); })
      .def("register_builtin_comm_hook", [](Reducer& r, bool fp16) {
        r.register_builtin_comm_hook(fp16 ? Reducer::BuiltinHook::Fp16Compress : Reducer::BuiltinHook::AllReduce);
      }, nb::arg("fp16"))
      .def("bucket_indices", &Reducer::bucket_indices)
      .def("set_divisor", &Reducer::set_divisor)
      .def("join_shadow", [](Reducer& r) {
        nb::gil_scoped_release nogil;  // a Python comm hook takes the GIL back
        r.join_shadow();
      })
      .def("stats", [](Reducer& r) {
        ReducerStats s = r.stats();
        nb::dict d;
        d["iterations"] = s.iterations;
        d["buckets_reduced"] = s.buckets_reduced;
        d["comm_ns"] = s.comm_ns;
        d["exposed_ns"] = s.exposed_ns;
        return d;
      });
}

}  // namespace ember::py
