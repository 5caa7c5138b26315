// Complex tensors' own ops: the real/complex views (view_as_real, view_as_complex), building a
// complex tensor from parts (complex, polar), and the gradient helpers of the non-holomorphic ops
// (abs, sgn, angle, real/imag parts). Gradients follow PyTorch's convention: for a real loss L of
// z = x + iy, the gradient is dL/dx + i dL/dy.
#include "ember/autograd/formulas.h"
#include "ember/ops/conj.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember {

namespace {
// A view of `base`'s storage under another dtype (complex <-> its real twin), as view(dtype) makes one.
Tensor reinterpret_view(const Tensor& base, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  Tensor r = make_view(base, sizes, strides, offset);
  r.impl()->set_dtype(dtype);
  return r;
}
}  // namespace

// conj(t) / _neg_view(t) flip a bit on a differentiable view; the op after it reads the rest through
// its entry's guard (a tensor with both bits resolves its conjugate there)
Tensor resolve_conj(const Tensor& t) { return t.is_conj() ? ember::conj_physical(ember::conj(t)) : t; }
Tensor resolve_neg(const Tensor& t) { return t.is_neg() ? ember::neg(ember::_neg_view(t)) : t; }
Tensor resolve_bits(const Tensor& t) { return t.is_neg() ? resolve_neg(t) : resolve_conj(t); }

Tensor Tensor::resolve_conj() const { return ember::resolve_conj(*this); }
Tensor Tensor::resolve_neg() const { return ember::resolve_neg(*this); }

std::vector<Tensor> resolve_bits(TensorList ts) {
  std::vector<Tensor> r;
  r.reserve(ts.size());
  for (const Tensor& t : ts) r.push_back(resolve_bits(t));
  return r;
}

bool any_math_bits(TensorList ts) {
  for (const Tensor& t : ts)
    if (t.has_math_bits()) return true;
  return false;
}

Tensor storage_alias(const Tensor& t) {
  Tensor r = make_view(t, t.sizes(), t.strides(), t.storage_offset());
  r.impl()->set_math_bits(0);
  return r;
}

const Tensor& write_back_through_bits(const Tensor& self, const Tensor& computed) {
  self.copy_(computed);
  return self;
}

Tensor out_stand_in_for_bits(const Tensor& out) {
  return out.has_math_bits() ? empty_tensor({0}, out.dtype(), out.device()) : out;
}

void out_write_back_through_bits(const Tensor& out, const Tensor& tmp) {
  if (tmp.is_same(out)) return;
  resize_output(out, tmp.sizes());
  out.copy_(tmp);
}

void refuse_math_bits_mutation(TensorList ts, const char* op) {
  EMBER_CHECK_KIND(!any_math_bits(ts), NotImplemented, op, ": a conjugate or negative view among the tensors it "
                   "updates in place is not supported; call resolve_conj()/resolve_neg() on it first");
}

namespace autograd {
// (a conjugate view's real parts are its storage's; its imaginary parts are the negated stored ones)
Tensor real_part(const Tensor& t) {
  if (!is_complex(t.dtype())) return t;
  return ember::view_as_real(t.is_conj() ? ember::conj(t) : t).select(-1, 0);
}
Tensor imag_part(const Tensor& t) {
  if (t.is_conj()) return ember::_neg_view(ember::view_as_real(ember::conj(t)).select(-1, 1));
  return is_complex(t.dtype()) ? ember::view_as_real(t).select(-1, 1) : ember::zeros_like(t);
}

// s = z/|z|: ds/dz = 1/(2|z|), ds/dz* = -s^2/(2|z|), so the gradient is (g - s^2 conj(g)) / (2|z|), 0 at z = 0
Tensor sgn_backward(const Tensor& self, const Tensor& grad, const Tensor& result) {
  if (!is_complex(self.dtype())) return zeros_like_grad(grad);
  Tensor r = self.abs();
  Tensor g = (grad - result * result * grad.conj_physical()) / (r * 2);
  return ember::where(ember::eq(r, Scalar(0.0)), ember::zeros_like(g), g);
}

// theta = arg z: dtheta/dx = -y/|z|^2, dtheta/dy = x/|z|^2, so the gradient is g * i z / |z|^2 (0 at z = 0);
// a real input's angle is piecewise constant
Tensor angle_backward(const Tensor& grad, const Tensor& self) {
  if (!is_complex(self.dtype())) return zeros_like_grad(grad);
  Tensor r2 = self.abs().square();
  Tensor iz = ember::complex(imag_part(self).neg(), real_part(self));
  Tensor g = grad * iz / r2;
  return ember::where(ember::eq(r2, Scalar(0.0)), ember::zeros_like(g), g);
}
}  // namespace autograd

