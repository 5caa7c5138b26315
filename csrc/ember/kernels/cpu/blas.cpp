// The CPU's matrix products: float32 on oneDNN's sgemm where it wins, OpenBLAS otherwise (float64;
// half arrives as float), bfloat16 on oneDNN's matmul (onednn/matmul.cpp), integers on a plain loop. Strided operands whose layout BLAS
// can read (row- or column-major with any leading dimension) are passed without copies.
#include "ember/kernels/cpu/blas.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <string_view>
#ifdef EMBER_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/kernels/blas.h"
#include "ember/kernels/cpu/onednn/matmul.h"
#include "ember/parallel/parallel.h"

namespace ember::cpu {

namespace {

// How BLAS should read a 2-D operand: transposed or not, and its leading dimension.
bool blas_layout(const Tensor& m, CBLAS_TRANSPOSE* trans, int64_t* ld) {
  int64_t rows = m.sizes()[0], cols = m.sizes()[1];
  int64_t s0 = m.strides()[0], s1 = m.strides()[1];
  if ((s1 == 1 || cols == 1) && (s0 >= std::max<int64_t>(cols, 1) || rows == 1)) {
    *trans = CblasNoTrans;
    *ld = std::max<int64_t>(rows == 1 ? cols : s0, std::max<int64_t>(cols, 1));
    return true;
  }
  if ((s0 == 1 || rows == 1) && (s1 >= std::max<int64_t>(rows, 1) || cols == 1)) {
    *trans = CblasTrans;
    *ld = std::max<int64_t>(cols == 1 ? rows : s1, std::max<int64_t>(rows, 1));
    return true;
  }
  return false;
}

template <class T>
void naive_mm(const Tensor& a, const Tensor& b, const Tensor& c) {
  int64_t M = a.sizes()[0], K = a.sizes()[1], N = b.sizes()[1];
  const T* ap = static_cast<const T*>(a.data_ptr());
  const T* bp = static_cast<const T*>(b.data_ptr());
  T* cp = static_cast<T*>(c.data_ptr());
  int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      T acc = 0;
      for (int64_t k = 0; k < K; k++)  // integer products wrap as PyTorch's (no signed-overflow UB)
        acc = wrapping_add(acc, wrapping_mul(ap[i * as0 + k * as1], bp[k * bs0 + j * bs1]));
      cp[i * N + j] = acc;
    }
}

void gemm_cpu(const Tensor& c, const Tensor& a_in, const Tensor& b_in, double alpha, double beta) {
  ScalarType dt = a_in.dtype();
  int64_t M = a_in.sizes()[0], K = a_in.sizes()[1], N = b_in.sizes()[1];
  Tensor a = a_in, b = b_in;
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda, ldb;
  if (!blas_layout(a, &ta, &lda)) { a = a.contiguous(); blas_layout(a, &ta, &lda); }
  if (!blas_layout(b, &tb, &ldb)) { b = b.contiguous(); blas_layout(b, &tb, &ldb); }
#ifdef EMBER_HAVE_ONEDNN
  // float32 goes to oneDNN's sgemm, about twice OpenBLAS's speed on this class of machine (AVX-512
  // kernels; benchmarks/gemm_peak.cpp), except where B is transposed and K dwarfs M and N, where
  // OpenBLAS wins. EMBER_GEMM=openblas forces OpenBLAS (for comparisons).
  static const bool force_openblas = [] {
    const char* e = std::getenv("EMBER_GEMM");
    return e && std::string_view(e) == "openblas";
  }();
  if (dt == kFloat && !force_openblas && !(tb == CblasTrans && K > 2 * std::max(M, N))) {
    dnnl_sgemm(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N', M, N, K, float(alpha),
               static_cast<const float*>(a.data_ptr()), lda, static_cast<const float*>(b.data_ptr()), ldb, float(beta),
               static_cast<float*>(c.data_ptr()), N);
    return;
  }
#endif
  if (dt == kFloat) {
    cblas_sgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), float(alpha), static_cast<const float*>(a.data_ptr()),
                int(lda), static_cast<const float*>(b.data_ptr()), int(ldb), float(beta),
                static_cast<float*>(c.data_ptr()), int(N));
  } else if (dt == kComplexFloat) {
    const std::complex<float> al(float(alpha), 0.f), be(float(beta), 0.f);
    cblas_cgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), &al, a.data_ptr(), int(lda), b.data_ptr(), int(ldb),
                &be, c.data_ptr(), int(N));
  } else if (dt == kComplexDouble) {
    const std::complex<double> al(alpha, 0.0), be(beta, 0.0);
    cblas_zgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), &al, a.data_ptr(), int(lda), b.data_ptr(), int(ldb),
                &be, c.data_ptr(), int(N));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), alpha, static_cast<const double*>(a.data_ptr()),
                int(lda), static_cast<const double*>(b.data_ptr()), int(ldb), beta,
                static_cast<double*>(c.data_ptr()), int(N));
  }
}

