#include "ember/core/tensor.h"

#include "ember/core/checked_math.h"
#include "ember/core/fresh.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/jit/tracer.h"

namespace ember {

Tensor Tensor::mH() const {
  Tensor t = transpose(-2, -1);
  return is_complex(dtype()) ? t.conj() : t;
}

int64_t wrap_dim(int64_t dim, int64_t ndim) {
  int64_t n = std::max<int64_t>(ndim, 1);
  EMBER_CHECK_KIND(dim >= -n && dim < n, Index, "Dimension out of range (expected to be in range of [", -n, ", ",
                   n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

// a 0-d tensor has no size or stride to read (PyTorch's IndexError), though wrap_dim accepts 0 and -1
int64_t Tensor::size(int64_t d) const { return sizes()[wrap_existing_dim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrap_existing_dim(d, dim())]; }

// The bytes of a contiguous tensor of `sizes` (checked: sizes come from users).
static size_t checked_nbytes(IntArrayRef sizes, ScalarType dtype) {
  for (int64_t s : sizes) EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  int64_t n, nbytes;
  EMBER_CHECK(!numel_overflows(sizes, &n) && !mul_overflows(n, itemsize(dtype), &nbytes),
              "Storage size calculation overflowed with sizes=", sizes);
  return size_t(nbytes);
}

Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  auto storage = StorageImpl::allocate(checked_nbytes(sizes, dtype), device);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, checked_contiguous_strides(sizes), 0));
}

Tensor empty_tensor_from(Allocator* allocator, IntArrayRef sizes, ScalarType dtype, Device device) {
  auto storage = StorageImpl::allocate(checked_nbytes(sizes, dtype), allocator, device);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, checked_contiguous_strides(sizes), 0));
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  EMBER_CHECK_KIND(!base.is_sparse(), NotImplemented, "a view of a sparse COO tensor is not supported");
  auto impl = make_intrusive<TensorImpl>(base.impl()->storage(), base.dtype(), sizes, strides, storage_offset);
  impl->set_version_counter(base.impl()->version_counter());
  if (EMBER_UNLIKELY(base.has_math_bits())) impl->set_math_bits(base.impl()->math_bits());
  return Tensor(std::move(impl));
}

Tensor scalar_to_tensor(const Scalar& s) {
  Tensor t = empty_tensor({}, s.dtype());
  switch (s.tag()) {
    case Scalar::Tag::Double: *static_cast<double*>(t.data_ptr()) = s.to_double(); break;
    case Scalar::Tag::Int: *static_cast<int64_t*>(t.data_ptr()) = s.to_long(); break;
    case Scalar::Tag::Bool: *static_cast<bool*>(t.data_ptr()) = s.to_bool(); break;
    case Scalar::Tag::Complex: *static_cast<std::complex<double>*>(t.data_ptr()) = s.to_complex(); break;
  }
  t.impl()->set_wrapped_number(true);
  return t;
}

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  if (EMBER_UNLIKELY(jit::tracing())) jit::on_values_read(*this, "item()");
  EMBER_CHECK(!is_meta(), "Tensor.item() cannot be called on meta tensors");
  if (!device().is_cpu()) return to(Device()).item();  // waits for the device, as PyTorch
  if (EMBER_UNLIKELY(has_math_bits())) return resolve_neg().resolve_conj().item();  // Note [Conjugate views]
  const void* p = data_ptr();
  switch (dtype()) {
    case kBool: return Scalar(*static_cast<const bool*>(p));
    case kByte: return Scalar(int64_t(*static_cast<const uint8_t*>(p)));
    case kChar: return Scalar(int64_t(*static_cast<const int8_t*>(p)));
    case kShort: return Scalar(int64_t(*static_cast<const int16_t*>(p)));
    case kInt: return Scalar(int64_t(*static_cast<const int32_t*>(p)));
    case kLong: return Scalar(*static_cast<const int64_t*>(p));
    case kHalf: return Scalar(double(float(*static_cast<const Half*>(p))));
    case kBFloat16: return Scalar(double(float(*static_cast<const BFloat16*>(p))));
    case kFloat: return Scalar(double(*static_cast<const float*>(p)));
    case kDouble: return Scalar(*static_cast<const double*>(p));
    case kComplexFloat: return Scalar(*static_cast<const std::complex<float>*>(p));
    case kComplexDouble: return Scalar(*static_cast<const std::complex<double>*>(p));
    case ScalarType::Undefined: break;
  }
  EMBER_FAIL(Runtime, "item(): undefined dtype");
}

Tensor Tensor::to(ScalarType t, bool copy) const { return ember::to_dtype(*this, t, copy); }

Tensor Tensor::to(Device d, std::optional<ScalarType> t, bool copy, bool non_blocking) const {
  d.check_available();
  const Device here = device();
  // "cuda" names the tensor's own (current) device; a CPU device has no index. Elsewhere an index of
  // -1 is the device's allocator's to resolve (Allocator::allocate_on: the current device).
  if (d.type == here.type && (d.index < 0 || d.index == here.index || d.is_cpu()))
    return ember::to_dtype(*this, t ? *t : dtype(), copy);
  Tensor r = empty_like_preserve(*this, t ? *t : dtype(), d);  // the layout travels, as PyTorch's to()
  if (numel()) ember::copy_(r, *this, non_blocking);
  return fresh(r);
}

}  // namespace ember
