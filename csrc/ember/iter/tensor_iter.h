#pragma once
// TensorIter: the engine behind every elementwise op. Given an output (or none) and inputs it
//  1. computes the broadcast shape and PyTorch's result dtype (categories; 0-d tensors and
//     wrapped Python numbers only promote across categories),
//  2. casts inputs whose dtype differs from the compute dtype (half/bfloat16 compute in float),
//  3. allocates the output, or checks it (in-place: exact shape; out=: resized),
//  4. orders dims by the output's memory layout and coalesces them, so a contiguous or
//     permuted-contiguous op becomes one flat inner loop the compiler vectorizes,
//  5. runs `loop(data, strides_bytes, n)` over inner runs, split across threads by kGrainSize.
#include <cstdint>
#include <initializer_list>

#include "ember/core/stream.h"
#include "ember/core/tensor.h"
#include "ember/parallel/parallel.h"

namespace ember {

constexpr int kMaxOperands = 4;  // output + up to 3 inputs

// A non-owning callable reference, cheaper than std::function on the hot path.
class LoopRef {
 public:
  template <class F>
  LoopRef(const F& f) : obj_(&f), call_([](const void* o, char** d, const int64_t* s, int64_t n) {
                          (*static_cast<const F*>(o))(d, s, n);
                        }) {}
  void operator()(char** d, const int64_t* s, int64_t n) const { call_(obj_, d, s, n); }

 private:
  const void* obj_;
  void (*call_)(const void*, char**, const int64_t*, int64_t);
};

enum class OutMode { Functional, Inplace, Out };

struct TensorIterConfig {
  const char* name = "op";
  Tensor out;                  // undefined: allocate
  OutMode mode = OutMode::Functional;
  Tensor inputs[kMaxOperands - 1];
  int ninputs = 0;
  bool promote_inputs = true;      // cast inputs to the common dtype
  bool promote_int_to_float = false;
  bool result_bool = false;        // output dtype bool (comparisons)
  bool result_real = false;        // output dtype the real twin of a complex result (abs, angle)
  ScalarType force_dtype = ScalarType::Undefined;  // compute dtype override (e.g. copy)
  bool allow_reduced_float = false;  // kernel handles half/bfloat16 itself (copy)
  // On the CPU the kernel widens half/bfloat16 operands block by block (kernels/cpu/isa/reduced_float.h):
  // the compute dtype stays half/bfloat16, an unrounded input arrives as float.
  bool cpu_widens_reduced_float = false;
  bool out_dtype_must_match = false; // out= must have exactly the result dtype (PyTorch's same-dtype ops)
  bool check_internal_overlap = true; // false: an output with stride-0 dims is fine (fill_, masked_fill_)
  bool round_inputs_to_common = true;  // cast inputs to a half/bfloat16 common dtype before computing in float
  int unrounded_input = -1;  // an input exempt from that rounding (PyTorch's mul/div by a scalar)

  TensorIterConfig& add_input(const Tensor& t) { inputs[ninputs++] = t; return *this; }
};

class EMBER_API TensorIter {
 public:
  explicit TensorIter(TensorIterConfig& cfg);

  int ntensors() const { return ntensors_; }
  int ndim() const { return int(shape_.size()); }
  int64_t numel() const { return numel_; }
  ScalarType common_dtype() const { return common_dtype_; }   // dtype of the op's result
  ScalarType compute_dtype() const { return compute_dtype_; } // dtype the kernel sees for inputs
  ScalarType dtype(int i) const { return dtypes_[i]; }        // operand i's dtype (0 = output)
  char* data(int i) const { return data_[i]; }
  const DimVector& shape() const { return shape_; }           // fastest dim first
  const int64_t* strides(int i) const { return strides_[i].data(); }  // bytes, fastest first
  bool is_contiguous() const;  // one flat run with every operand dense
  // The launch context: the device every operand is on, and the stream to queue the kernel on.
  Device device() const { return device_; }
  Stream stream() const { return current_stream(device_); }