namespace native {

Tensor view_as_real(const Tensor& self) {
  EMBER_CHECK(is_complex(self.dtype()), "view_as_real is only supported for complex tensors");
  EMBER_CHECK(!self.is_conj(), "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
              "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the resulting tensor "
              "will NOT alias the original.");
  DimVector sizes(self.sizes()), strides;
  for (int64_t s : self.strides()) strides.push_back(s * 2);
  sizes.push_back(2);
  strides.push_back(1);
  return reinterpret_view(self, to_real_dtype(self.dtype()), sizes, strides, self.storage_offset() * 2);
}

// Note [Conjugate views]: conj flips the bit on a view of the same storage (a real tensor: a plain alias);
// _neg_view flips the negative bit.
Tensor conj(const Tensor& self) {
  Tensor r = make_view(self, self.sizes(), self.strides(), self.storage_offset());
  if (is_complex(self.dtype())) r.impl()->set_conj(!self.is_conj());
  return r;
}

Tensor _neg_view(const Tensor& self) {
  Tensor r = make_view(self, self.sizes(), self.strides(), self.storage_offset());
  r.impl()->set_neg(!self.is_neg());
  return r;
}

Tensor view_as_complex(const Tensor& self) {
  const ScalarType dt = self.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble, "view_as_complex is only supported for float and double tensors, but got "
              "a tensor of scalar type: ", dt);
  EMBER_CHECK(self.dim() != 0, "Input tensor must have one or more dimensions");
  EMBER_CHECK(self.sizes().back() == 2, "Tensor must have a last dimension of size 2");
  EMBER_CHECK(self.strides().back() == 1, "Tensor must have a last dimension with stride 1");
  DimVector sizes, strides;
  for (int64_t i = 0; i + 1 < self.dim(); i++) {
    // a size-1 dim's stride is never used, nor any of an empty tensor (a contiguous tensor may carry any there)
    const bool unit = self.sizes()[i] == 1 || self.numel() == 0;
    EMBER_CHECK(unit || self.strides()[i] % 2 == 0, "Tensor must have a stride divisible by 2 for all but last "
                "dimension");
    sizes.push_back(self.sizes()[i]);
    strides.push_back(unit ? 1 : self.strides()[i] / 2);
  }
  EMBER_CHECK(self.storage_offset() % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  return reinterpret_view(self, to_complex_dtype(dt), sizes, strides, self.storage_offset() / 2);
}

Tensor complex(const Tensor& real, const Tensor& imag) {
  const ScalarType dt = real.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble || dt == kHalf,
              "Expected both inputs to be Half, Float or Double tensors but got ", real.dtype(), " and ", imag.dtype());
  EMBER_CHECK(imag.dtype() == dt, "Expected object of scalar type ", dt, " but got scalar type ", imag.dtype(),
              " for second argument");
  EMBER_CHECK(dt != kHalf, "complex: Ember has no complex32 (ComplexHalf) dtype; use float32 parts");
  check_same_device("complex", real.device(), {&imag});
  Tensor out = ember::empty(broadcast_shapes(real.sizes(), imag.sizes()),
                            TensorOptions(to_complex_dtype(dt)).device(real.device()));
  Tensor parts = ember::view_as_real(out);
  parts.select(-1, 0).copy_(real.detach());
  parts.select(-1, 1).copy_(imag.detach());
  return out;
}
const Tensor& complex_out(const Tensor& out, const Tensor& real, const Tensor& imag) {
  return copy_to_out(out, native::complex(real, imag), true);
}

// abs * (cos(angle) + i sin(angle)), differentiable through its parts
Tensor polar(const Tensor& abs, const Tensor& angle) {
  const ScalarType dt = abs.dtype();
  EMBER_CHECK(dt == kFloat || dt == kDouble,
              "Expected both inputs to be Half, Float or Double tensors but got ", abs.dtype(), " and ", angle.dtype());
  EMBER_CHECK(angle.dtype() == dt, "Expected object of scalar type ", dt, " but got scalar type ", angle.dtype(),
              " for second argument");
  return ember::complex(abs * angle.cos(), abs * angle.sin());
}
const Tensor& polar_out(const Tensor& out, const Tensor& abs, const Tensor& angle) {
  return copy_to_out(out, native::polar(abs, angle), true);
}

}  // namespace native
}  // namespace ember
