// The CUDA entries of the matrix-product stubs (kernels/blas.h) on cuBLAS. cuBLAS is loaded with
// dlopen on the first product, not linked: libcublasLt alone is ~550 MB, and mapping it would cost
// every `import ember` ~80 ms on machines that never multiply on a GPU. Its headers come from
// NVIDIA's pip wheel (nvidia-cublas) or the toolkit; CMake defines EMBER_HAVE_CUBLAS when it finds them.
#include "ember/cuda/cuda.h"

#ifndef EMBER_HAVE_CUBLAS

#include "ember/cuda/backend.h"

namespace ember::cuda {
bool has_cublas() { return false; }  // the CUDA matrix products raise NotImplementedError (no stub entry)
void gemm_rows(ScalarType, int64_t, int64_t, int64_t, double, const void*, int64_t, const void*, int64_t, double,
               void*, int64_t) {
  EMBER_FAIL(NotImplemented, "this Ember was built without cuBLAS's headers (pip install nvidia-cublas): no GEMM on "
                             "the GPU for the RNN steps");
}
}  // namespace ember::cuda

#else

#include <cublas_api.h>
#include <cuComplex.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/dynamic_library.h"
#include "ember/core/tensor.h"
#include "ember/cuda/backend.h"
#include "ember/generated/ops.h"
#include "ember/kernels/blas.h"

