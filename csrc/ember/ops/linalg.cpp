// torch.matmul with every case: dot, mv, mm and broadcast batched products, on the matrix-product
// stubs (kernels/blas.h; the CPU's entries choose between oneDNN and OpenBLAS in kernels/cpu/blas.cpp).
#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/blas.h"
#include "ember/ops/gemm.h"

EMBER_DEFINE_STUB(gemm_stub)
EMBER_DEFINE_STUB(mm_stub)
EMBER_DEFINE_STUB(bmm_stub)

namespace ember::native {

bool gemm_into(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta) {
  ScalarType dt = a.dtype();
  if (dt != kFloat && dt != kDouble) return false;
  check_same_device("addmm", c.device(), {&a, &b});
  auto kernel = gemm_stub(c.device(), "addmm");
  int64_t M = a.sizes()[0], K = a.sizes()[1], N = b.sizes()[1];
  if (M == 0 || N == 0) return true;
  if (K == 0) {  // an empty sum: only the beta * c term
    if (beta == 0) c.zero_();
    else c.mul_(beta);
    return true;
  }
  kernel(c, a, b, alpha, beta);
  return true;
}

namespace {

// Reduced-precision products the backend multiplies itself (float32 accumulation, one rounding, as
// PyTorch): the CPU's bfloat16 GEMM, and cuBLAS's float16 and bfloat16; others go through float32.
bool native_reduced(const Tensor& a) {
  return (a.dtype() == kBFloat16 && a.device().is_cpu()) || (is_reduced_float(a.dtype()) && a.is_cuda());
}

Tensor mm2d(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", a.sizes()[0], "x",
              a.sizes()[1], " and ", b.sizes()[0], "x", b.sizes()[1], ")");
  if (is_reduced_float(a.dtype()) && !native_reduced(a)) return mm2d(a.to(kFloat), b.to(kFloat)).to(a.dtype());
  auto kernel = mm_stub(a.device(), "mm");
  Tensor c = empty_tensor({a.sizes()[0], b.sizes()[1]}, a.dtype(), a.device());
  if (c.numel() == 0) return c;
  if (a.sizes()[1] == 0) return c.zero_();  // an empty sum
  kernel(c, a, b);
  return c;
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dim() >= 1 && b.dim() >= 1, "both arguments to matmul need to be at least 1D, but they are ", a.dim(),
              "D and ", b.dim(), "D");
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", dtype_name(a.dtype()),
              " != ", dtype_name(b.dtype()));
  if (EMBER_UNLIKELY(a.device() != b.device())) fail_device_mismatch("matmul", a.device(), b.device());
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
    int64_t rows = prod(IntArrayRef(a.sizes().data(), a.dim() - 1));  // not -1: ambiguous when K == 0
    return mm2d(a.reshape({rows, a.sizes().back()}), b).reshape(out_shape);
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
  ScalarType cd = is_reduced_float(dt) && !native_reduced(a) ? kFloat : dt;
  if (cd != dt) { A3 = A3.to(cd); B3 = B3.to(cd); }
  auto kernel = bmm_stub(a.device(), "matmul");
  Tensor C = empty_tensor({nbatch, M, N}, cd, a.device());
  if (C.numel() && K == 0) C.zero_();
  else if (C.numel()) kernel(C, A3, B3);
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
