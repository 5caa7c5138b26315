// Copies, casts and fills: copy_ broadcasts and casts; clone keeps a dense layout; to() returns
// self when nothing changes (no hidden copies).
#include "ember/core/checked_math.h"
#include "ember/core/fresh.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/layout.h"
#include "ember/kernels/kernels.h"
#include "ember/ops/conj.h"

namespace ember::native {

namespace {
// x.t().contiguous() and friends: a contiguous destination whose last two dims are transposed in a
// source laid out as contiguous [.., C, R] matrices goes to the tiled transpose kernel.
bool transposed_copy(const Tensor& self, const Tensor& src) {
  const int64_t nd = self.dim();
  if (nd < 2 || self.dtype() != src.dtype() || self.sizes() != src.sizes() || !self.is_contiguous()) return false;
  if (self.impl()->storage() == src.impl()->storage()) return false;  // overlap rules: leave to TensorIter
  if (self.device() != src.device() || self.is_meta()) return false;
  const int64_t R = self.sizes()[nd - 2], C = self.sizes()[nd - 1];
  if (R < 16 || C < 16 || src.strides()[nd - 2] != 1 || src.strides()[nd - 1] != R) return false;
  int64_t expect = R * C;
  for (int64_t i = nd - 3; i >= 0; i--) {
    if (self.sizes()[i] != 1 && src.strides()[i] != expect) return false;
    expect = checked_mul(expect, self.sizes()[i], "numel");
  }
  // raw buffers for the per-ISA transpose kernel (kernels.h)
  transpose_copy_kernel_stub(self.device(), "copy_")(itemsize(self.dtype()), src.data_ptr(), self.data_ptr(),
                                                    self.numel() / (R * C), R, C);
  self.impl()->bump_version();
  return true;
}
}  // namespace

// A copy between two devices moves bytes once, between dense blocks of the destination's dtype:
// the source is cast and broadcast on its own device, and a strided destination is filled from a
// dense buffer on its own. Between two non-CPU device types the bytes go through the CPU.
static const Tensor& copy_across_devices(const Tensor& self, const Tensor& src, bool non_blocking) {
  EMBER_CHECK(src.dim() <= self.dim(), "copy_(): source of shape ", src.sizes(), " does not broadcast to ", self.sizes());
  if (EMBER_UNLIKELY(src.is_meta())) EMBER_FAIL(NotImplemented, "Cannot copy out of meta tensor; no data!");
  if (EMBER_UNLIKELY(self.is_meta())) {  // nothing to write: the shapes must still fit
    (void)src.expand(self.sizes());
    self.impl()->bump_version();
    return self;
  }
  // the same dense layout on both sides (a transposed or channels_last tensor moved with to()): the
  // bytes of the span move as they are, no staging copy
  if (src.dtype() == self.dtype() && src.sizes() == self.sizes() && src.strides() == self.strides() &&
      non_overlapping_and_dense(self)) {
    copy_bytes(self.data_ptr(), self.device(), src.data_ptr(), src.device(), size_t(self.numel()) * self.element_size(),
               non_blocking);
    self.impl()->bump_version();
    return self;
  }
  Tensor dense = ember::contiguous(ember::to_dtype(src, self.dtype(), false).expand(self.sizes()));
  if (!self.device().is_cpu() && !dense.device().is_cpu() && self.device().type != dense.device().type)
    dense = dense.to(Device());
  Tensor dst = self.is_contiguous() ? self : empty_tensor(self.sizes(), self.dtype(), self.device());
  // the devices' allocators move the bytes (alloc/allocator.h)
  // (non_blocking matters only where the host side is the caller's pinned tensor itself: the
  // temporaries here are pageable, and the backend waits for them)
  copy_bytes(dst.data_ptr(), dst.device(), dense.data_ptr(), dense.device(), size_t(dst.numel()) * dst.element_size(),
             non_blocking);
  if (!dst.is_same(self)) ember::copy_(self, dst);
  self.impl()->bump_version();
  return self;
}

const Tensor& copy_(const Tensor& self, const Tensor& src, bool non_blocking) {
  EMBER_CHECK(src.defined(), "copy_(): expected a defined source tensor");
  if (self.is_same(src)) return self;
  if (EMBER_UNLIKELY(self.has_math_bits() || src.has_math_bits())) {
    // Note [Conjugate views]: a view's storage takes the values it is to read with its bits undone
    // (conjugated, negated); between equal bits the stored values move as they are
    const uint8_t bits = self.impl()->math_bits();
    Tensor v;
    if (src.impl()->math_bits() == bits) {
      v = storage_alias(src);
    } else {
      v = resolve_bits(src);
      if (self.is_conj()) v = ember::conj_physical(v);
      if (self.is_neg()) v = ember::neg(v);
    }
    ember::copy_(bits ? storage_alias(self) : self, v, non_blocking);
    return self;
  }
  if (EMBER_UNLIKELY(self.device() != src.device())) {
    if (self.numel() == 0) return self;
    return copy_across_devices(self, src, non_blocking);
  }
  TensorIterConfig cfg;
  cfg.name = "copy_";
  cfg.out = self;
  cfg.mode = OutMode::Inplace;
  cfg.promote_inputs = false;
  cfg.force_dtype = self.dtype();
  cfg.allow_reduced_float = true;
  cfg.add_input(src);
  if (src.numel() == 0 && self.numel() == 0) return self;
  if (transposed_copy(self, src)) return self;
  TensorIter it(cfg);
  copy_kernel_stub(it.device(), "copy_")(it);
  return self;
}

// clone/contiguous/to results: filled by copy_, then at version 0 (core/fresh.h)
static Tensor filled_fresh(const Tensor& r, const Tensor& src) {
  if (src.numel()) ember::copy_(r, src);
  return fresh(r);
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat> mf) {
  Tensor r = mf && *mf != MemoryFormat::Preserve ? empty_in_format(self.sizes(), self.dtype(), self.device(), *mf)
                                                 : empty_like_preserve(self, self.dtype());
  return filled_fresh(r, self);
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy) {
  if (dtype == self.dtype() && !copy) return self;
  return filled_fresh(empty_like_preserve(self, dtype), self);
}

Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  return filled_fresh(empty_tensor(self.sizes(), self.dtype(), self.device()), self);
}

const Tensor& fill_(const Tensor& self, const Scalar& value) {
  check_scalar_fits(value, self.dtype());
  TensorIterConfig cfg;
  cfg.name = "fill_";
  cfg.out = self;
  cfg.mode = OutMode::Inplace;
  cfg.allow_reduced_float = true;
  cfg.check_internal_overlap = false;  // PyTorch fills expanded tensors (every alias gets the same value)
  TensorIter it(cfg);
  fill_kernel_stub(it.device(), "fill_")(it, value);
  return self;
}

const Tensor& zero_(const Tensor& self) { return native::fill_(self, Scalar(int64_t(0))); }

}  // namespace ember::native