namespace ember::cuda {

bool has_cublas() { return true; }

namespace {

// The few entry points Ember calls, resolved once.
struct Cublas {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetWorkspace_v2) set_workspace = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  decltype(&cublasGemmStridedBatchedEx_64) gemm = nullptr;
  std::string error;  // why loading failed (empty when it worked)
};

Cublas load_cublas() {
  Cublas c;
  DynamicLibrary lib(library_candidates("libcublas.so." EMBER_STRINGIFY(CUBLAS_VER_MAJOR), EMBER_CUBLAS_LIBRARY_DIR));
  lib.resolve(c.create, "cublasCreate_v2");
  lib.resolve(c.set_stream, "cublasSetStream_v2");
  lib.resolve(c.set_math_mode, "cublasSetMathMode");
  lib.resolve(c.set_workspace, "cublasSetWorkspace_v2");
  lib.resolve(c.status_string, "cublasGetStatusString");
  lib.resolve(c.gemm, "cublasGemmStridedBatchedEx_64");
  c.error = lib.error();
  return c;
}

const Cublas& cublas() {
  static const Cublas c = load_cublas();
  if (EMBER_UNLIKELY(!c.error.empty()))
    EMBER_FAIL(Runtime, "cuBLAS could not be loaded for a matrix product on the GPU (", c.error,
               "); install NVIDIA's wheel: pip install nvidia-cublas");
  return c;
}

void check_status(cublasStatus_t st, const char* what) {
  if (EMBER_UNLIKELY(st != CUBLAS_STATUS_SUCCESS))
    EMBER_FAIL(Runtime, "CUDA error: ", cublas().status_string(st), " when calling `", what, "`");
}

// One handle per (thread, device), as cuBLAS asks (a handle is not for concurrent use). A thread's
// handles go back to a pool when it ends and are never destroyed: destroying them at process exit
// could run after the driver has shut down.
std::mutex g_pool_mutex;
std::vector<std::vector<cublasHandle_t>>& pool() {
  static auto* p = new std::vector<std::vector<cublasHandle_t>>();  // never destroyed, see above
  return *p;
}

struct ThreadHandles {
  std::vector<cublasHandle_t> by_device;
  ~ThreadHandles() {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    for (size_t d = 0; d < by_device.size(); d++) {
      if (!by_device[d]) continue;
      if (pool().size() <= d) pool().resize(d + 1);
      pool()[d].push_back(by_device[d]);
    }
  }
};

// cuBLAS's workspace, one per (handle, stream) as PyTorch keeps them: a handle's default workspace
// would be shared by the kernels it queues on two streams, which may run at once. 32 MiB, cuBLAS's
// recommendation for Hopper; never freed (a few per thread and stream in use).
constexpr size_t kWorkspaceBytes = size_t(32) << 20;
void* workspace_for(cublasHandle_t h, cudaStream_t s, int device) {
  thread_local std::map<std::pair<cublasHandle_t, cudaStream_t>, void*> spaces;
  void*& w = spaces[{h, s}];
  if (!w) w = allocate_raw(kWorkspaceBytes, device);
  return w;
}

// The calling thread's handle for `device` (the current device), bound to `stream` and its workspace.
cublasHandle_t handle_for(int device, cudaStream_t stream) {
  thread_local ThreadHandles mine;
  if (mine.by_device.size() <= size_t(device)) mine.by_device.resize(size_t(device) + 1, nullptr);
  cublasHandle_t& h = mine.by_device[size_t(device)];
  if (!h) {
    {
      std::lock_guard<std::mutex> lock(g_pool_mutex);
      if (pool().size() > size_t(device) && !pool()[size_t(device)].empty()) {
        h = pool()[size_t(device)].back();
        pool()[size_t(device)].pop_back();
      }
    }
    if (!h) check_status(cublas().create(&h), "cublasCreate(handle)");
  }
  check_status(cublas().set_stream(h, stream), "cublasSetStream(handle, stream)");  // resets the workspace
  check_status(cublas().set_workspace(h, workspace_for(h, stream, device), kWorkspaceBytes),
               "cublasSetWorkspace(handle, workspace, size)");
  return h;
}

// A matrix operand as cuBLAS (column-major) sees it. Ember's row-major [rows, cols] matrix X is the
// column-major [cols, rows] matrix X^T: stored with unit column stride it needs no transpose (op N,
// ld = row stride); stored with unit row stride (a transposed view) it is X itself in column-major
// form (op T, ld = column stride); any other strides take a contiguous copy.
struct Operand {
  Tensor t;  // what the pointer points into (the input, or its copy)
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
  int64_t batch_stride = 0;
};

Operand operand(const Tensor& x) {
  const int64_t nd = x.dim();
  const int64_t rows = x.sizes()[nd - 2], cols = x.sizes()[nd - 1];
  int64_t rs = x.strides()[nd - 2], cs = x.strides()[nd - 1];
  if (rows == 1) rs = std::max<int64_t>(cols, 1);  // a size-1 dim's stride is arbitrary
  if (cols == 1) cs = 1;
  Operand o;
  if (cs == 1 && rs >= std::max<int64_t>(cols, 1)) {
    o.t = x;
    o.op = CUBLAS_OP_N;
    o.ld = rs;
  } else if (rs == 1 && cs >= std::max<int64_t>(rows, 1)) {
    o.t = x;
    o.op = CUBLAS_OP_T;
    o.ld = cs;
  } else {
    o.t = x.contiguous();
    o.op = CUBLAS_OP_N;
    o.ld = std::max<int64_t>(cols, 1);
  }
  o.batch_stride = nd == 3 ? o.t.strides()[0] : 0;
  return o;
}

struct Types {
  cudaDataType data;
  cublasComputeType_t compute;
  cublasMath_t math;
};

Types types_for(ScalarType dt, const char* op) {
  const MatmulFlags f = matmul_flags();
  const cublasMath_t tf32 = f.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
  switch (dt) {
    case kFloat:
      return {CUDA_R_32F, f.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, tf32};
    case kDouble:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUBLAS_DEFAULT_MATH};
    case kHalf:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F,
              f.allow_fp16_reduced_precision_reduction ? CUBLAS_DEFAULT_MATH
                                                       : CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION};
    case kBFloat16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F,
              f.allow_bf16_reduced_precision_reduction ? CUBLAS_DEFAULT_MATH
                                                       : CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION};
    case kComplexFloat:
      return {CUDA_C_32F, f.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, tf32};
    case kComplexDouble:
      return {CUDA_C_64F, CUBLAS_COMPUTE_64F, CUBLAS_DEFAULT_MATH};
    default:  // cuBLAS has no general integer GEMM; PyTorch's CUDA build refuses them too
      EMBER_FAIL(NotImplemented, "\"", op, "_cuda\" not implemented for '", dt, "'");
  }
}