// bfloat16 (autocast's matmuls): oneDNN's bfloat16 matmul, else through float32 (the same values:
// bfloat16 converts to float exactly, and both accumulate in float32 and round once)
void mm_bf16(const Tensor& c, const Tensor& a, const Tensor& b) {
  if (onednn::matmul_bf16(c, a, b)) return;
  Tensor c32 = native::empty_like(c, TensorOptions(kFloat), std::nullopt);
  gemm_cpu(c32, a.to(kFloat), b.to(kFloat), 1.0, 0.0);
  c.copy_(c32);
}

void mm_cpu(const Tensor& c, const Tensor& a, const Tensor& b) {
  int64_t M = a.sizes()[0], K = a.sizes()[1], N = b.sizes()[1];
  if (M == 0 || N == 0) return;
  if (K == 0) { c.zero_(); return; }
  ScalarType dt = a.dtype();
  switch (dt) {
    case kFloat:
    case kDouble:
    case kComplexFloat:
    case kComplexDouble: gemm_cpu(c, a, b, 1.0, 0.0); return;
    case kBFloat16: mm_bf16(c, a, b); return;
    case kLong: naive_mm<int64_t>(a, b, c); return;
    case kInt: naive_mm<int32_t>(a, b, c); return;
    case kShort: naive_mm<int16_t>(a, b, c); return;
    case kChar: naive_mm<int8_t>(a, b, c); return;
    case kByte: naive_mm<uint8_t>(a, b, c); return;
    default: EMBER_FAIL(NotImplemented, "\"addmm_impl_cpu_\" not implemented for '", dt, "'");
  }
}

// One GEMM per matrix, the batch split across threads with BLAS single-threaded inside each.
void bmm_cpu(const Tensor& c, const Tensor& a, const Tensor& b) {
  const int64_t nbatch = a.sizes()[0];
  const int threads = get_num_threads();
  if (threads > 1 && nbatch > 1) {
    // select() makes views, which share their base's version counter, created lazily on first use:
    // create it here, once, not in several threads at once (a race that leaked one; found by LSan)
    for (const Tensor* t : {&c, &a, &b}) (void)t->impl()->version_counter();
    set_blas_threads(1);
    try {
      parallel_for(0, nbatch, 1, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; i++) mm_cpu(native::select(c, 0, i), native::select(a, 0, i), native::select(b, 0, i));
      });
    } catch (...) {
      set_blas_threads(threads);
      throw;
    }
    set_blas_threads(threads);
  } else {
    for (int64_t i = 0; i < nbatch; i++) mm_cpu(native::select(c, 0, i), native::select(a, 0, i), native::select(b, 0, i));
  }
}

}  // namespace

void gemm_nn(ScalarType dt, int64_t M, int64_t N, int64_t K, const void* a, int64_t lda, const void* b, int64_t ldb,
             double beta, void* c, int64_t ldc) {
  if (M == 0 || N == 0 || K == 0) return;  // callers pass K > 0 (an empty sum would need beta * c)
#ifdef EMBER_HAVE_ONEDNN
  if (dt == kFloat) {
    dnnl_sgemm('N', 'N', M, N, K, 1.f, static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
               float(beta), static_cast<float*>(c), ldc);
    return;
  }
#endif
  if (dt == kFloat)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.f, static_cast<const float*>(a),
                int(lda), static_cast<const float*>(b), int(ldb), float(beta), static_cast<float*>(c), int(ldc));
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(M), int(N), int(K), 1.0, static_cast<const double*>(a),
                int(lda), static_cast<const double*>(b), int(ldb), beta, static_cast<double*>(c), int(ldc));
}

}  // namespace ember::cpu

EMBER_REGISTER_KERNEL(gemm_stub, CPU, &ember::cpu::gemm_cpu);
EMBER_REGISTER_KERNEL(mm_stub, CPU, &ember::cpu::mm_cpu);
EMBER_REGISTER_KERNEL(bmm_stub, CPU, &ember::cpu::bmm_cpu);
