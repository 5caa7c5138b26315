#include "ember/iter/tensor_iter.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <numeric>

#include "ember/core/checked_math.h"
#include "ember/generated/ops.h"
#include "ember/iter/layout.h"
#include "ember/parallel/parallel.h"

namespace ember {

// ---------------------------------------------------------------- dtypes
namespace {
int category(ScalarType t) { return t == kBool ? 0 : is_floating(t) ? 2 : 1; }

}  // namespace

ScalarType result_type(const Tensor* ts, int n) {
  ScalarType dim_result = ScalarType::Undefined, zero_result = ScalarType::Undefined,
             wrapped_result = ScalarType::Undefined;
  for (int i = 0; i < n; i++) {
    const Tensor& t = ts[i];
    if (!t.defined()) continue;
    ScalarType dt = t.dtype();
    if (t.impl()->is_wrapped_number()) {
      // A Python float counts as the default dtype, a complex as its complex twin, an int as int64.
      if (is_floating(dt)) dt = default_dtype();
      else if (is_complex(dt)) dt = to_complex_dtype(default_dtype());
      wrapped_result = promote_types(wrapped_result, dt);
    } else if (t.dim() == 0) {
      zero_result = promote_types(zero_result, dt);
    } else {
      dim_result = promote_types(dim_result, dt);
    }
  }
  auto combine = [](ScalarType higher, ScalarType lower) {
    if (higher == ScalarType::Undefined) return lower;
    if (lower == ScalarType::Undefined) return higher;
    if (is_complex(higher)) return higher;
    // a complex of lower priority keeps a float operand's precision: float32 + complex128 number -> complex64
    if (is_complex(lower)) return is_floating(higher) ? to_complex_dtype(higher) : lower;
    if (is_floating(higher)) return higher;
    if (higher == kBool || is_floating(lower)) return promote_types(higher, lower);
    return higher;
  };
  return combine(dim_result, combine(zero_result, wrapped_result));
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_complex(from) && !is_complex(to)) return false;
  if (is_floating(from) && is_integral(to, true)) return false;
  if (from != kBool && to == kBool) return false;
  return true;
}

// ---------------------------------------------------------------- shapes
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = 0; i < n; i++) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, "The size of tensor a (", da, ") must match the size of tensor b (", db,
                ") at non-singleton dimension ", i);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void resize_output(const Tensor& out, IntArrayRef shape) {
  if (out.sizes() == shape) return;
  for (int64_t s : shape) EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", shape);
  auto strides = contiguous_strides(shape);
  int64_t need = storage_nbytes(shape, strides, out.storage_offset(), out.element_size());
  TensorImpl* impl = out.impl();
  if (size_t(need) > impl->storage()->nbytes()) impl->storage()->reset_memory(size_t(need));
  impl->set_sizes_and_strides(shape, strides, out.storage_offset());
}

static const char* cpp_type_name(ScalarType t) {  // how PyTorch's messages name dtypes (C++ types)
  switch (t) {
    case kByte: return "unsigned char";
    case kChar: return "signed char";
    case kShort: return "short int";
    case kInt: return "int";
    case kLong: return "long int";
    case kHalf: return "c10::Half";
    case kFloat: return "float";
    case kDouble: return "double";
    case kBool: return "bool";
    case kBFloat16: return "c10::BFloat16";
    case kComplexFloat: return "c10::complex<float>";
    case kComplexDouble: return "c10::complex<double>";
    case ScalarType::Undefined: break;
  }
  return "undefined";
}

