// The profiler's device tracer on CUPTI (ProfilerActivity.CUDA): kernels, copies and fills as the GPU
// ran them, each tied to the host range that launched it. CUPTI is loaded with dlopen at the first
// profile that asks for the GPU (it ships with the toolkit and in NVIDIA's cuda-cupti wheel), so CPU
// profiles and CPU-only users never map it.
//
// How the two sides meet: each profiler range pushes its correlation id as CUPTI's external
// correlation id for its thread; CUPTI then reports, for every runtime/driver call made inside the
// range, the pair (its own correlation id, ours), and every kernel carries its launching call's id.
// Timestamps are CUPTI's clock, moved onto the profiler's steady clock by the offset read at start.
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
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  std::string error;
};

Cupti load_cupti() {
  Cupti c;
  const std::string soname = "libcupti.so." + std::to_string(CUDA_VERSION / 1000);
  std::vector<std::string> candidates;
#ifdef EMBER_CUPTI_LIBRARY_DIR
  candidates.push_back(std::string(EMBER_CUPTI_LIBRARY_DIR) + "/" + soname);  // beside the headers CMake found
#endif
  candidates.push_back(soname);  // LD_LIBRARY_PATH, the loader's cache, or one already loaded (torch's)
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
  lib.resolve(c.timestamp, "cuptiGetTimestamp");
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

const char* copy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "Memcpy PtoP";
    default: return "Memcpy";
  }
}

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
    std::lock_guard<std::mutex> g(mu_);
    records_.clear();
    external_.clear();
    if (!registered_) {
      if (!ok(c.register_callbacks(&buffer_requested, &buffer_completed), why)) return false;
      registered_ = true;
    }
    for (CUpti_ActivityKind k : kKinds) {
      if (!ok(c.enable(k), why)) {
        for (CUpti_ActivityKind d : kKinds) c.disable(d);
        return false;
      }
    }
    offset_ns_ = clock_offset();
    return true;
  }

  void push_correlation(uint64_t id) override { cupti().push(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id); }
  void pop_correlation() override {
    uint64_t last = 0;
    cupti().pop(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }

  std::vector<profiler::DeviceEvent> stop() override {
    const Cupti& c = cupti();
    for (int d = 0; d < device_count(); ++d) synchronize(d);  // the queued work is part of the profile
    c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    for (CUpti_ActivityKind k : kKinds) c.disable(k);
    c.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> g(mu_);
    std::vector<profiler::DeviceEvent> out;
    out.reserve(records_.size());
    for (Record& r : records_) {
      auto it = external_.find(r.cupti_correlation);
      r.event.correlation = it == external_.end() ? 0 : it->second;
      r.event.start_ns += offset_ns_;
      r.event.end_ns += offset_ns_;
      out.push_back(std::move(r.event));
    }
    records_.clear();
    external_.clear();
    return out;
  }

 private:
  struct Record {
    profiler::DeviceEvent event;  // times still on CUPTI's clock
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

  // steady-clock time minus CUPTI's time, from the closest of a few paired readings
  int64_t clock_offset() {
    int64_t best = 0, best_gap = INT64_MAX;
    for (int i = 0; i < 5; ++i) {
      int64_t before = profiler::now_ns();
      uint64_t ts = 0;
      cupti().timestamp(&ts);
      int64_t after = profiler::now_ns();
      if (after - before < best_gap) {
        best_gap = after - before;
        best = before + (after - before) / 2 - int64_t(ts);
      }
    }
    return best;
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
          Record r{{}, m->correlationId};
          r.event.name = copy_kind_name(m->copyKind);
          r.event.kind = profiler::DeviceEventKind::Memcpy;
          r.event.bytes = int64_t(m->bytes);
          fill(r.event, m->start, m->end, m->deviceId, m->streamId);
          records_.push_back(std::move(r));
          break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
          auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
          Record r{{}, m->correlationId};
          r.event.name = "Memset";
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

  static void fill(profiler::DeviceEvent& e, uint64_t start, uint64_t end, uint32_t device, uint32_t stream) {
    e.start_ns = int64_t(start);
    e.end_ns = int64_t(end);
    e.device = int32_t(device);
    e.stream = int64_t(stream);
  }

  std::mutex mu_;  // CUPTI hands buffers back on its own thread
  bool registered_ = false;
  int64_t offset_ns_ = 0;
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
