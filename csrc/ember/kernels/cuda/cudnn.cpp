// Convolutions on cuDNN's convolution API: tensor, filter and convolution descriptors, an algorithm
// from cuDNN's heuristics (or, with ember.backends.cudnn.benchmark, the fastest cuDNN measures, cached
// per shape), a workspace from the caching allocator, everything queued on the current stream.
// cuDNN is loaded with dlopen at the first convolution (its libraries are ~1 GB; CPU-only users and
// GPU users who never convolve never map them); its headers come from NVIDIA's wheel
// (nvidia-cudnn-cu13), CMake defines EMBER_HAVE_CUDNN when it finds them.
//
// A transposed convolution is cuDNN's backward-data of the plain one with the same weight, so
// each of the three cuDNN calls serves one pass of one kind and another of the other kind.
#include "ember/kernels/cuda/cudnn.h"

#include "ember/cuda/cuda.h"

#ifndef EMBER_HAVE_CUDNN

namespace ember::cuda {
int cudnn_version() { return 0; }
bool cudnn_convolution(Tensor&, const Tensor&, const Tensor&, const Tensor&, const ConvParams&, IntArrayRef) {
  return false;
}
bool cudnn_convolution_backward(ConvGrads&, const Tensor&, const Tensor&, const Tensor&, bool, const ConvParams&,
                                ConvMask) {
  return false;
}
}  // namespace ember::cuda

#else

#include <cudnn.h>

#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/deterministic.h"
#include "ember/core/dynamic_library.h"
#include "ember/cuda/backend.h"
#include "ember/generated/ops.h"

namespace ember::cuda {
namespace {

struct Cudnn {
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnCreateTensorDescriptor) create_tensor = nullptr;
  decltype(&cudnnSetTensorNdDescriptor) set_tensor = nullptr;
  decltype(&cudnnDestroyTensorDescriptor) destroy_tensor = nullptr;
  decltype(&cudnnCreateFilterDescriptor) create_filter = nullptr;
  decltype(&cudnnSetFilterNdDescriptor) set_filter = nullptr;
  decltype(&cudnnDestroyFilterDescriptor) destroy_filter = nullptr;
  decltype(&cudnnCreateConvolutionDescriptor) create_conv = nullptr;
  decltype(&cudnnSetConvolutionNdDescriptor) set_conv = nullptr;
  decltype(&cudnnSetConvolutionGroupCount) set_groups = nullptr;
  decltype(&cudnnSetConvolutionMathType) set_math = nullptr;
  decltype(&cudnnDestroyConvolutionDescriptor) destroy_conv = nullptr;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) fwd_heuristic = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) bwd_data_heuristic = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) bwd_filter_heuristic = nullptr;
  decltype(&cudnnFindConvolutionForwardAlgorithmEx) fwd_find = nullptr;
  decltype(&cudnnFindConvolutionBackwardDataAlgorithmEx) bwd_data_find = nullptr;
  decltype(&cudnnFindConvolutionBackwardFilterAlgorithmEx) bwd_filter_find = nullptr;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) fwd_workspace = nullptr;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) bwd_data_workspace = nullptr;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize) bwd_filter_workspace = nullptr;
  decltype(&cudnnConvolutionForward) forward = nullptr;
  decltype(&cudnnConvolutionBackwardData) backward_data = nullptr;
  decltype(&cudnnConvolutionBackwardFilter) backward_filter = nullptr;
  std::string error;
};