  // Runs the inner loop over everything; splits across threads above `grain` elements.
  void for_each(LoopRef loop, int64_t grain = kGrainSize) const;
  void serial_for_each(LoopRef loop, int64_t begin, int64_t end) const;

  // The result tensor the caller sees; writes back a temporary output if one was used.
  Tensor finish();

 private:
  void compute_device(TensorIterConfig& cfg);
  void compute_types(TensorIterConfig& cfg);
  void compute_shape(TensorIterConfig& cfg);
  void allocate_or_check_output(TensorIterConfig& cfg);
  void reorder_and_coalesce();

  int ntensors_ = 0;
  Tensor ops_[kMaxOperands];        // ops_[0] is what the kernel writes
  Tensor uncast_[kMaxOperands];     // an input as given, where ops_ holds a cast of it (overlap checks)
  Tensor user_out_;                 // the tensor to return / copy back into
  ScalarType dtypes_[kMaxOperands];
  ScalarType common_dtype_ = ScalarType::Undefined, compute_dtype_ = ScalarType::Undefined;
  char* data_[kMaxOperands] = {};
  DimVector strides_[kMaxOperands];
  DimVector shape_;
  DimVector full_shape_;  // broadcast shape in logical order
  int64_t numel_ = 0;
  Device device_;
};

// The dtype PyTorch gives `op(a, b, ...)`: torch.result_type over tensors and wrapped numbers.
EMBER_API ScalarType result_type(const Tensor* ts, int n);
// An uninitialised tensor shaped like `t`, keeping t's memory layout when it is dense (a
// transposed input gives a transposed-layout output, as PyTorch's preserve_format), else contiguous;
// on t's device, or on `device` (a move: t.to(device) keeps the layout too).
EMBER_API Tensor empty_like_preserve(const Tensor& t, ScalarType dtype, std::optional<Device> device = std::nullopt);
// Whether a value of dtype `from` may be written to `to` by an op (torch.can_cast).
EMBER_API bool can_cast(ScalarType from, ScalarType to);
// Broadcast two shapes or raise PyTorch's error.
EMBER_API DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b);
// Resize an out= tensor to `shape` (contiguous), reallocating its storage when too small.
EMBER_API void resize_output(const Tensor& out, IntArrayRef shape);
// Raise "value cannot be converted to type int8_t without overflow" when a Python number does not
// fit `t`, as PyTorch's checked conversion of fill values, clamp bounds, alpha, ... (c10::overflows:
// bool takes anything; floats take inf/NaN but not finite values beyond their range; integers take
// neither, and unsigned ones also take negatives down to -max, which wrap).
EMBER_API void check_scalar_fits(const Scalar& s, ScalarType t);
// Raise PyTorch's "Expected out tensor to have dtype float, but got double instead" unless out has `expected`.
EMBER_API void check_out_dtype(const Tensor& out, ScalarType expected);
// Write an op's result into its out= tensor (resized). exact_dtype: out must have the result's
// dtype (BLAS-like ops); otherwise the result must be castable to it (elementwise-like ops).
EMBER_API const Tensor& copy_to_out(const Tensor& out, const Tensor& result, bool exact_dtype);
// Raise PyTorch's "Expected all tensors to be on the same device, but found at least two devices,
// cuda:0 and cpu!" unless every defined tensor is on `device`.
EMBER_API void check_same_device(const char* op, Device device, std::initializer_list<const Tensor*> tensors);
[[noreturn]] EMBER_API void fail_device_mismatch(const char* op, Device a, Device b);
// Raise if `out` has elements that alias each other, or partially overlaps `in`.
EMBER_API void check_no_overlap(const Tensor& out, const Tensor& in);
// Raise if `out` shares any element with `in` (PyTorch's assert_no_overlap: the out= of ops that read
// their inputs while writing, such as cat, gather, index_select, take, masked_select, kthvalue, refuses
// even an exact alias; interleaved strided views are too hard to decide and pass, as there).
EMBER_API void check_out_shares_nothing(const Tensor& out, const Tensor& in);

}  // namespace ember
