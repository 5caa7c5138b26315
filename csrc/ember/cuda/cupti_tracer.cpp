// The profiler's device tracer on CUPTI (ProfilerActivity.CUDA): kernels, copies and fills as the GPU
// ran them, each tied to the host range that launched it. CUPTI is loaded with dlopen at the first
// profile that asks for the GPU (it ships with the toolkit and in NVIDIA's cuda-cupti wheel), so CPU
// profiles and CPU-only users never map it.
//
// How the two sides meet: each profiler range pushes its correlation id as CUPTI's external
// correlation id for its thread; CUPTI then reports, for every runtime/driver call made inside the
// range, the pair (its own correlation id, ours), and every kernel carries its launching call's id.
// CUPTI takes its timestamps from the profiler's steady clock (a timestamp callback), so device and
// host events share one time axis. CUPTI's callbacks are process-wide: Ember's profiler and torch's
// (Kineto) must not record the GPU in the same process at the same time.
#include "ember/profiler/profiler.h"

#if defined(EMBER_HAVE_CUDA) && defined(EMBER_HAVE_CUPTI)

#include <cupti.h>
#include <cxxabi.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/core/dynamic_library.h"
#include "ember/cuda/cuda.h"

namespace ember::cuda {
namespace {

struct Cupti {
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityPushExternalCorrelationId) push = nullptr;
  decltype(&cuptiActivityPopExternalCorrelationId) pop = nullptr;
  decltype(&cuptiActivityRegisterTimestampCallback) register_timestamp = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  std::string error;
};

Cupti load_cupti() {
  Cupti c;
  const std::string soname = "libcupti.so." + std::to_string(CUDA_VERSION / 1000);
  std::vector<std::string> candidates = library_candidates(soname, EMBER_CUPTI_LIBRARY_DIR);
  if (const char* home = std::getenv("CUDA_HOME")) {
    candidates.push_back(std::string(home) + "/extras/CUPTI/lib64/" + soname);
    candidates.push_back(std::string(home) + "/lib64/" + soname);
  }
  candidates.push_back("/usr/local/cuda/extras/CUPTI/lib64/" + soname);
  candidates.push_back("/usr/local/cuda/lib64/" + soname);
  DynamicLibrary lib(candidates);
  lib.resolve(c.register_callbacks, "cuptiActivityRegisterCallbacks");
  lib.resolve(c.enable, "cuptiActivityEnable");
  lib.resolve(c.disable, "cuptiActivityDisable");
  lib.resolve(c.flush_all, "cuptiActivityFlushAll");
  lib.resolve(c.next_record, "cuptiActivityGetNextRecord");
  lib.resolve(c.push, "cuptiActivityPushExternalCorrelationId");
  lib.resolve(c.pop, "cuptiActivityPopExternalCorrelationId");
  lib.resolve(c.register_timestamp, "cuptiActivityRegisterTimestampCallback");
  lib.resolve(c.result_string, "cuptiGetResultString");
  c.error = lib.error();
  return c;
}

const Cupti& cupti() {
  static const Cupti c = load_cupti();
  return c;
}

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
    // external correlation records come with API records: the runtime's, and the driver's for the
    // launches of libraries that call it directly
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
constexpr size_t kBufferBytes = 4 << 20;

std::string demangle(const char* name) {
  if (name == nullptr) return "?";
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  std::string s = status == 0 && out != nullptr ? out : name;
  std::free(out);
  return s;
}

// the names PyTorch's traces give copies and fills: "Memcpy HtoD (Pinned -> Device)", "Memset (Device)"
const char* memory_kind_name(unsigned kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unknown";
  }
}

std::string copy_name(uint8_t kind, uint8_t src, uint8_t dst) {
  const char* what = "Memcpy";
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: what = "Memcpy HtoD"; break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: what = "Memcpy DtoH"; break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: what = "Memcpy DtoD"; break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: what = "Memcpy HtoH"; break;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: what = "Memcpy PtoP"; break;
    default: break;
  }
  return std::string(what) + " (" + memory_kind_name(src) + " -> " + memory_kind_name(dst) + ")";
}

uint64_t CUPTIAPI steady_timestamp() { return uint64_t(profiler::now_ns()); }

class CuptiTracer final : public profiler::DeviceTracer {
 public:
  static CuptiTracer& instance();

  bool start(std::string* why) override {
    if (!is_available()) {
      *why = "ProfilerActivity.CUDA was asked for, but there is no GPU: device activity is not recorded";
      return false;
    }
    const Cupti& c = cupti();
    if (!c.error.empty()) {
      *why = "CUPTI could not be loaded (" + c.error + "): GPU kernels are not recorded (install the toolkit's "
             "CUPTI or NVIDIA's wheel: pip install nvidia-cuda-cupti)";
      return false;
    }
    lazy_init();  // a context to trace
    {
      std::lock_guard<std::mutex> g(mu_);  // never held across a CUPTI call: its thread may be in parse()
      records_.clear();
      external_.clear();
    }
    if (!registered_) {
      // the clock first, so that every record is on the profiler's steady clock
      if (!ok(c.register_timestamp(&steady_timestamp), why)) return false;
      if (!ok(c.register_callbacks(&buffer_requested, &buffer_completed), why)) return false;
      registered_ = true;
    }
    for (CUpti_ActivityKind k : kKinds) {
      if (!ok(c.enable(k), why)) {
        for (CUpti_ActivityKind d : kKinds) c.disable(d);
        return false;
      }
    }
    return true;
  }