void check_scalar_fits(const Scalar& s, ScalarType t) {
  if (is_complex(t)) return;
  // a complex number goes into a real dtype only when its imaginary part is zero (PyTorch's check)
  EMBER_CHECK(!s.is_complex() || s.imag() == 0, "value cannot be converted to type ",
              t == kDouble ? "double" : t == kFloat ? "float" : cpp_type_name(t), " without overflow");
  if (t == kBool || s.is_bool()) return;
  double lo = 0, hi = 0;
  const char* name = "";
  switch (t) {
    case kByte: lo = 0; hi = 255; name = "uint8_t"; break;
    case kChar: lo = -128; hi = 127; name = "int8_t"; break;
    case kShort: lo = -32768; hi = 32767; name = "int16_t"; break;
    case kInt: lo = -2147483648.0; hi = 2147483647.0; name = "int"; break;
    case kLong: lo = -9223372036854775808.0; hi = 9223372036854775807.0; name = "int64_t"; break;
    case kHalf: lo = -65504.0; hi = 65504.0; name = "c10::Half"; break;
    case kBFloat16: lo = -3.3895313892515355e38; hi = 3.3895313892515355e38; name = "c10::BFloat16"; break;
    case kFloat: lo = -3.4028234663852886e38; hi = 3.4028234663852886e38; name = "float"; break;
    case kDouble: return;
    case kBool: return;  // returned above; listed so that a new dtype is a -Wswitch error here
    case kComplexFloat: case kComplexDouble: return;
    case ScalarType::Undefined: return;
  }
  bool bad;
  if (s.is_floating() || s.is_complex()) {
    double d = s.to_double();
    if (is_floating(t)) bad = std::isfinite(d) && (d < lo || d > hi);
    else bad = !(d >= lo && d <= hi);  // NaN and infinities included
  } else {
    int64_t v = s.to_long();
    if (t == kLong) return;
    bad = t == kByte ? (v > 255 || v < -255) : (double(v) < lo || double(v) > hi);
  }
  EMBER_CHECK(!bad, "value cannot be converted to type ", name, " without overflow");
}

void check_out_dtype(const Tensor& out, ScalarType expected) {
  EMBER_CHECK(out.dtype() == expected, "Expected out tensor to have dtype ", cpp_type_name(expected), ", but got ",
              cpp_type_name(out.dtype()), " instead");
}

const Tensor& copy_to_out(const Tensor& out, const Tensor& result, bool exact_dtype) {
  // an out= tensor on another device would be written by a cross-device copy: PyTorch refuses it
  if (EMBER_UNLIKELY(out.device() != result.device())) fail_device_mismatch("out=", result.device(), out.device());
  if (exact_dtype) {
    std::string want = dtype_cname(result.dtype()), got = dtype_cname(out.dtype());
    for (auto& c : want) c = char(std::tolower(c));
    for (auto& c : got) c = char(std::tolower(c));
    EMBER_CHECK(out.dtype() == result.dtype(), "Expected out tensor to have dtype ", want, ", but got ", got, " instead");
  } else {
    EMBER_CHECK(can_cast(result.dtype(), out.dtype()), "result type ", result.dtype(),
                " can't be cast to the desired output type ", out.dtype());
  }
  resize_output(out, result.sizes());
  return out.copy_(result);
}

namespace {
bool has_internal_overlap(const Tensor& t) {
  if (t.numel() == 0) return false;
  for (int64_t i = 0; i < t.dim(); i++)
    if (t.strides()[i] == 0 && t.sizes()[i] > 1) return true;
  return false;
}
// Byte range [lo, hi) touched by t.
std::pair<uintptr_t, uintptr_t> byte_range(const Tensor& t) {
  uintptr_t lo = uintptr_t(t.data_ptr()), hi = lo;
  int64_t span = 0;
  for (int64_t i = 0; i < t.dim(); i++) span += (t.sizes()[i] - 1) * t.strides()[i];
  hi = lo + uintptr_t(span + 1) * uintptr_t(t.element_size());
  return {lo, hi};
}
}  // namespace

bool non_overlapping_and_dense(const Tensor& t) {
  const int64_t nd = t.dim();
  DimVector perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return t.strides()[a] < t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t d : perm) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

