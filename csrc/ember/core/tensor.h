#pragma once
// ember::Tensor: a reference-counted handle to a TensorImpl. Copying a Tensor shares data;
// ops create new tensors. The op methods are generated from ops.yaml (tensor_methods.h).
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "ember/core/scalar.h"
#include "ember/core/tensor_impl.h"

namespace ember {

class Tensor;
class Generator;
class TensorIndex;  // core/tensor_indexing.h: x.index({Slice(0, 2), None, 1})
EMBER_API Tensor scalar_to_tensor(const Scalar& s);  // declared again below, with its comment
namespace autograd {
class Node;
}
using TensorList = const std::vector<Tensor>&;
// An optional list of dims (dim=None, dim=1, dim={0, 2}). A single int is kept inline: as a plain
// std::optional<IntArrayRef>, x.sum(1) or x.norm(2, 1) would view an int64 temporary that dies inside
// optional's constructor, before the op reads it. Braced lists live until the call ends, as IntArrayRef's.
class OptionalIntArrayRef : public std::optional<IntArrayRef> {
  using Base = std::optional<IntArrayRef>;

 public:
  using Base::Base;
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(const Base& o) : Base(o) {}
  OptionalIntArrayRef(int64_t dim) : single_(dim) { Base::emplace(&single_, 1); }
  OptionalIntArrayRef(int dim) : OptionalIntArrayRef(int64_t(dim)) {}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  OptionalIntArrayRef(std::initializer_list<int64_t> dims EMBER_LIFETIME_BOUND) : Base(IntArrayRef(dims)) {}
#pragma GCC diagnostic pop
  OptionalIntArrayRef(const OptionalIntArrayRef& o) : Base(o), single_(o.single_) { repoint(o); }
  OptionalIntArrayRef& operator=(const OptionalIntArrayRef& o) {
    Base::operator=(o);
    single_ = o.single_;
    repoint(o);
    return *this;
  }

