// Python side of the profiler: session start/stop (events come back as plain tuples that
// ember/profiler builds its FunctionEvents from), record_function ranges and the Python stack
// captured per op with with_stack.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <unistd.h>

#include "ember/profiler/profiler.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

// "file.py(12): fn" for each Python frame of the calling thread, innermost first; empty when the
// thread does not hold the GIL (the autograd engine runs without it).
std::vector<std::string> python_stack() {
  std::vector<std::string> out;
  if (!Py_IsInitialized() || !PyGILState_Check()) return out;
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f && out.size() < 128) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* fn = PyUnicode_AsUTF8(code->co_name);
    out.push_back(std::string(file ? file : "?") + "(" + std::to_string(PyFrame_GetLineNumber(f)) + "): " +
                  (fn ? fn : "?"));
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  return out;
}

nb::list int_lists(const std::vector<std::vector<int64_t>>& v) {
  nb::list l;
  for (auto& s : v) {
    nb::list inner;
    for (int64_t x : s) inner.append(x);
    l.append(inner);
  }
  return l;
}

nb::list str_list(const std::vector<std::string>& v) {
  nb::list l;
  for (auto& s : v) l.append(nb::str(s.data(), s.size()));
  return l;
}

// A record_function range held by a Python object between __enter__ and __exit__.
struct PyRange {
  profiler::RecordScope scope;
};

}  // namespace

void bind_profiler(nb::module_& m) {
  profiler::set_stack_hook(&python_stack);
  // returns why the device's activity will not be recorded ("" when it will, or was not asked for)
  m.def("_profiler_start", [](bool record_shapes, bool profile_memory, bool with_stack, bool trace_device) {
    profiler::Config c;
    c.record_shapes = record_shapes;
    c.profile_memory = profile_memory;
    c.with_stack = with_stack;
    c.trace_device = trace_device;
    profiler::start(c);
    return profiler::device_warning();
  }, nb::arg("record_shapes"), nb::arg("profile_memory"), nb::arg("with_stack"), nb::arg("trace_device") = false);
  m.def("_profiler_clear", &profiler::clear);
  m.def("_profiler_enabled", &profiler::is_running);
  m.def("_profiler_thread_id", &profiler::current_thread_id);
  // {"start_ns", "stop_ns", "epoch_offset_ns", "pid", "threads": [(tid, events, memory)]};
  // event: (name, kind, start_ns, end_ns, seq_nr, parent, alloc_bytes, freed_bytes, shapes, dtypes, stack,
  //         correlation)
  // memory: (ts_ns, bytes, total_allocated, addr, owner)
  // "device_events": (name, kind, start_ns, end_ns, device, stream, correlation, bytes, grid, block)
  m.def("_profiler_stop", []() {
    profiler::Result r;
    {
      nb::gil_scoped_release nogil;
      r = profiler::stop();
    }
    nb::list threads;
    for (auto& t : r.threads) {
      nb::list evs, mems;
      for (auto& e : t.events)
        evs.append(nb::make_tuple(e.name, int(e.kind), e.start_ns, e.end_ns, e.seq_nr, e.parent, e.alloc_bytes,
                                  e.freed_bytes, int_lists(e.shapes), str_list(e.dtypes), str_list(e.stack),
                                  e.correlation));
      for (auto& mm : t.memory) mems.append(nb::make_tuple(mm.ts_ns, mm.bytes, mm.total_allocated, mm.addr, mm.owner));
      threads.append(nb::make_tuple(t.tid, evs, mems));
    }
    nb::list device_events;
    for (auto& de : r.device_events)
      device_events.append(nb::make_tuple(de.name, int(de.kind), de.start_ns, de.end_ns, de.device, de.stream,
                                          de.correlation, de.bytes,
                                          nb::make_tuple(de.grid[0], de.grid[1], de.grid[2]),
                                          nb::make_tuple(de.block[0], de.block[1], de.block[2])));
    nb::dict d;
    d["device_events"] = device_events;
    d["device_warning"] = r.device_warning;
    d["start_ns"] = r.start_ns;
    d["stop_ns"] = r.stop_ns;
    d["epoch_offset_ns"] = r.epoch_offset_ns;
    d["pid"] = int64_t(::getpid());
    d["threads"] = threads;
    return d;
  });
  nb::class_<PyRange>(m, "_RecordFunction")
      .def(nb::init<>())
      .def("enter", [](PyRange& r, const std::string& name) {
        if (profiler::enabled() && !r.scope.active()) r.scope.begin(name, profiler::EventKind::UserRange);
      })
      .def("exit", [](PyRange& r) {
        if (r.scope.active()) r.scope.end();
      });
}

}  // namespace ember::py