  void push_correlation(uint64_t id) override { cupti().push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }
  void pop_correlation() override {
    uint64_t last = 0;
    cupti().pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }

  std::vector<profiler::DeviceEvent> stop() override {
    const Cupti& c = cupti();
    for (CUpti_ActivityKind k : kKinds) c.disable(k);  // nothing new from here on
    // the work queued inside the profile is part of it: wait for it on every device that holds memory
    // (one that never allocated ran no kernel; waiting there would create its context)
    for (int d = 0; d < device_count(); ++d) {
      try {
        if (memory_stats(d).reserved_bytes[0].current > 0 || d == current_device()) synchronize(d);
      } catch (const std::exception&) {  // a faulted device: its records end up incomplete and are dropped
      }
    }
    c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> g(mu_);
    std::vector<profiler::DeviceEvent> out;
    out.reserve(records_.size());
    for (Record& r : records_) {
      auto it = external_.find(r.cupti_correlation);
      r.event.correlation = it == external_.end() ? 0 : it->second;
      out.push_back(std::move(r.event));
    }
    records_.clear();
    external_.clear();
    return out;
  }

 private:
  struct Record {
    profiler::DeviceEvent event;
    uint32_t cupti_correlation;
  };

  bool ok(CUptiResult r, std::string* why) {
    if (r == CUPTI_SUCCESS) return true;
    const char* msg = nullptr;
    cupti().result_string(r, &msg);
    *why = std::string("CUPTI could not trace the GPU (") + (msg ? msg : "error " + std::to_string(int(r))) +
           "): device activity is not recorded";
    return false;
  }

  static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
    *size = *buffer != nullptr ? kBufferBytes : 0;
    *max_records = 0;  // as many as fit
  }

  static void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    instance().parse(buffer, valid);
    std::free(buffer);
  }

  void parse(uint8_t* buffer, size_t valid) {
    std::lock_guard<std::mutex> g(mu_);
    CUpti_Activity* rec = nullptr;
    while (valid > 0 && cupti().next_record(buffer, valid, &rec) == CUPTI_SUCCESS) {
      switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
          auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
          if (!complete(k->start, k->end)) break;
          Record r{{}, k->correlationId};
          r.event.name = demangle(k->name);
          r.event.kind = profiler::DeviceEventKind::Kernel;
          fill(r.event, k->start, k->end, k->deviceId, k->streamId);
          r.event.grid[0] = k->gridX, r.event.grid[1] = k->gridY, r.event.grid[2] = k->gridZ;
          r.event.block[0] = k->blockX, r.event.block[1] = k->blockY, r.event.block[2] = k->blockZ;
          records_.push_back(std::move(r));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
          auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
          if (!complete(m->start, m->end)) break;
          Record r{{}, m->correlationId};
          r.event.name = copy_name(m->copyKind, m->srcKind, m->dstKind);
          r.event.kind = profiler::DeviceEventKind::Memcpy;
          r.event.bytes = int64_t(m->bytes);
          fill(r.event, m->start, m->end, m->deviceId, m->streamId);
          records_.push_back(std::move(r));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
          if (!complete(m->start, m->end)) break;
          Record r{{}, m->correlationId};
          r.event.name = std::string("Memset (") + memory_kind_name(m->memoryKind) + ")";
          r.event.kind = profiler::DeviceEventKind::Memset;
          r.event.bytes = int64_t(m->bytes);
          fill(r.event, m->start, m->end, m->deviceId, m->streamId);
          records_.push_back(std::move(r));
          break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
          auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
          if (x->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) external_[x->correlationId] = x->externalId;
          break;
        }
        default:  // API records: only their external correlations are wanted
          break;
      }
    }
  }

  // a forced flush hands over work that has not finished: its times are unknown (0)
  static bool complete(uint64_t start, uint64_t end) { return start != 0 && end >= start; }

  static void fill(profiler::DeviceEvent& e, uint64_t start, uint64_t end, uint32_t device, uint32_t stream) {
    e.start_ns = int64_t(start);
    e.end_ns = int64_t(end);
    e.device = int32_t(device);
    e.stream = int64_t(stream);
  }

  std::mutex mu_;  // records_ and external_: CUPTI hands buffers back on its own thread
  bool registered_ = false;  // start/stop run under the profiler's session lock
  std::vector<Record> records_;
  std::unordered_map<uint32_t, uint64_t> external_;  // CUPTI correlation id -> the profiler range's id
};

CuptiTracer& CuptiTracer::instance() {
  static CuptiTracer* t = new CuptiTracer();  // never destroyed: CUPTI may call back during exit
  return *t;
}

// installed when libember loads; it does nothing (loads nothing) until a profile asks for the GPU
const bool g_installed = [] {
  profiler::set_device_tracer(&CuptiTracer::instance());
  return true;
}();

}  // namespace
}  // namespace ember::cuda

#endif  // EMBER_HAVE_CUDA && EMBER_HAVE_CUPTI
