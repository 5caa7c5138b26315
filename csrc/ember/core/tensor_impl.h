#pragma once
// TensorImpl: a strided view (sizes, strides, offset, dtype) onto a Storage.
// INVARIANT: sizes_.size() == strides_.size(); numel_ == prod(sizes_); is_contiguous_ is
// kept in sync by set_sizes_and_strides, the only mutator of the geometry.
#include <atomic>
#include <memory>

#include "ember/core/array_ref.h"
#include "ember/core/dtype.h"
#include "ember/core/storage.h"

namespace ember {

// Note [Version counter sharing]
// A tensor and every view of it share one VersionCounter: an in-place op through any of them
// bumps it, and autograd compares it with the value it saved. It is allocated lazily: a
// temporary that is never viewed nor modified in place never pays for it.
struct VersionCounter : RefCounted {
  std::atomic<uint32_t> version{0};
};

// Filled in by the autograd library; the core only owns and frees it.
struct AutogradMetaBase {
  virtual ~AutogradMetaBase() = default;
};

// Strided: sizes/strides over a Storage. SparseCoo: indices + values (ember/sparse/sparse_tensor.h);
// such a tensor has no storage of its own, so data() refuses it instead of handing out a pointer
// to memory that isn't there. So does a meta tensor's (core/device.h): code that would read or
// write elements raises NotImplementedError instead of touching a null pointer.
enum class Layout : uint8_t { Strided, SparseCoo };

class EMBER_API TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  ~TensorImpl() override;

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return int64_t(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  const Storage& storage() const { return storage_; }
  bool is_contiguous() const { return is_contiguous_; }
  void* data() const {
    if (EMBER_UNLIKELY(no_data_)) no_data();
    return static_cast<char*>(storage_->data()) + storage_offset_ * itemsize(dtype_);
  }
  Layout layout() const { return layout_; }

  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  void set_storage(Storage s) {
    storage_ = std::move(s);
    on_device_flags();
  }
  // On a CUDA device: the generated op entries refuse such tensors for ops without a CUDA path
  // (a flag beside the layout, so the check costs one byte load on the CPU's per-op path).
  bool is_cuda() const { return on_cuda_; }
  bool is_meta() const { return on_meta_; }
  // Where the generated op entries check that an op has a path for the tensor's device (CUDA or meta).
  bool off_host() const { return off_host_; }
  void set_dtype(ScalarType t) { dtype_ = t; }

  // See Note [Version counter sharing]
  uint32_t version() const { return version_ ? version_->version.load(std::memory_order_relaxed) : 0; }
  void bump_version() { version_counter()->version.fetch_add(1, std::memory_order_relaxed); }
  const intrusive_ptr<VersionCounter>& version_counter() const {
    if (!version_) version_ = make_intrusive<VersionCounter>();
    return version_;
  }
  void set_version_counter(intrusive_ptr<VersionCounter> v) { version_ = std::move(v); }

  // Note [Conjugate views]: a complex tensor whose elements read as the conjugates of the stored
  // ones (conj() flips this bit instead of copying), or a tensor whose elements read negated (the
  // negative bit: the imaginary part of a conjugate view). Views inherit the bits (make_view); the
  // generated op entries hand ops that do not read them materialized copies (ops/conj.h), copy_
  // honours them on both sides, so kernels never see them.
  enum MathBits : uint8_t { kConjBit = 1, kNegBit = 2 };
  bool is_conj() const { return math_bits_ & kConjBit; }
  bool is_neg() const { return math_bits_ & kNegBit; }
  uint8_t math_bits() const { return math_bits_; }
  void set_math_bits(uint8_t b) { math_bits_ = b; }
  void set_conj(bool v) { math_bits_ = uint8_t(v ? math_bits_ | kConjBit : math_bits_ & ~kConjBit); }
  void set_neg(bool v) { math_bits_ = uint8_t(v ? math_bits_ | kNegBit : math_bits_ & ~kNegBit); }

  // A Python number wrapped as a 0-d tensor: it does not decide the result dtype.
  bool is_wrapped_number() const { return wrapped_number_; }
  void set_wrapped_number(bool v) { wrapped_number_ = v; }

  AutogradMetaBase* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaBase> m) { autograd_meta_ = std::move(m); }

 protected:
  void set_layout(Layout l) {
    layout_ = l;
    on_device_flags();
  }

 private:
  [[noreturn]] void no_data() const;
  void on_device_flags() {
    const DeviceType t = storage_ ? storage_->device().type : DeviceType::CPU;
    on_cuda_ = t == DeviceType::CUDA;
    on_meta_ = t == DeviceType::Meta;
    off_host_ = on_cuda_ || on_meta_;
    no_data_ = layout_ != Layout::Strided || on_meta_;
  }
  Storage storage_;
  int64_t storage_offset_ = 0;
  DimVector sizes_, strides_;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
  bool wrapped_number_ = false;
  uint8_t math_bits_ = 0;  // MathBits
  bool on_cuda_ = false;
  bool on_meta_ = false;
  bool off_host_ = false;
  bool no_data_ = false;  // sparse or meta: data() raises
  Layout layout_ = Layout::Strided;
  mutable intrusive_ptr<VersionCounter> version_;
  std::unique_ptr<AutogradMetaBase> autograd_meta_;
};

// Row-major strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
bool compute_is_contiguous(IntArrayRef sizes, IntArrayRef strides);

}  // namespace ember