 private:
  // a copy of an inline int views its own copy
  void repoint(const OptionalIntArrayRef& o) {
    if (o.has_value() && o->data() == &o.single_) Base::emplace(&single_, 1);
  }
  int64_t single_ = 0;
};

// torch.memory_format: row-major (Contiguous), a dense input's own strides (Preserve, the default of
// *_like and clone), and NHWC / NDHWC for 4-d / 5-d tensors (iter/layout.h makes and tests them)
enum class MemoryFormat { Contiguous, Preserve, ChannelsLast, ChannelsLast3d };

// dtype/device/requires_grad for factory functions, libtorch style: TensorOptions().dtype(kDouble)
struct TensorOptions {
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  bool requires_grad_ = false;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  // implicit, as in libtorch: torch::empty({n}, device), torch::zeros({n}, kCUDA)
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType t) : device_(Device(t)) {}
  TensorOptions dtype(ScalarType t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions dtype(std::optional<ScalarType> t) const { auto o = *this; o.dtype_ = t; return o; }
  TensorOptions device(Device d) const { auto o = *this; o.device_ = d; return o; }
  TensorOptions requires_grad(bool r) const { auto o = *this; o.requires_grad_ = r; return o; }
  ScalarType dtype_or(ScalarType t) const { return dtype_ ? *dtype_ : t; }
  Device device_or_cpu() const { return device_ ? *device_ : Device(); }
};

class EMBER_API Tensor {
 public:
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return bool(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  int64_t use_count() const { return impl_.use_count(); }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  IntArrayRef shape() const { return impl_->sizes(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return impl_->dim(); }
  int64_t numel() const { return impl_->numel(); }
  ScalarType dtype() const { return impl_->dtype(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  int64_t element_size() const { return itemsize(dtype()); }
  int64_t nbytes() const { return numel() * element_size(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  // a sparse COO tensor (ember/sparse/sparse_tensor.h); false for an undefined one
  bool is_sparse() const { return impl_ && impl_->layout() != Layout::Strided; }
  bool is_cuda() const { return impl_ && impl_->is_cuda(); }
  bool is_meta() const { return impl_ && impl_->is_meta(); }
  bool off_host() const { return impl_ && impl_->off_host(); }  // see TensorImpl::off_host
  // a lazily conjugated complex tensor, a lazily negated one (Note [Conjugate views]); false for an
  // undefined one. has_math_bits(): either, the generated op entries' one test.
  bool is_conj() const { return impl_ && impl_->is_conj(); }
  bool is_neg() const { return impl_ && impl_->is_neg(); }
  bool has_math_bits() const { return impl_ && impl_->math_bits(); }
  // *this, or a new tensor holding its values without the bit (ops/conj.h)
  Tensor resolve_conj() const;
  Tensor resolve_neg() const;
  bool is_floating_point() const { return is_floating(dtype()); }
  void* data_ptr() const { return impl_->data(); }
  // The pointer an op hands a kernel stub: null on the meta device, whose stubs do nothing
  // (kernels/registry.h); data_ptr() raises there, for code that would read the elements itself.
  void* kernel_data() const { return impl_->is_meta() ? nullptr : impl_->data(); }
  template <class T> T* data_ptr() const;
  uint32_t _version() const { return impl_->version(); }

  // The value of a one-element tensor.
  Scalar item() const;
  template <class T> T item() const { return item().to<T>(); }

  // Conversions (libtorch spelling). to(dtype) returns *this when nothing changes.
  Tensor to(ScalarType t, bool copy = false) const;
  Tensor to(Device d, std::optional<ScalarType> t = std::nullopt, bool copy = false, bool non_blocking = false) const;
  Tensor to(const Tensor& other, bool copy = false) const { return to(other.dtype(), copy); }
  Tensor type_as(const Tensor& other) const { return to(other.dtype()); }

  Tensor operator[](int64_t i) const { return select(0, i); }
  Tensor mT() const { return transpose(-2, -1); }  // matrix transpose of the last two dims
  // conjugate transpose of the last two dims: mT() for real tensors, a conjugate view for complex ones
  Tensor mH() const;
  Tensor adjoint() const { return mH(); }

  // x.pow(2): the exponent as a wrapped number, so the result keeps x's dtype
  Tensor pow(const Scalar& exponent) const { return pow(scalar_to_tensor(exponent)); }
  const Tensor& pow_(const Scalar& exponent) const { return pow_(scalar_to_tensor(exponent)); }

  // Python's x[0:2, None, ..., idx] spelled x.index({Slice(0, 2), None, Ellipsis, idx}), and its
  // assignment (core/tensor_indexing.cpp)
  Tensor index(std::initializer_list<TensorIndex> indices) const;
  Tensor index(const std::vector<TensorIndex>& indices) const;
  const Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Tensor& values) const;
  const Tensor& index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) const;
  const Tensor& index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) const;
  const Tensor& index_put_(const std::vector<TensorIndex>& indices, const Scalar& value) const;

  // Autograd (libtorch spelling; defined in autograd/variable.cpp)
  bool requires_grad() const;
  const Tensor& requires_grad_(bool requires_grad = true) const;
  bool is_leaf() const;
  Tensor grad() const;  // undefined if none
  std::shared_ptr<autograd::Node> grad_fn() const;
  void backward(const Tensor& gradient = Tensor(), std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  Tensor detach() const;  // shares storage and version counter, no history
  void retain_grad() const;

#include "ember/generated/tensor_methods.h"

 private:
  intrusive_ptr<TensorImpl> impl_;
};

// Allocate a fresh contiguous tensor.
EMBER_API Tensor empty_tensor(IntArrayRef sizes, ScalarType dtype, Device device = Device());
// The same from a given allocator (pinned host memory: cuda::empty_pinned); `device` is where that
// allocator's memory is.
EMBER_API Tensor empty_tensor_from(Allocator* allocator, IntArrayRef sizes, ScalarType dtype, Device device);
// A new tensor sharing `base`'s storage and version counter with new geometry. See Note [Version counter sharing]
EMBER_API Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
// A Python number as a 0-d tensor that does not take part in deciding the result dtype.
EMBER_API Tensor scalar_to_tensor(const Scalar& s);
// Normalise a possibly negative dim against `ndim` (0-d tensors accept -1 and 0), raising IndexError.
EMBER_API int64_t wrap_dim(int64_t dim, int64_t ndim);

template <class T> T* Tensor::data_ptr() const {
  EMBER_CHECK(dtype() == DtypeOf<T>::value, "expected scalar type ", DtypeOf<T>::value, " but found ", dtype());
  return static_cast<T*>(data_ptr());
}

}  // namespace ember
