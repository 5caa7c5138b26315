// Python side of the CUDA backend (ember/cuda/cuda.h) for ember.cuda: devices, the caching
// allocator's statistics in PyTorch's memory_stats() keys, streams as (handle, device index) pairs,
// and events (core/stream.h's Event, for any device type). In a build without CUDA the same
// functions exist and raise PyTorch's CPU-build AssertionError (or answer "no GPU").
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <optional>

#include "ember/core/stream.h"
#include "ember/cuda/cuda.h"
#include "python/arg_parser.h"
#include "python/bindings.h"
#include "python/exceptions.h"

namespace nb = nanobind;

namespace ember::py {

namespace {

Stream cuda_stream(int64_t id, int index) { return {Device(DeviceType::CUDA, int8_t(index)), id}; }
nb::tuple stream_tuple(const Stream& s) { return nb::make_tuple(s.id, int(s.device.index)); }

// PyTorch's flat memory_stats() keys: "<stat>.<all|small_pool|large_pool>.<current|peak|allocated|freed>"
void put(nb::dict& d, const char* name, const StatArray& a) {
  static const char* pools[3] = {"all", "small_pool", "large_pool"};
  for (int p = 0; p < 3; p++) {
    const std::string base = std::string(name) + "." + pools[p] + ".";
    d[(base + "current").c_str()] = a[size_t(p)].current;
    d[(base + "peak").c_str()] = a[size_t(p)].peak;
    d[(base + "allocated").c_str()] = a[size_t(p)].allocated;
    d[(base + "freed").c_str()] = a[size_t(p)].freed;
  }
}

nb::dict stats_dict(const DeviceStats& s) {
  nb::dict d;
  put(d, "allocation", s.allocation);
  put(d, "segment", s.segment);
  put(d, "active", s.active);
  put(d, "inactive_split", s.inactive_split);
  put(d, "allocated_bytes", s.allocated_bytes);
  put(d, "reserved_bytes", s.reserved_bytes);
  put(d, "active_bytes", s.active_bytes);
  put(d, "inactive_split_bytes", s.inactive_split_bytes);
  put(d, "requested_bytes", s.requested_bytes);
  d["num_alloc_retries"] = s.num_alloc_retries;
  d["num_ooms"] = s.num_ooms;
  d["num_sync_all_streams"] = s.num_sync_all_streams;
  d["num_device_alloc"] = s.num_device_alloc;
  d["num_device_free"] = s.num_device_free;
  d["max_split_size"] = -1;  // no max_split_size_mb setting: PyTorch reports -1 then
  return d;
}

nb::list snapshot_list(const std::vector<SegmentInfo>& segs) {
  nb::list out;
  for (const SegmentInfo& s : segs) {
    nb::dict d;
    d["address"] = uint64_t(s.address);
    d["total_size"] = uint64_t(s.total_size);
    d["stream"] = s.stream;
    d["segment_type"] = s.is_large ? "large" : "small";
    d["allocated_size"] = uint64_t(s.allocated_size);
    d["active_size"] = uint64_t(s.active_size);
    d["requested_size"] = uint64_t(s.requested_size);
    nb::list blocks;
    for (const BlockInfo& b : s.blocks) {
      nb::dict bd;
      bd["size"] = uint64_t(b.size);
      bd["requested_size"] = uint64_t(b.requested_size);
      bd["state"] = b.allocated ? "active_allocated" : (b.active ? "active_pending_free" : "inactive");
      blocks.append(bd);
    }
    d["blocks"] = blocks;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_cuda(nb::module_& m) {
  // generic device plumbing for ember's Python layer (any registered device type)
  m.def("_check_device", [](nb::handle d) { unpack_device(d.ptr()).check_available(); });
  m.def("_to_device", [](nb::handle t, nb::handle d, nb::handle dtype, bool copy, bool non_blocking) {
    std::optional<ScalarType> dt;
    if (!dtype.is_none()) dt = unpack_dtype(dtype.ptr());
    return nb::steal(wrap(unpack(t.ptr()).to(unpack_device(d.ptr()), dt, copy, non_blocking)));
  }, nb::arg("t"), nb::arg("device"), nb::arg("dtype").none(), nb::arg("copy"), nb::arg("non_blocking") = false);
  m.def("_pin_memory", [](nb::handle t) { return nb::steal(wrap(cuda::pin_memory(unpack(t.ptr())))); });
  m.def("_is_pinned", [](nb::handle t) { return cuda::is_pinned(unpack(t.ptr())); });
  m.def("_cuda_host_empty_cache", &cuda::host_empty_cache);
  m.def("_cuda_host_memory_stats", [] {  // nested, as torch._C._cuda_hostMemoryStats
    const cuda::HostStats s = cuda::host_memory_stats();
    nb::dict d;
    auto stat = [&](const char* name, const AllocatorStat& a) {
      nb::dict e;
      e["current"] = a.current;
      e["peak"] = a.peak;
      e["allocated"] = a.allocated;
      e["freed"] = a.freed;
      d[name] = e;
    };
    auto duration = [&](const char* name, const cuda::DurationStat& t) {
      nb::dict e;
      e["total"] = t.total;
      e["max"] = t.max;
      e["min"] = t.min;
      e["count"] = t.count;
      e["avg"] = t.count ? t.total / t.count : 0;
      d[name] = e;
    };
    stat("allocations", s.allocations);
    stat("allocated_bytes", s.allocated_bytes);
    stat("active_requests", s.active_requests);
    stat("active_bytes", s.active_bytes);
    d["num_host_alloc"] = s.num_host_alloc;
    d["num_host_free"] = s.num_host_free;
    duration("host_alloc_time", s.host_alloc_time);
    duration("host_free_time", s.host_free_time);
    return d;
  });
  m.def("_cuda_reset_peak_host_memory_stats", &cuda::reset_peak_host_memory_stats);
  m.def("_cuda_reset_accumulated_host_memory_stats", &cuda::reset_accumulated_host_memory_stats);
  m.def("_cudart_error_string", &cuda::error_string);
  m.def("_cudart_profiler_start", &cuda::profiler_start);
  m.def("_cudart_profiler_stop", &cuda::profiler_stop);
  m.def("_cudart_host_register", [](uintptr_t ptr, size_t nbytes, unsigned flags) {
    return cuda::host_register(reinterpret_cast<void*>(ptr), nbytes, flags);
  });
  m.def("_cudart_host_unregister", [](uintptr_t ptr) { return cuda::host_unregister(reinterpret_cast<void*>(ptr)); });
  m.def("_set_out_of_memory_type", [](nb::handle type) { set_out_of_memory_type(type.ptr()); });
  m.def("_cuda_is_compiled", &cuda::is_compiled);
  m.def("_cuda_compiled_version", &cuda::compiled_version);
  m.def("_cuda_set_sync_debug_mode", &cuda::set_sync_debug_mode);
  m.def("_cuda_get_sync_debug_mode", &cuda::sync_debug_mode);
  m.def("_nvtx_range_push", [](const std::string& msg) { return cuda::nvtx_range_push(msg.c_str()); });
  m.def("_nvtx_range_pop", &cuda::nvtx_range_pop);
  m.def("_nvtx_range_start", [](const std::string& msg) { return cuda::nvtx_range_start(msg.c_str()); });
  m.def("_nvtx_range_end", &cuda::nvtx_range_end);
  m.def("_nvtx_mark", [](const std::string& msg) { cuda::nvtx_mark(msg.c_str()); });
  m.def("_cuda_can_device_access_peer", &cuda::can_device_access_peer);
  m.def("_cuda_caching_allocator_alloc", [](size_t nbytes, int device) {
    return reinterpret_cast<uintptr_t>(cuda::allocate_raw(nbytes, device));
  });
  m.def("_cuda_caching_allocator_delete", [](uintptr_t ptr) { cuda::free_raw(reinterpret_cast<void*>(ptr)); });
  m.def("_cuda_has_cublas", &cuda::has_cublas);
  m.def("_cuda_set_matmul_flags", [](bool tf32, bool fp16_reduced, bool bf16_reduced) {
    cuda::set_matmul_flags(cuda::MatmulFlags{tf32, fp16_reduced, bf16_reduced});
  });
  m.def("_cuda_matmul_flags", [] {
    const cuda::MatmulFlags f = cuda::matmul_flags();
    return nb::make_tuple(f.allow_tf32, f.allow_fp16_reduced_precision_reduction,
                          f.allow_bf16_reduced_precision_reduction);
  });
  m.def("_cudnn_set_flags", [](bool enabled, bool benchmark, bool deterministic, bool allow_tf32) {
    cuda::set_cudnn_flags(cuda::CudnnFlags{enabled, benchmark, deterministic, allow_tf32});
  });
  m.def("_cudnn_flags", [] {
    const cuda::CudnnFlags f = cuda::cudnn_flags();
    return nb::make_tuple(f.enabled, f.benchmark, f.deterministic, f.allow_tf32);
  });
  m.def("_cudnn_version", &cuda::cudnn_version);
  m.def("_cuda_arch_list", &cuda::arch_list);
  m.def("_cuda_is_available", &cuda::is_available);
  m.def("_cuda_device_count", &cuda::device_count);
  m.def("_cuda_is_initialized", &cuda::is_initialized);
  m.def("_cuda_init", [] { cuda::lazy_init(); });
  m.def("_cuda_current_device", &cuda::current_device);
  m.def("_cuda_set_device", &cuda::set_device);
  m.def("_cuda_get_device_properties", [](int i) {
    cuda::DeviceProperties p = cuda::get_device_properties(i);
    nb::dict d;
    d["name"] = p.name;
    d["major"] = p.major;
    d["minor"] = p.minor;
    d["total_memory"] = p.total_memory;
    d["multi_processor_count"] = p.multi_processor_count;
    d["warp_size"] = p.warp_size;
    d["L2_cache_size"] = p.l2_cache_size;
    d["uuid"] = p.uuid;
    return d;
  });
  m.def("_cuda_mem_get_info", &cuda::mem_get_info);
  m.def("_cuda_synchronize", &cuda::synchronize);
  m.def("_cuda_memory_stats", [](int i) { return stats_dict(cuda::memory_stats(i)); });
  m.def("_cuda_reset_peak_memory_stats", &cuda::reset_peak_memory_stats);
  m.def("_cuda_reset_accumulated_memory_stats", &cuda::reset_accumulated_memory_stats);
  m.def("_cuda_memory_snapshot", [](int i) { return snapshot_list(cuda::memory_snapshot(i)); });
  m.def("_cuda_empty_cache", &cuda::empty_cache);
  m.def("_cuda_set_memory_fraction", &cuda::set_per_process_memory_fraction);
  m.def("_cuda_get_memory_fraction", &cuda::get_per_process_memory_fraction);
  m.def("_cuda_default_generator", [](int i) {
    EMBER_CHECK(i >= 0 && i <= 127, "CUDA error: invalid device ordinal (device ", i, ")");
    return nb::cast(&default_generator(Device(DeviceType::CUDA, int8_t(i))), nb::rv_policy::reference);
  });
  m.def("_manual_seed_cuda_all", [](int64_t seed) { manual_seed_cuda_all(uint64_t(seed)); });
  m.def("_cuda_record_stream", [](nb::handle t, int64_t id, int index) { cuda::record_stream(unpack(t.ptr()), cuda_stream(id, index)); });

  // streams as (cudaStream_t handle, device index)
  m.def("_cuda_current_stream", [](int i) { return stream_tuple(cuda::current_stream(i)); });
  m.def("_cuda_default_stream", [](int i) { return stream_tuple(cuda::default_stream(i)); });
  m.def("_cuda_new_stream", [](int i, int priority) { return stream_tuple(cuda::new_stream(i, priority)); });
  m.def("_cuda_set_stream", [](int64_t id, int index) { cuda::set_stream(cuda_stream(id, index)); });
  m.def("_cuda_stream_query", [](int64_t id, int index) {
    return stream_backend(DeviceType::CUDA).query_stream(cuda_stream(id, index));
  });
  m.def("_cuda_stream_synchronize", [](int64_t id, int index) {
    stream_backend(DeviceType::CUDA).synchronize_stream(cuda_stream(id, index));
  });
  m.def("_cuda_stream_priority_range", &cuda::stream_priority_range);

  // an event of any device type: (device type name, index, enable_timing)
  nb::class_<Event>(m, "_Event")
      .def("__init__", [](Event* self, const std::string& type, int index, bool timing) {
        new (self) Event(Device(Device(type).type, int8_t(index)), timing);
      })
      .def("record", [](Event& e, int64_t id, int index) { e.record(Stream{Device(e.device().type, int8_t(index)), id}); })
      .def("wait", [](Event& e, int64_t id, int index) { e.wait(Stream{Device(e.device().type, int8_t(index)), id}); })
      .def("query", &Event::query)
      .def("synchronize", &Event::synchronize)
      .def("elapsed_time", &Event::elapsed_time);
}

}  // namespace ember::py
