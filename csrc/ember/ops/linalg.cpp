// matmul on oneDNN's sgemm (float32) and OpenBLAS (float64; half/bfloat16 through float), with every case of
// torch.matmul: dot, mv, mm and broadcast batched products. Strided operands whose layout BLAS
// can read (row- or column-major with any leading dimension) are passed without copies.
#include <cblas.h>

#include <cstdlib>
#include <string_view>
#ifdef EMBER_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/ops/gemm.h"
#include "ember/parallel/parallel.h"

namespace ember::native {

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

}  // namespace

// c (contiguous [M, N]) = alpha * a [M, K] @ b [K, N] + beta * c on BLAS, for float/double.
bool gemm_into(const Tensor& a_in, const Tensor& b_in, const Tensor& c, double alpha, double beta) {
  ScalarType dt = a_in.dtype();
  if (dt != kFloat && dt != kDouble) return false;
  int64_t M = a_in.sizes()[0], K = a_in.sizes()[1], N = b_in.sizes()[1];
  if (M == 0 || N == 0) return true;
  Tensor a = a_in, b = b_in;
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda, ldb;
  if (K == 0) {  // an empty sum: only the beta * c term
    if (beta == 0) c.zero_();
    else c.mul_(beta);
    return true;
  }
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
    return true;
  }
#endif
  if (dt == kFloat)
    cblas_sgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), float(alpha), static_cast<const float*>(a.data_ptr()),
                int(lda), static_cast<const float*>(b.data_ptr()), int(ldb), float(beta),
                static_cast<float*>(c.data_ptr()), int(N));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, int(M), int(N), int(K), alpha, static_cast<const double*>(a.data_ptr()),
                int(lda), static_cast<const double*>(b.data_ptr()), int(ldb), beta,
                static_cast<double*>(c.data_ptr()), int(N));
  return true;
}

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

