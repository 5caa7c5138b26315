// Copies, casts and fills: copy_ broadcasts and casts; clone keeps a dense layout; to() returns
// self when nothing changes (no hidden copies).
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/kernels/kernels.h"

namespace ember::native {

const Tensor& copy_(const Tensor& self, const Tensor& src) {
  EMBER_CHECK(src.defined(), "copy_(): expected a defined source tensor");
  if (self.is_same(src)) return self;
  TensorIterConfig cfg;
  cfg.name = "copy_";
  cfg.out = self;
  cfg.mode = OutMode::Inplace;
  cfg.promote_inputs = false;
  cfg.force_dtype = self.dtype();
  cfg.allow_reduced_float = true;
  cfg.add_input(src);
  if (src.numel() == 0 && self.numel() == 0) return self;
  TensorIter it(cfg);
  EMBER_KERNEL(copy_kernel)(it);
  return self;
}

Tensor clone(const Tensor& self) {
  Tensor r = empty_like_preserve(self, self.dtype());
  if (self.numel()) ember::copy_(r, self);
  return r;
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy) {
  if (dtype == self.dtype() && !copy) return self;
  Tensor r = empty_like_preserve(self, dtype);
  if (self.numel()) ember::copy_(r, self);
  return r;
}

Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  Tensor r = empty_tensor(self.sizes(), self.dtype());
  ember::copy_(r, self);
  return r;
}

const Tensor& fill_(const Tensor& self, const Scalar& value) {
  TensorIterConfig cfg;
  cfg.name = "fill_";
  cfg.out = self;
  cfg.mode = OutMode::Inplace;
  cfg.allow_reduced_float = true;
  cfg.check_internal_overlap = false;  // PyTorch fills expanded tensors (every alias gets the same value)
  TensorIter it(cfg);
  EMBER_KERNEL(fill_kernel)(it, value);
  return self;
}

const Tensor& zero_(const Tensor& self) { return native::fill_(self, Scalar(int64_t(0))); }

}  // namespace ember::native