// The scale factors in the compute type's precision (cuBLAS reads them from host memory).
struct Scale {
  alignas(16) unsigned char bytes[16] = {};
};
Scale scale_of(ScalarType dt, double v) {
  Scale s;
  if (dt == kDouble) {
    *reinterpret_cast<double*>(s.bytes) = v;
  } else if (dt == kComplexDouble) {
    *reinterpret_cast<cuDoubleComplex*>(s.bytes) = make_cuDoubleComplex(v, 0.0);
  } else if (dt == kComplexFloat) {
    *reinterpret_cast<cuComplex*>(s.bytes) = make_cuComplex(float(v), 0.0f);
  } else {
    *reinterpret_cast<float*>(s.bytes) = float(v);
  }
  return s;
}

// One cuBLAS call for row-major c [batch of M x N] (ldc, batch stride sc) = alpha * a @ b + beta * c on the
// current stream of `device`: row-major C = A B is column-major C^T = B^T A^T, so cuBLAS's first operand is
// b (op opb, ldb, stride sb), its second a (op opa, lda, stride sa).
void run_gemm(ScalarType dt, const char* op, int device, int64_t M, int64_t N, int64_t K, double alpha,
              cublasOperation_t opb, const void* b, int64_t ldb, int64_t sb, cublasOperation_t opa, const void* a,
              int64_t lda, int64_t sa, double beta, void* c, int64_t ldc, int64_t sc, int64_t batch) {
  const Types ty = types_for(dt, op);
  const Scale al = scale_of(dt, alpha), be = scale_of(dt, beta);
  const Cublas& lib = cublas();
  cublasHandle_t h = handle_for(device, current_cuda_stream(device));
  check_status(lib.set_math_mode(h, ty.math), "cublasSetMathMode(handle, mode)");
  check_status(lib.gemm(h, opb, opa, N, M, K, al.bytes, b, ty.data, ldb, sb, a, ty.data, lda, sa, be.bytes, c,
                        ty.data, ldc, sc, batch, ty.compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, &alpha, a, lda, stridea, b, ldb, strideb, "
               "&beta, c, ldc, stridec, num_batches)");
}

// c [batch, M, N] (or [M, N]), contiguous = alpha * a @ b + beta * c, a [.., M, K], b [.., K, N].
void gemm_batched(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta, const char* op) {
  const int64_t nd = c.dim();
  const int64_t M = c.sizes()[nd - 2], N = c.sizes()[nd - 1], K = a.sizes()[a.dim() - 1];
  const Device d = c.device();
  DeviceGuard guard(d.index);
  const Operand ob = operand(b), oa = operand(a);
  run_gemm(c.dtype(), op, d.index, M, N, K, alpha, ob.op, ob.t.data_ptr(), ob.ld, ob.batch_stride, oa.op,
           oa.t.data_ptr(), oa.ld, oa.batch_stride, beta, c.data_ptr(), N, nd == 3 ? M * N : 0,
           nd == 3 ? c.sizes()[0] : 1);
}

void gemm_cuda(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta) {
  gemm_batched(c, a, b, alpha, beta, "addmm");
}
void mm_cuda(const Tensor& c, const Tensor& a, const Tensor& b) { gemm_batched(c, a, b, 1.0, 0.0, "addmm"); }
void bmm_cuda(const Tensor& c, const Tensor& a, const Tensor& b) { gemm_batched(c, a, b, 1.0, 0.0, "bmm"); }

}  // namespace

void gemm_rows(ScalarType dt, int64_t M, int64_t N, int64_t K, double alpha, const void* a, int64_t lda,
               const void* b, int64_t ldb, double beta, void* c, int64_t ldc) {
  if (M == 0 || N == 0) return;
  run_gemm(dt, "lstm", current_device(), M, N, K, alpha, CUBLAS_OP_N, b, ldb, 0, CUBLAS_OP_N, a, lda, 0, beta, c,
           ldc, 0, 1);
}

}  // namespace ember::cuda

EMBER_REGISTER_KERNEL(gemm_stub, CUDA, &::ember::cuda::gemm_cuda);
EMBER_REGISTER_KERNEL(mm_stub, CUDA, &::ember::cuda::mm_cuda);
EMBER_REGISTER_KERNEL(bmm_stub, CUDA, &::ember::cuda::bmm_cuda);

#endif  // EMBER_HAVE_CUBLAS