namespace {

// c (contiguous [M, N]) = a [M, K] @ b [K, N]; dtypes equal and already checked.
void mm_into(const Tensor& a_in, const Tensor& b_in, const Tensor& c) {
  int64_t M = a_in.sizes()[0], K = a_in.sizes()[1], N = b_in.sizes()[1];
  if (M == 0 || N == 0) return;
  if (K == 0) { c.zero_(); return; }
  ScalarType dt = a_in.dtype();
  if (gemm_into(a_in, b_in, c, 1.0, 0.0)) return;
  switch (dt) {
    case kLong: naive_mm<int64_t>(a_in, b_in, c); return;
    case kInt: naive_mm<int32_t>(a_in, b_in, c); return;
    case kShort: naive_mm<int16_t>(a_in, b_in, c); return;
    case kChar: naive_mm<int8_t>(a_in, b_in, c); return;
    case kByte: naive_mm<uint8_t>(a_in, b_in, c); return;
    default: EMBER_FAIL(NotImplemented, "\"addmm_impl_cpu_\" not implemented for '", dt, "'");
  }
}

Tensor mm2d(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", a.sizes()[0], "x",
              a.sizes()[1], " and ", b.sizes()[0], "x", b.sizes()[1], ")");
  if (is_reduced_float(a.dtype())) return mm2d(a.to(kFloat), b.to(kFloat)).to(a.dtype());
  Tensor c = empty_tensor({a.sizes()[0], b.sizes()[1]}, a.dtype());
  mm_into(a, b, c);
  return c;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "both arguments to matmul need to be at least 1D, but they are ", a.dim(),
              "D and ", b.dim(), "D");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", dtype_name(a.dtype()),
              " != ", dtype_name(b.dtype()));
  if (a.dim() == 1 && b.dim() == 1) {
    EMBER_CHECK(a.numel() == b.numel(), "inconsistent tensor size, expected tensor [", a.numel(), "] and src [",
                b.numel(), "] to have the same number of elements, but got ", a.numel(), " and ", b.numel(),
                " elements respectively");
    EMBER_CHECK_KIND(a.dtype() != kBool, NotImplemented, "\"dot\" not implemented for 'Bool'");
    return mm2d(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
  }
  if (a.dim() == 2 && b.dim() == 1) {
    EMBER_CHECK(a.sizes()[1] == b.sizes()[0], "size mismatch, got input (", a.sizes()[0], "), mat (", a.sizes()[0], "x",
                a.sizes()[1], "), vec (", b.sizes()[0], ")");
    return mm2d(a, b.unsqueeze(1)).squeeze(IntArrayRef({int64_t(-1)}));
  }
  if (a.dim() == 1 && b.dim() == 2) return mm2d(a.unsqueeze(0), b).squeeze(IntArrayRef({int64_t(0)}));
  if (a.dim() == 2 && b.dim() == 2) return mm2d(a, b);
  if (a.dim() >= 3 && b.dim() == 2) {  // [..., M, K] @ [K, N]: one GEMM over all rows, as PyTorch folds it
    DimVector out_shape(IntArrayRef(a.sizes().data(), a.dim() - 1));
    out_shape.push_back(b.sizes()[1]);
    EMBER_CHECK(a.sizes().back() == b.sizes()[0], "Expected size for first two dimensions of batch2 tensor to be: [",
                a.sizes().back(), ", ", b.sizes()[0], "] but got: [", b.sizes()[0], ", ", b.sizes()[1], "].");
    return mm2d(a.reshape({-1, a.sizes().back()}), b).reshape(out_shape);
  }
  // batched: broadcast the batch dims, then one GEMM per matrix
  Tensor A = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor B = b.dim() == 1 ? b.unsqueeze(1) : b;
  int64_t M = A.sizes()[A.dim() - 2], K = A.sizes()[A.dim() - 1];
  int64_t K2 = B.sizes()[B.dim() - 2], N = B.sizes()[B.dim() - 1];
  EMBER_CHECK(K == K2, "Expected size for first two dimensions of batch2 tensor to be: [", K, ", ", K2,
              "] but got: [", K2, ", ", N, "].");
  DimVector ba(IntArrayRef(A.sizes().data(), A.dim() - 2)), bb(IntArrayRef(B.sizes().data(), B.dim() - 2));
  DimVector batch = broadcast_shapes(ba, bb);
  int64_t nbatch = prod(batch);
  DimVector ea(batch), eb(batch);
  ea.push_back(M); ea.push_back(K);
  eb.push_back(K); eb.push_back(N);
  Tensor A3 = A.expand(ea).reshape({nbatch, M, K});
  Tensor B3 = B.expand(eb).reshape({nbatch, K, N});
  ScalarType dt = a.dtype();
  ScalarType cd = is_reduced_float(dt) ? kFloat : dt;
  if (cd != dt) { A3 = A3.to(cd); B3 = B3.to(cd); }
  Tensor C = empty_tensor({nbatch, M, N}, cd);
  const int threads = get_num_threads();
  if (threads > 1 && nbatch > 1) {
    set_blas_threads(1);
    try {
      parallel_for(0, nbatch, 1, [&](int64_t s, int64_t e) {
        for (int64_t i = s; i < e; i++) mm_into(native::select(A3, 0, i), native::select(B3, 0, i), native::select(C, 0, i));
      });
    } catch (...) {
      set_blas_threads(threads);
      throw;
    }
    set_blas_threads(threads);
  } else {
    for (int64_t i = 0; i < nbatch; i++) mm_into(native::select(A3, 0, i), native::select(B3, 0, i), native::select(C, 0, i));
  }
  DimVector out_shape(batch);
  if (a.dim() > 1) out_shape.push_back(M);
  if (b.dim() > 1) out_shape.push_back(N);
  return C.to(dt).reshape(out_shape);
}

const Tensor& matmul_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  Tensor r = native::matmul(a, b);
  EMBER_CHECK(out.dtype() == r.dtype(), "Expected out tensor to have dtype ", r.dtype(), ", but got ", out.dtype(),
              " instead");
  resize_output(out, r.sizes());
  return ember::copy_(out, r);
}

}  // namespace ember::native