Cudnn load_cudnn() {
  Cudnn c;
  DynamicLibrary lib(library_candidates("libcudnn.so." EMBER_STRINGIFY(CUDNN_MAJOR), EMBER_CUDNN_LIBRARY_DIR));
  lib.resolve(c.get_version, "cudnnGetVersion");
  lib.resolve(c.error_string, "cudnnGetErrorString");
  lib.resolve(c.create, "cudnnCreate");
  lib.resolve(c.set_stream, "cudnnSetStream");
  lib.resolve(c.create_tensor, "cudnnCreateTensorDescriptor");
  lib.resolve(c.set_tensor, "cudnnSetTensorNdDescriptor");
  lib.resolve(c.destroy_tensor, "cudnnDestroyTensorDescriptor");
  lib.resolve(c.create_filter, "cudnnCreateFilterDescriptor");
  lib.resolve(c.set_filter, "cudnnSetFilterNdDescriptor");
  lib.resolve(c.destroy_filter, "cudnnDestroyFilterDescriptor");
  lib.resolve(c.create_conv, "cudnnCreateConvolutionDescriptor");
  lib.resolve(c.set_conv, "cudnnSetConvolutionNdDescriptor");
  lib.resolve(c.set_groups, "cudnnSetConvolutionGroupCount");
  lib.resolve(c.set_math, "cudnnSetConvolutionMathType");
  lib.resolve(c.destroy_conv, "cudnnDestroyConvolutionDescriptor");
  lib.resolve(c.fwd_heuristic, "cudnnGetConvolutionForwardAlgorithm_v7");
  lib.resolve(c.bwd_data_heuristic, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  lib.resolve(c.bwd_filter_heuristic, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  lib.resolve(c.fwd_find, "cudnnFindConvolutionForwardAlgorithmEx");
  lib.resolve(c.bwd_data_find, "cudnnFindConvolutionBackwardDataAlgorithmEx");
  lib.resolve(c.bwd_filter_find, "cudnnFindConvolutionBackwardFilterAlgorithmEx");
  lib.resolve(c.fwd_workspace, "cudnnGetConvolutionForwardWorkspaceSize");
  lib.resolve(c.bwd_data_workspace, "cudnnGetConvolutionBackwardDataWorkspaceSize");
  lib.resolve(c.bwd_filter_workspace, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  lib.resolve(c.forward, "cudnnConvolutionForward");
  lib.resolve(c.backward_data, "cudnnConvolutionBackwardData");
  lib.resolve(c.backward_filter, "cudnnConvolutionBackwardFilter");
  c.error = lib.error();
  return c;
}

// null when cuDNN cannot be loaded here: the convolutions then run as im2col + cuBLAS
const Cudnn* cudnn() {
  static const Cudnn c = load_cudnn();
  return c.error.empty() ? &c : nullptr;
}

void check(cudnnStatus_t st, const char* what) {
  if (EMBER_UNLIKELY(st != CUDNN_STATUS_SUCCESS))
    EMBER_FAIL(Runtime, "cuDNN error: ", cudnn()->error_string(st), " when calling `", what, "`");
}

// cuDNN cannot run this convolution (no algorithm, or one it reports unsupported for these sizes or this
// GPU): the caller falls back to im2col + cuBLAS.
struct Unsupported {};

void check_selection(cudnnStatus_t st, const char* what) {
  if (st == CUDNN_STATUS_NOT_SUPPORTED || st == CUDNN_STATUS_BAD_PARAM) throw Unsupported{};
  check(st, what);
}

// One handle per (thread, device), bound to the current stream at each call; never destroyed (as the
// cuBLAS handles: destroying them at exit could run after the driver has gone).
cudnnHandle_t handle_for(int device, cudaStream_t stream) {
  thread_local std::vector<cudnnHandle_t> mine;
  if (mine.size() <= size_t(device)) mine.resize(size_t(device) + 1, nullptr);
  cudnnHandle_t& h = mine[size_t(device)];
  if (!h) check(cudnn()->create(&h), "cudnnCreate");
  check(cudnn()->set_stream(h, stream), "cudnnSetStream");
  return h;
}

bool data_type(ScalarType t, cudnnDataType_t* out) {
  switch (t) {
    case kFloat: *out = CUDNN_DATA_FLOAT; return true;
    case kDouble: *out = CUDNN_DATA_DOUBLE; return true;
    case kHalf: *out = CUDNN_DATA_HALF; return true;
    case kBFloat16: *out = CUDNN_DATA_BFLOAT16; return true;
    default: return false;
  }
}

// The descriptors of one convolution, in cuDNN's terms: x [N, C, *in] -> y [N, K, *out] with a filter
// [K, C / groups, *k]; 1-d convolutions get a leading spatial dim of 1 (cuDNN wants 4-d at least).
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  std::vector<int> key;  // everything the algorithm choice depends on
  ~Descriptors() {
    if (x) cudnn()->destroy_tensor(x);
    if (y) cudnn()->destroy_tensor(y);
    if (w) cudnn()->destroy_filter(w);
    if (conv) cudnn()->destroy_conv(conv);
  }
};

std::vector<int> dims_of(IntArrayRef sizes, bool widen) {
  std::vector<int> d;
  for (size_t i = 0; i < sizes.size(); i++) {
    if (widen && i == 2) d.push_back(1);
    d.push_back(int(sizes[i]));
  }
  return d;
}

std::vector<int> contiguous_strides(const std::vector<int>& dims) {
  std::vector<int> s(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; i--) s[i - 1] = s[i] * dims[i];
  return s;
}

bool fits_int(const Tensor& t) {
  if (t.numel() > INT_MAX) return false;
  for (int64_t s : t.sizes())
    if (s > INT_MAX || s == 0) return false;
  return true;
}

// x, y: the plain convolution's input and output (for a transposed one, its output and input)
void describe(Descriptors& d, const Tensor& x, const Tensor& weight, const Tensor& y, const ConvParams& p,
              cudnnDataType_t dt) {
  const Cudnn& c = *cudnn();
  const bool widen = p.ns == 1;
  std::vector<int> xd = dims_of(x.sizes(), widen), yd = dims_of(y.sizes(), widen), wd = dims_of(weight.sizes(), widen);
  check(c.create_tensor(&d.x), "cudnnCreateTensorDescriptor");
  check_selection(c.set_tensor(d.x, dt, int(xd.size()), xd.data(), contiguous_strides(xd).data()),
                  "cudnnSetTensorNdDescriptor");
  check(c.create_tensor(&d.y), "cudnnCreateTensorDescriptor");
  check_selection(c.set_tensor(d.y, dt, int(yd.size()), yd.data(), contiguous_strides(yd).data()),
                  "cudnnSetTensorNdDescriptor");
  check(c.create_filter(&d.w), "cudnnCreateFilterDescriptor");
  check_selection(c.set_filter(d.w, dt, CUDNN_TENSOR_NCHW, int(wd.size()), wd.data()), "cudnnSetFilterNdDescriptor");
  std::vector<int> pad, stride, dil;
  if (widen) pad.push_back(0), stride.push_back(1), dil.push_back(1);
  for (int64_t i = 0; i < p.ns; i++) {
    pad.push_back(int(p.p[size_t(i)]));
    stride.push_back(int(p.s[size_t(i)]));
    dil.push_back(int(p.d[size_t(i)]));
  }
  check(c.create_conv(&d.conv), "cudnnCreateConvolutionDescriptor");
  const cudnnDataType_t compute = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  check_selection(c.set_conv(d.conv, int(pad.size()), pad.data(), stride.data(), dil.data(), CUDNN_CROSS_CORRELATION,
                             compute), "cudnnSetConvolutionNdDescriptor");
  check_selection(c.set_groups(d.conv, int(p.groups)), "cudnnSetConvolutionGroupCount");
  // float32: TF32 tensor cores only with allow_tf32 (PyTorch's default: on); 16-bit floats: tensor cores
  const CudnnFlags f = cudnn_flags();
  const cudnnMathType_t math = dt == CUDNN_DATA_FLOAT ? (f.allow_tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH)
                               : dt == CUDNN_DATA_DOUBLE ? CUDNN_DEFAULT_MATH
                                                          : CUDNN_TENSOR_OP_MATH;
  check(c.set_math(d.conv, math), "cudnnSetConvolutionMathType");
  d.key = xd;
  d.key.insert(d.key.end(), wd.begin(), wd.end());
  d.key.insert(d.key.end(), yd.begin(), yd.end());
  d.key.insert(d.key.end(), pad.begin(), pad.end());
  d.key.insert(d.key.end(), stride.begin(), stride.end());
  d.key.insert(d.key.end(), dil.begin(), dil.end());
  d.key.push_back(int(p.groups));
  d.key.push_back(int(dt));
  d.key.push_back(int(math));
}

enum class Pass { Forward = 0, BackwardData = 1, BackwardFilter = 2 };

// One candidate of cuDNN's ranking: the algorithm with the math type it was ranked under.
struct Choice {
  int algo = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  bool deterministic = true;
};

// Rankings (heuristics' order, or measured with benchmark) cached per (device, pass, descriptors, flags).
std::mutex g_cache_mutex;
std::map<std::vector<int>, std::vector<Choice>>& cache() {
  static auto* m = new std::map<std::vector<int>, std::vector<Choice>>();
  return *m;
}

// The usable entries of a ranking: successful, and never TF32 for float32 without allow_tf32.
template <class Perf>
std::vector<Choice> usable_choices(const Perf* perf, int n, bool no_tensor_ops) {
  std::vector<Choice> out;
  for (int i = 0; i < n; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    if (no_tensor_ops && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
    out.push_back(Choice{int(perf[i].algo), no_tensor_ops ? CUDNN_FMA_MATH : perf[i].mathType,
                         perf[i].determinism == CUDNN_DETERMINISTIC});
  }
  return out;
}

std::vector<Choice> rank(Pass pass, cudnnHandle_t h, const Descriptors& d, const Tensor& x, const Tensor& w,
                         const Tensor& y, bool benchmark, bool no_tensor_ops, int device) {
  const Cudnn& c = *cudnn();
  constexpr int kMax = 16;
  int n = 0;
  if (benchmark) {  // cuDNN times every algorithm on these buffers (outputs only are written)
    size_t ws_bytes = size_t(256) << 20;
    Tensor ws;
    try {
      ws = empty_tensor({int64_t(ws_bytes)}, kByte, Device(DeviceType::CUDA, int8_t(device)));
    } catch (const OutOfMemoryError&) {  // a full GPU: time the algorithms that need no workspace
      ws_bytes = 0;
    }
    void* wsp = ws_bytes ? ws.data_ptr() : nullptr;
    if (pass == Pass::Forward) {
      cudnnConvolutionFwdAlgoPerf_t perf[kMax];
      check_selection(c.fwd_find(h, d.x, x.data_ptr(), d.w, w.data_ptr(), d.conv, d.y, y.data_ptr(), kMax, &n, perf,
                                 wsp, ws_bytes), "cudnnFindConvolutionForwardAlgorithmEx");
      return usable_choices(perf, n, no_tensor_ops);
    }
    if (pass == Pass::BackwardData) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
      check_selection(c.bwd_data_find(h, d.w, w.data_ptr(), d.y, y.data_ptr(), d.conv, d.x, x.data_ptr(), kMax, &n,
                                      perf, wsp, ws_bytes), "cudnnFindConvolutionBackwardDataAlgorithmEx");
      return usable_choices(perf, n, no_tensor_ops);
    }
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
    check_selection(c.bwd_filter_find(h, d.x, x.data_ptr(), d.y, y.data_ptr(), d.conv, d.w, w.data_ptr(), kMax, &n,
                                      perf, wsp, ws_bytes), "cudnnFindConvolutionBackwardFilterAlgorithmEx");
    return usable_choices(perf, n, no_tensor_ops);
  }
  if (pass == Pass::Forward) {
    cudnnConvolutionFwdAlgoPerf_t perf[kMax];
    check_selection(c.fwd_heuristic(h, d.x, d.w, d.conv, d.y, kMax, &n, perf), "cudnnGetConvolutionForwardAlgorithm_v7");
    return usable_choices(perf, n, no_tensor_ops);
  }
  if (pass == Pass::BackwardData) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
    check_selection(c.bwd_data_heuristic(h, d.w, d.y, d.conv, d.x, kMax, &n, perf),
                    "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    return usable_choices(perf, n, no_tensor_ops);
  }
  cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
  check_selection(c.bwd_filter_heuristic(h, d.x, d.y, d.conv, d.w, kMax, &n, perf),
                  "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
  return usable_choices(perf, n, no_tensor_ops);
}

size_t workspace_of(Pass pass, cudnnHandle_t h, const Descriptors& d, const Choice& ch) {
  const Cudnn& c = *cudnn();
  size_t bytes = 0;
  if (pass == Pass::Forward)
    check_selection(c.fwd_workspace(h, d.x, d.w, d.conv, d.y, cudnnConvolutionFwdAlgo_t(ch.algo), &bytes),
                    "cudnnGetConvolutionForwardWorkspaceSize");
  else if (pass == Pass::BackwardData)
    check_selection(c.bwd_data_workspace(h, d.w, d.y, d.conv, d.x, cudnnConvolutionBwdDataAlgo_t(ch.algo), &bytes),
                    "cudnnGetConvolutionBackwardDataWorkspaceSize");
  else
    check_selection(c.bwd_filter_workspace(h, d.x, d.y, d.conv, d.w, cudnnConvolutionBwdFilterAlgo_t(ch.algo), &bytes),
                    "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  return bytes;
}

// Runs cuDNN's `pass` for the descriptors d on the buffers (x, w, y as the plain convolution names
// them): the first algorithm of the ranking that is deterministic when that is asked for (else the
// alert: PyTorch's error, or with warn_only its warning and the first one) and whose workspace the
// caching allocator can give (a GPU short of memory moves down the ranking, as PyTorch does).
void run(Pass pass, cudnnHandle_t h, const Descriptors& d, const Tensor& x, const Tensor& w, const Tensor& y,
         int device) {
  const Cudnn& c = *cudnn();
  const CudnnFlags f = cudnn_flags();
  const bool deterministic = f.deterministic || deterministic_algorithms();
  const bool no_tensor_ops = x.dtype() == kFloat && !f.allow_tf32;
  std::vector<int> key = d.key;
  key.insert(key.end(), {device, int(pass), f.benchmark ? 1 : 0});
  std::vector<Choice> ranking;
  bool cached = false;
  {
    std::lock_guard<std::mutex> g(g_cache_mutex);
    auto it = cache().find(key);
    if (it != cache().end()) ranking = it->second, cached = true;
  }
  if (!cached) {
    ranking = rank(pass, h, d, x, w, y, f.benchmark, no_tensor_ops, device);
    std::lock_guard<std::mutex> g(g_cache_mutex);
    cache()[key] = ranking;
  }
  std::vector<const Choice*> order;
  for (const Choice& ch : ranking)
    if (!deterministic || ch.deterministic) order.push_back(&ch);
  if (order.empty() && !ranking.empty()) {
    if (deterministic)
      alert_not_deterministic(pass == Pass::BackwardFilter ? "cudnn_convolution_backward_weight" : "cudnn_convolution");
    for (const Choice& ch : ranking) order.push_back(&ch);  // warn_only: go on with the ranking
  }
  if (order.empty()) throw Unsupported{};
  const double one_d = 1.0, zero_d = 0.0;
  const float one_f = 1.f, zero_f = 0.f;
  const bool dbl = x.dtype() == kDouble;
  const void* one = dbl ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = dbl ? static_cast<const void*>(&zero_d) : &zero_f;
  for (size_t i = 0; i < order.size(); i++) {
    const Choice& ch = *order[i];
    check(c.set_math(d.conv, ch.math), "cudnnSetConvolutionMathType");  // the math type it was ranked under
    const size_t bytes = workspace_of(pass, h, d, ch);
    Tensor ws;  // from the caching allocator on the current stream: free for reuse in stream order
    if (bytes > 0) {
      try {
        ws = empty_tensor({int64_t(bytes)}, kByte, Device(DeviceType::CUDA, int8_t(device)));
      } catch (const OutOfMemoryError&) {
        if (i + 1 < order.size()) continue;  // the next algorithm may need less
        throw;
      }
    }
    void* wsp = bytes > 0 ? ws.data_ptr() : nullptr;
    if (pass == Pass::Forward)
      check(c.forward(h, one, d.x, x.data_ptr(), d.w, w.data_ptr(), d.conv, cudnnConvolutionFwdAlgo_t(ch.algo), wsp,
                      bytes, zero, d.y, y.data_ptr()), "cudnnConvolutionForward");
    else if (pass == Pass::BackwardData)
      check(c.backward_data(h, one, d.w, w.data_ptr(), d.y, y.data_ptr(), d.conv,
                            cudnnConvolutionBwdDataAlgo_t(ch.algo), wsp, bytes, zero, d.x, x.data_ptr()),
            "cudnnConvolutionBackwardData");
    else
      check(c.backward_filter(h, one, d.x, x.data_ptr(), d.y, y.data_ptr(), d.conv,
                              cudnnConvolutionBwdFilterAlgo_t(ch.algo), wsp, bytes, zero, d.w, w.data_ptr()),
            "cudnnConvolutionBackwardFilter");
    return;
  }
}

// Whether cuDNN takes this call: loaded, switched on, a float dtype, int-sized non-empty tensors.
bool usable(const Tensor& input, const Tensor& weight, const ConvParams& p, cudnnDataType_t* dt) {
  if (!cudnn_flags().enabled || cudnn() == nullptr) return false;
  if (!data_type(input.dtype(), dt) || weight.dtype() != input.dtype()) return false;
  for (int64_t i = 0; i < p.ns; i++)
    if (p.s[size_t(i)] > INT_MAX || p.p[size_t(i)] > INT_MAX || p.d[size_t(i)] > INT_MAX) return false;
  return p.groups <= INT_MAX && fits_int(input) && fits_int(weight);
}

Tensor bias_shape(const Tensor& bias, int64_t dims) {
  std::vector<int64_t> shape(size_t(dims), 1);
  shape[1] = bias.numel();
  return bias.reshape(shape);
}

}  // namespace

int cudnn_version() {
  if (!is_available() || cudnn() == nullptr) return 0;
  return int(cudnn()->get_version());
}

bool cudnn_convolution(Tensor& out, const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
                       IntArrayRef out_spatial) {
  cudnnDataType_t dt;
  if (!usable(input, weight, p, &dt)) return false;
  const Device dev = input.device();
  DeviceGuard guard(dev.index);
  const int64_t cout = p.transposed ? weight.sizes()[1] * p.groups : weight.sizes()[0];
  std::vector<int64_t> shape{input.sizes()[0], cout};
  shape.insert(shape.end(), out_spatial.begin(), out_spatial.end());
  int64_t numel = 1;
  for (int64_t s : shape) {
    if (s <= 0 || s > INT_MAX) return false;
    numel *= s;
    if (numel > INT_MAX) return false;
  }
  Tensor y = empty_tensor(shape, input.dtype(), dev);
  Tensor x = input.contiguous(), w = weight.contiguous();
  try {
    Descriptors d;
    cudnnHandle_t h = handle_for(dev.index, current_cuda_stream(dev.index));
    if (!p.transposed) {
      describe(d, x, w, y, p, dt);
      run(Pass::Forward, h, d, x, w, y, dev.index);
    } else {  // y = the plain convolution's input gradient for the "gradient" x
      describe(d, y, w, x, p, dt);
      run(Pass::BackwardData, h, d, y, w, x, dev.index);
    }
  } catch (const Unsupported&) {
    return false;
  }
  if (bias.defined()) y.add_(bias_shape(bias, y.dim()));
  out = y;
  return true;
}

bool cudnn_convolution_backward(ConvGrads& out, const Tensor& grad, const Tensor& input, const Tensor& weight,
                                bool has_bias, const ConvParams& p, ConvMask mask) {
  cudnnDataType_t dt;
  if (!usable(input, weight, p, &dt) || grad.dtype() != input.dtype() || !fits_int(grad)) return false;
  const Device dev = input.device();
  DeviceGuard guard(dev.index);
  Tensor x = input.contiguous(), w = weight.contiguous(), g = grad.contiguous();
  Tensor gi, gw, gb;
  try {
  Descriptors d;
  cudnnHandle_t h = handle_for(dev.index, current_cuda_stream(dev.index));
  if (!p.transposed) {
    describe(d, x, w, g, p, dt);
    if (mask[0]) {
      gi = empty_tensor(x.sizes(), x.dtype(), dev);
      run(Pass::BackwardData, h, d, gi, w, g, dev.index);
    }
    if (mask[1]) {
      gw = empty_tensor(w.sizes(), w.dtype(), dev);
      run(Pass::BackwardFilter, h, d, x, gw, g, dev.index);
    }
  } else {  // the transposed convolution's output is the plain one's input: roles swap
    describe(d, g, w, x, p, dt);
    if (mask[0]) {
      gi = empty_tensor(x.sizes(), x.dtype(), dev);
      run(Pass::Forward, h, d, g, w, gi, dev.index);
    }
    if (mask[1]) {
      gw = empty_tensor(w.sizes(), w.dtype(), dev);
      run(Pass::BackwardFilter, h, d, g, gw, x, dev.index);
    }
  }
  } catch (const Unsupported&) {
    return false;
  }
  if (has_bias && mask[2]) {
    std::vector<int64_t> dims{0};
    for (int64_t i = 2; i < g.dim(); i++) dims.push_back(i);
    gb = ember::sum(g, IntArrayRef(dims), false);
  }
  out = ConvGrads{gi, gw, gb};
  return true;
}

}  // namespace ember::cuda

#endif  // EMBER_HAVE_CUDNN