namespace {
// How two tensors' elements overlap, as PyTorch's get_overlap_status decides it: only two dense blocks
// are compared; interleaved strided views are "too hard" (x[:, 1:3] written from x[:, :2]).
enum class Overlap { None, Full, Partial, TooHard };
Overlap overlap_of(const Tensor& a, const Tensor& b) {
  if (a.is_same(b)) return Overlap::Full;
  if (a.numel() == 0 || b.numel() == 0) return Overlap::None;
  if (a.impl()->storage() != b.impl()->storage() || a.is_meta()) return Overlap::None;
  if (!non_overlapping_and_dense(a) || !non_overlapping_and_dense(b)) return Overlap::TooHard;
  if (a.data_ptr() == b.data_ptr() && a.strides() == b.strides() && a.sizes() == b.sizes()) return Overlap::Full;
  auto [a0, a1] = byte_range(a);
  auto [b0, b1] = byte_range(b);
  return a1 <= b0 || b1 <= a0 ? Overlap::None : Overlap::Partial;
}

[[noreturn]] void fail_overlap() {
  EMBER_FAIL(Runtime, "unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
             "single memory location. Please clone() the tensor before performing the operation.");
}
}  // namespace

void check_no_overlap(const Tensor& out, const Tensor& in) {
  if (in.defined() && overlap_of(out, in) == Overlap::Partial) fail_overlap();
}

void check_out_shares_nothing(const Tensor& out, const Tensor& in) {
  if (!in.defined()) return;
  const Overlap o = overlap_of(out, in);
  if (o == Overlap::Full || o == Overlap::Partial) fail_overlap();
}

void fail_device_mismatch(const char* op, Device a, Device b) {
  EMBER_FAIL(Runtime, "Expected all tensors to be on the same device, but found at least two devices, ", a, " and ", b,
             "! (when checking arguments for ", op, ")");
}

void check_same_device(const char* op, Device device, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors)
    if (t->defined() && t->device() != device) fail_device_mismatch(op, device, t->device());
}

Tensor empty_like_preserve(const Tensor& t, ScalarType dtype, std::optional<Device> device) {
  const int64_t nd = t.dim();
  const Device dev = device ? *device : t.device();
  if (t.is_contiguous() || nd <= 1) return empty_tensor(t.sizes(), dtype, dev);
  DimVector perm(nd);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return t.strides()[a] > t.strides()[b]; });
  int64_t expected = 1;
  for (int64_t k = nd - 1; k >= 0; k--) {
    int64_t d = perm[k];
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return empty_tensor(t.sizes(), dtype, dev);  // not dense: contiguous
    expected *= t.sizes()[d];
  }
  DimVector st(nd);
  int64_t s = 1;
  for (int64_t k = nd - 1; k >= 0; k--) {
    st[perm[k]] = s;
    s *= std::max<int64_t>(t.sizes()[perm[k]], 1);
  }
  Tensor r = empty_tensor(t.sizes(), dtype, dev);
  r.impl()->set_sizes_and_strides(t.sizes(), st, 0);
  return r;
}

// ---------------------------------------------------------------- memory formats
namespace {
// dims from fastest to slowest: C, W, H(, D), N
DimVector channels_last_order(int64_t nd) { return nd == 4 ? DimVector{1, 3, 2, 0} : DimVector{1, 4, 3, 2, 0}; }
}  // namespace

bool is_contiguous_in(const Tensor& t, MemoryFormat mf) {
  if (mf == MemoryFormat::Contiguous || mf == MemoryFormat::Preserve) return t.is_contiguous();
  const int64_t want = mf == MemoryFormat::ChannelsLast ? 4 : 5;
  if (t.dim() != want) return false;
  int64_t expected = 1;
  for (int64_t d : channels_last_order(want)) {
    if (t.sizes()[d] == 1) continue;
    if (t.strides()[d] != expected) return false;
    expected *= t.sizes()[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(const Tensor& t) {
  if (t.is_contiguous() || t.is_sparse()) return MemoryFormat::Contiguous;
  if (t.dim() == 4 && is_contiguous_in(t, MemoryFormat::ChannelsLast)) return MemoryFormat::ChannelsLast;
  if (t.dim() == 5 && is_contiguous_in(t, MemoryFormat::ChannelsLast3d)) return MemoryFormat::ChannelsLast3d;
  return MemoryFormat::Contiguous;
}

Tensor to_memory_format(const Tensor& r, MemoryFormat mf) {
  if (mf == MemoryFormat::Contiguous || mf == MemoryFormat::Preserve || is_contiguous_in(r, mf)) return r;
  if (r.dim() != (mf == MemoryFormat::ChannelsLast ? 4 : 5)) return r;
  Tensor out = empty_in_format(r.sizes(), r.dtype(), r.device(), mf);
  if (r.numel()) ember::copy_(out, r);
  return out;
}

Tensor empty_in_format(IntArrayRef sizes, ScalarType dtype, Device device, MemoryFormat mf) {
  Tensor r = empty_tensor(sizes, dtype, device);
  if (mf != MemoryFormat::ChannelsLast && mf != MemoryFormat::ChannelsLast3d) return r;
  const int64_t want = mf == MemoryFormat::ChannelsLast ? 4 : 5;
  EMBER_CHECK(int64_t(sizes.size()) == want, "required rank ", want, " tensor to use ",
              want == 4 ? "channels_last" : "channels_last_3d", " format");
  DimVector st(want);
  int64_t s = 1;
  for (int64_t d : channels_last_order(want)) {
    st[d] = s;
    s *= std::max<int64_t>(sizes[size_t(d)], 1);
  }
  r.impl()->set_sizes_and_strides(sizes, st, 0);
  return r;
}

// ---------------------------------------------------------------- the iterator
TensorIter::TensorIter(TensorIterConfig& cfg) {
  ntensors_ = cfg.ninputs + 1;
  compute_shape(cfg);
  compute_device(cfg);
  compute_types(cfg);
  allocate_or_check_output(cfg);
  reorder_and_coalesce();
}

void TensorIter::compute_shape(TensorIterConfig& cfg) {
  if (cfg.ninputs == 0) full_shape_ = DimVector(cfg.out.sizes());
  for (int i = 0; i < cfg.ninputs; i++) {
    EMBER_CHECK(cfg.inputs[i].defined(), cfg.name, "(): expected a defined tensor for argument ", i);
    full_shape_ = i == 0 ? DimVector(cfg.inputs[0].sizes()) : broadcast_shapes(full_shape_, cfg.inputs[i].sizes());
  }
  // An in-place output is not resized: it takes part in broadcasting (x.copy_(row) fills every
  // row of x), and allocate_or_check_output then demands the result shape be exactly its own.
  if (cfg.mode == OutMode::Inplace && cfg.ninputs > 0) full_shape_ = broadcast_shapes(full_shape_, cfg.out.sizes());
  numel_ = prod(full_shape_);
}

// One device for all operands: that of the output (when given) or of the first input that is not a
// CPU scalar. A CPU 0-d tensor may join an op on another device, as in PyTorch (compute_types
// moves it there once its dtype is settled).
void TensorIter::compute_device(TensorIterConfig& cfg) {
  bool fixed = cfg.mode != OutMode::Functional;
  device_ = fixed ? cfg.out.device() : Device();
  for (int i = 0; i < cfg.ninputs; i++) {
    const Tensor& in = cfg.inputs[i];
    const Device d = in.device();
    if (d.is_cpu() && in.dim() == 0) continue;  // a CPU scalar rides along
    if (!fixed) {  // the first input that is not a CPU scalar decides
      device_ = d;
      fixed = true;
    } else if (EMBER_UNLIKELY(d != device_)) {
      fail_device_mismatch(cfg.name, device_, d);
    }
  }
  // A GPU kernel cannot read a CPU scalar's memory: it rides along as a 0-d device tensor (still a
  // wrapped number for type promotion), written by a fill whose value travels as a kernel argument, so
  // no host-to-device copy (a pageable one waits for staging) sits on the per-op path. PyTorch passes
  // such scalars to the op's kernel itself, which saves the fill's launch too.
  if (EMBER_UNLIKELY(device_.type == DeviceType::CUDA)) {
    for (int i = 0; i < cfg.ninputs; i++) {
      Tensor& in = cfg.inputs[i];
      if (!in.defined() || !in.device().is_cpu()) continue;
      const bool wrapped = in.impl()->is_wrapped_number();
      if (is_complex(in.dtype())) {
        in = in.to(device_);  // (the CUDA fill has no complex form)
      } else {
        Tensor on_device = empty_tensor({}, in.dtype(), device_);
        on_device.fill_(in.item());
        in = on_device;
      }
      in.impl()->set_wrapped_number(wrapped);
    }
  }
}

void TensorIter::compute_types(TensorIterConfig& cfg) {
  ScalarType common;
  if (cfg.ninputs == 0) {
    common = cfg.out.dtype();
  } else if (cfg.force_dtype != ScalarType::Undefined) {
    common = cfg.force_dtype;
  } else {
    common = result_type(cfg.inputs, cfg.ninputs);
    if (cfg.promote_int_to_float && !is_floating(common) && !is_complex(common)) common = default_dtype();
  }
  common_dtype_ = common;
  const bool widen_in_kernel = cfg.cpu_widens_reduced_float && device_.is_cpu() && is_reduced_float(common);
  compute_dtype_ = (is_reduced_float(common) && !cfg.allow_reduced_float && !widen_in_kernel) ? kFloat : common;
  ScalarType out_dtype = cfg.result_bool ? kBool : cfg.result_real ? to_real_dtype(common) : common;
  if (cfg.mode == OutMode::Out && cfg.out_dtype_must_match) {
    EMBER_CHECK(cfg.out.dtype() == out_dtype, "Found dtype ", cfg.out.dtype(), " but expected ", out_dtype);
  }
  if (cfg.mode != OutMode::Functional) {
    EMBER_CHECK(can_cast(out_dtype, cfg.out.dtype()), "result type ", out_dtype,
                " can't be cast to the desired output type ", cfg.out.dtype());
  }
  dtypes_[0] = cfg.result_bool ? kBool : cfg.result_real ? to_real_dtype(compute_dtype_) : compute_dtype_;
  for (int i = 0; i < cfg.ninputs; i++) {
    Tensor& in = cfg.inputs[i];
    // An input of another dtype is first cast to the common dtype, as PyTorch promotes: with a
    // half/bfloat16 result, x_bf16 - 4.3263 subtracts bfloat16(4.3263) (then computes in float).
    auto cast = [&](ScalarType t) {  // (the input as given is kept for the overlap check)
      if (!uncast_[i + 1].defined()) uncast_[i + 1] = in;
      in = ember::to_dtype(in, t, false);
    };
    const bool rounded = cfg.round_inputs_to_common && i != cfg.unrounded_input;
    if (cfg.promote_inputs && rounded && in.dtype() != common && compute_dtype_ != common) cast(common);
    // (the widening kernel reads an unrounded input as float: its dtype tells the kernel that PyTorch took its
    // single-value path, where floor_divide computes in float)
    const ScalarType input_dtype = widen_in_kernel && !rounded ? kFloat : compute_dtype_;
    if (cfg.promote_inputs && in.dtype() != input_dtype) cast(input_dtype);
    if (EMBER_UNLIKELY(in.device() != device_)) in = in.to(device_);  // a CPU scalar (compute_device)
    ops_[i + 1] = in;
    dtypes_[i + 1] = in.dtype();
  }
  common_dtype_ = out_dtype == kBool && cfg.result_bool ? kBool : cfg.result_real ? out_dtype : common;
}

void TensorIter::allocate_or_check_output(TensorIterConfig& cfg) {
  ScalarType out_dtype = cfg.result_bool ? kBool : common_dtype_;
  if (cfg.mode == OutMode::Functional) {
    // Keep the layout of a same-shaped, permuted input (e.g. a transposed operand), as PyTorch does.
    user_out_ = Tensor();
    for (int i = 1; i < ntensors_; i++)
      if (ops_[i].sizes() == full_shape_.ref() && !ops_[i].is_contiguous() && ops_[i].dim() > 1) {
        user_out_ = empty_like_preserve(ops_[i], out_dtype);
        break;
      }
    if (!user_out_.defined()) user_out_ = empty_tensor(full_shape_, out_dtype, device_);
  } else {
    user_out_ = cfg.out;
    if (cfg.mode == OutMode::Inplace) {
      EMBER_CHECK(user_out_.sizes() == full_shape_.ref(), "output with shape ", user_out_.sizes(),
                  " doesn't match the broadcast shape ", full_shape_.ref());
    } else {
      resize_output(user_out_, full_shape_);
    }
    EMBER_CHECK(!cfg.check_internal_overlap || !has_internal_overlap(user_out_),
                "unsupported operation: more than one element of the written-to tensor refers to a single memory "
                "location. Please clone() the tensor before performing the operation.");
    // (against the inputs as given: a cast copy would hide that an input aliases the output)
    for (int i = 1; i < ntensors_; i++) check_no_overlap(user_out_, uncast_[i].defined() ? uncast_[i] : ops_[i]);
    user_out_.impl()->bump_version();
  }
  // The kernel writes ops_[0]; a temporary when the user's output has another dtype.
  if (user_out_.dtype() == dtypes_[0]) ops_[0] = user_out_;
  else ops_[0] = empty_tensor(full_shape_, dtypes_[0], device_);
}

void TensorIter::reorder_and_coalesce() {
  const int nd = int(full_shape_.size());
  const int nt = ntensors_;
  // Per-operand byte strides in logical order, 0 for broadcast dims.
  DimVector st[kMaxOperands];
  for (int k = 0; k < nt; k++) {
    const Tensor& t = ops_[k];
    st[k].resize(nd, 0);
    int off = nd - int(t.dim());
    int64_t isz = t.element_size();
    // an empty operand is never read: its strides (which may be huge, e.g. a [0, 2**62] expand) don't
    // matter, and stride * itemsize could overflow
    const bool empty = t.numel() == 0;
    for (int d = 0; d < int(t.dim()); d++)
      st[k][off + d] = t.sizes()[d] == 1 || empty ? 0 : t.strides()[d] * isz;
    data_[k] = t.is_meta() ? nullptr : static_cast<char*>(t.data_ptr());  // meta: the stub does nothing
  }
  // Order dims fastest-first by the output's strides (then inputs'), a stable insertion sort
  // like ATen's reorder_dimensions.
  DimVector perm(nd);
  for (int i = 0; i < nd; i++) perm[i] = nd - 1 - i;  // default: reversed logical order
  auto should_swap = [&](int64_t a, int64_t b) {  // true if dim a should come after dim b
    for (int k = 0; k < nt; k++) {
      int64_t sa = st[k][a], sb = st[k][b];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa > sb;
    }
    return false;
  };
  for (int i = 1; i < nd; i++) {
    for (int j = i; j > 0 && should_swap(perm[j - 1], perm[j]); j--) std::swap(perm[j - 1], perm[j]);
  }
  shape_.resize(nd);
  for (int k = 0; k < nt; k++) strides_[k].resize(nd);
  for (int i = 0; i < nd; i++) {
    shape_[i] = full_shape_[perm[i]];
    for (int k = 0; k < nt; k++) strides_[k][i] = st[k][perm[i]];
  }
  // Coalesce dim i+1 into i when every operand steps through them as one.
  if (nd > 1) {
    int out = 0;
    for (int i = 1; i < nd; i++) {
      int64_t merged;  // an empty shape's other dims can multiply past int64: those stay apart
      bool can = (shape_[out] == 1 || shape_[i] == 1) && !mul_overflows(shape_[out], shape_[i], &merged);
      if (!can) {
        can = true;
        for (int k = 0; k < nt; k++)
          if (int64_t span; mul_overflows(strides_[k][out], shape_[out], &span) || span != strides_[k][i]) {
            can = false;
            break;
          }
        can = can && !mul_overflows(shape_[out], shape_[i], &merged);
      }
      if (can) {
        if (shape_[out] == 1) for (int k = 0; k < nt; k++) strides_[k][out] = strides_[k][i];
        shape_[out] = merged;
      } else {
        out++;
        shape_[out] = shape_[i];
        for (int k = 0; k < nt; k++) strides_[k][out] = strides_[k][i];
      }
    }
    shape_.resize(out + 1);
    for (int k = 0; k < nt; k++) strides_[k].resize(out + 1);
  }
}

bool TensorIter::is_contiguous() const {
  if (ndim() > 1) return false;
  if (ndim() == 0) return true;
  for (int k = 0; k < ntensors_; k++)
    if (strides_[k][0] != itemsize(dtypes_[k])) return false;
  return true;
}

void TensorIter::serial_for_each(LoopRef loop, int64_t begin, int64_t end) const {
  const int nt = ntensors_, nd = ndim();
  char* ptrs[kMaxOperands];
  int64_t inner_strides[kMaxOperands];
  if (nd == 0) {
    for (int k = 0; k < nt; k++) { ptrs[k] = data_[k]; inner_strides[k] = 0; }
    if (end > begin) loop(ptrs, inner_strides, 1);
    return;
  }
  for (int k = 0; k < nt; k++) inner_strides[k] = strides_[k][0];
  if (nd == 1) {
    for (int k = 0; k < nt; k++) ptrs[k] = data_[k] + begin * strides_[k][0];
    loop(ptrs, inner_strides, end - begin);
    return;
  }
  // Multi-dim counter starting at `begin`.
  int64_t counter[64];
  DimVector big;
  int64_t* ctr = counter;
  if (nd > 64) { big.resize(nd); ctr = big.data(); }
  int64_t rem = begin;
  for (int d = 0; d < nd; d++) { ctr[d] = rem % shape_[d]; rem /= shape_[d]; }
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < nt; k++) {
      char* p = data_[k];
      for (int d = 0; d < nd; d++) p += ctr[d] * strides_[k][d];
      ptrs[k] = p;
    }
    int64_t n = std::min(shape_[0] - ctr[0], end - pos);
    loop(ptrs, inner_strides, n);
    pos += n;
    ctr[0] += n;
    for (int d = 0; d < nd - 1 && ctr[d] >= shape_[d]; d++) { ctr[d] = 0; ctr[d + 1]++; }
  }
}

void TensorIter::for_each(LoopRef loop, int64_t grain) const {
  if (numel_ == 0) return;
  if (numel_ < grain || get_num_threads() == 1) {
    serial_for_each(loop, 0, numel_);
    return;
  }
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
}

Tensor TensorIter::finish() {
  if (!ops_[0].is_same(user_out_) && numel_ > 0) {
    // A half/bfloat16 result computed in float is rounded to its dtype first, then cast to the
    // output's: float16 + float16 written to a float64 out= holds float16 values, as in PyTorch.
    if (dtypes_[0] != common_dtype_ && is_reduced_float(common_dtype_) && user_out_.dtype() != common_dtype_)
      user_out_.copy_(ops_[0].to(common_dtype_));
    else
      user_out_.copy_(ops_[0]);
  }
  return user_out_;
}

}  // namespace ember
