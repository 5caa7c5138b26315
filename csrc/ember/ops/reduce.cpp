// Reductions. Every reduction reshapes its input to a contiguous [outer, reduced, inner] block
// (no copy when the reduced dims are already a contiguous run of a contiguous tensor, else one
// permuting copy) and calls one kernel; composites (mean, var, norm, logsumexp) build on them.
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "ember/core/checked_math.h"
#include "ember/autograd/formulas.h"
#include "ember/core/complex_arith.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/kernels/kernels.h"

namespace ember::native {

namespace {

std::vector<bool> reduce_mask(const Tensor& self, OptionalIntArrayRef dim, const char* name) {
  int64_t nd = self.dim();
  std::vector<bool> mask(size_t(std::max<int64_t>(nd, 1)), false);
  if (!dim || dim->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dim) {
    int64_t w = wrap_dim(d, nd);
    EMBER_CHECK(!mask[w], "dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  (void)name;
  return mask;
}

struct Reduction {
  Tensor in;           // contiguous [outer, reduced, inner] in the compute dtype
  ReduceShape sh;
  DimVector out_shape;  // the result's shape (keepdim honoured)
};

Reduction prepare(const Tensor& self, const std::vector<bool>& mask, bool keepdim, ScalarType cd) {
  Reduction r;
  Tensor x = self.dim() == 0 ? self.reshape({1}) : self;
  if (x.dtype() != cd) x = x.to(cd);
  const int64_t nd = x.dim();
  int64_t first = -1, last = -1;
  bool block = true;
  for (int64_t d = 0; d < nd; d++) {
    if (!mask[d]) continue;
    if (first < 0) first = d;
    else if (last != d - 1) block = false;
    last = d;
  }
  for (int64_t d = 0; d < nd; d++) {
    if (!mask[d]) r.out_shape.push_back(x.sizes()[d]);
    else if (keepdim) r.out_shape.push_back(1);
  }
  if (self.dim() == 0) r.out_shape.clear();
  // an empty input's other dims can multiply past int64 ([0, 2**31, 2**32]): checked products
  int64_t reduced = 1;
  for (int64_t d = 0; d < nd; d++)
    if (mask[d]) reduced = checked_mul(reduced, x.sizes()[d], "reduction: numel");
  if (block && x.is_contiguous()) {
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < first; d++) outer = checked_mul(outer, x.sizes()[d], "reduction: numel");
    for (int64_t d = last + 1; d < nd; d++) inner = checked_mul(inner, x.sizes()[d], "reduction: numel");
    r.in = x;
    r.sh = {outer, reduced, inner};
    return r;
  }
  DimVector perm;
  int64_t outer = 1;
  for (int64_t d = 0; d < nd; d++)
    if (!mask[d]) { perm.push_back(d); outer = checked_mul(outer, x.sizes()[d], "reduction: numel"); }
  for (int64_t d = 0; d < nd; d++)
    if (mask[d]) perm.push_back(d);
  r.in = x.permute(perm).contiguous();
  r.sh = {outer, reduced, 1};
  return r;
}

// Runs the kernel; returns values shaped as the result (indices too when asked).
const char* reduce_name(ReduceKernel k) {
  switch (k) {
    case ReduceKernel::Sum: return "sum";
    case ReduceKernel::Prod: return "prod";
    case ReduceKernel::Max: return "max";
    case ReduceKernel::Min: return "min";
    case ReduceKernel::ArgMax: return "argmax";
    case ReduceKernel::ArgMin: return "argmin";
    case ReduceKernel::All: return "all";
    case ReduceKernel::Any: return "any";
    case ReduceKernel::SumSquares: return "linalg.vector_norm";
  }
  return "reduce";
}

Tensor run(ReduceKernel k, const Reduction& red, Tensor* indices = nullptr) {
  const Device dev = red.in.device();
  auto kernel = reduce_kernel_stub(dev, reduce_name(k));  // before allocating: no kernel, no work
  // (the CPU sums half/bfloat16 input into float: sum_compute_dtype)
  const ScalarType vals_dtype = k == ReduceKernel::Sum && is_reduced_float(red.in.dtype()) ? kFloat : red.in.dtype();
  Tensor vals = empty_tensor(red.out_shape, vals_dtype, dev);
  Tensor idx;
  if (indices) idx = empty_tensor(red.out_shape, kLong, dev);
  if (vals.numel() > 0)  // buffers, not loops: the per-ISA kernels take raw pointers (kernels.h)
    kernel(k, red.in.dtype(), red.in.kernel_data(), vals.kernel_data(), indices ? static_cast<int64_t*>(idx.kernel_data()) : nullptr,
           red.sh);
  if (indices) *indices = idx;
  return vals;
}

ScalarType sum_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), true) ? kLong : self.dtype();
}
ScalarType compute_of(ScalarType t) {
  if (is_reduced_float(t)) return kFloat;
  if (is_integral(t, true)) return kLong;
  return t;
}
// The dtype a sum's or mean's input is prepared in. On the CPU a half/bfloat16 input is summed by a
// kernel that widens it while reading (the values of summing its float copy, without making the copy).
// PyTorch's sum(x, dtype=half/bfloat16) first casts x to that dtype (cast_first); its mean does not.
ScalarType sum_compute_dtype(const Tensor& self, ScalarType out_t, bool cast_first) {
  const ScalarType cd = compute_of(out_t);
  if (cd != kFloat || !self.device().is_cpu()) return cd;
  if (cast_first && is_reduced_float(out_t)) return out_t;
  return is_reduced_float(self.dtype()) ? self.dtype() : cd;
}

const Tensor& write_out(const Tensor& out, const Tensor& result) {
  if (EMBER_UNLIKELY(out.device() != result.device())) fail_device_mismatch("out=", result.device(), out.device());
  EMBER_CHECK(can_cast(result.dtype(), out.dtype()) || result.dtype() == out.dtype(), "result type ", result.dtype(),
              " can't be cast to the desired output type ", out.dtype());
  resize_output(out, result.sizes());
  out.impl()->bump_version();
  return ember::copy_(out, result);
}

// amax/amin(out=): PyTorch wants the input's dtype exactly.
void check_same_dtype_out(const Tensor& self, const Tensor& out) {
  EMBER_CHECK(self.dtype() == out.dtype(), "Expected the dtype for input and out to match, but got ", self.dtype(),
              " for input's dtype and ", out.dtype(), " for out's dtype.");
}

void check_nonempty(const Tensor& self, const std::vector<bool>& mask, const char* name, bool full,
                    ErrorKind full_kind = ErrorKind::Runtime) {
  if (self.numel() != 0) return;
  if (full) {
    detail::fail(full_kind, name, "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                 "reduction dim with the 'dim' argument.");
  }
  for (int64_t d = 0; d < self.dim(); d++)
    EMBER_CHECK_KIND(!mask[d] || self.sizes()[d] != 0, Index, name, "(): Expected reduction dim ", d,
                     " to have non-zero size.");
}

}  // namespace

// A complex sum or mean is that of the real view's pairs: the same dims of view_as_real(self).
namespace {
Tensor complex_reduce(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype,
                      bool mean) {
  ScalarType out_t = dtype ? *dtype : self.dtype();
  EMBER_CHECK(is_complex(out_t), mean ? "mean" : "sum", "(): a complex input needs a complex dtype, got ", out_t);
  Tensor src = self.dtype() == out_t ? self : self.to(out_t);
  DimVector dims;
  if (self.dim() == 0) {  // nothing to reduce (a dim given must still be 0 or -1)
    if (dim) for (int64_t d : *dim) wrap_dim(d, 1);
    return src.clone();
  }
  if (dim && !dim->empty()) {
    for (int64_t d : *dim) dims.push_back(wrap_dim(d, self.dim()));
  } else {
    for (int64_t d = 0; d < self.dim(); d++) dims.push_back(d);
  }
  Tensor parts = native::view_as_real(src);
  Tensor r = mean ? native::mean(parts, IntArrayRef(dims), keepdim, std::nullopt)
                  : native::sum(parts, IntArrayRef(dims), keepdim, std::nullopt);
  return native::view_as_complex(r.contiguous());  // a fresh result: its pairs are the answer, no copy
}
}  // namespace

// ---- sum, mean, prod
Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (EMBER_UNLIKELY(is_complex(self.dtype()))) return complex_reduce(self, dim, keepdim, dtype, false);
  ScalarType out_t = sum_dtype(self, dtype);
  // sum(dtype=bool) first casts the input to bool (0.5 is True), as PyTorch casts to dtype first
  if (out_t == kBool && self.dtype() != kBool) return native::sum(self.to(kBool), dim, keepdim, kBool);
  auto red = prepare(self, reduce_mask(self, dim, "sum"), keepdim, sum_compute_dtype(self, out_t, true));
  return run(ReduceKernel::Sum, red).to(out_t);
}
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) { return native::sum(self, std::nullopt, false, dtype); }
const Tensor& sum_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                      std::optional<ScalarType> dtype) {
  return write_out(out, native::sum(self, dim, keepdim, dtype ? dtype : std::optional<ScalarType>(out.dtype())));
}

Tensor mean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (EMBER_UNLIKELY(is_complex(self.dtype()))) return complex_reduce(self, dim, keepdim, dtype, true);
  ScalarType out_t = dtype ? *dtype : self.dtype();
  EMBER_CHECK(is_floating(out_t), "mean(): could not infer output dtype. ",
              dtype ? "Optional dtype" : "Input dtype", " must be either a floating point or complex dtype. Got: ", out_t);
  auto mask = reduce_mask(self, dim, "mean");
  auto red = prepare(self, mask, keepdim, sum_compute_dtype(self, out_t, false));
  Tensor s = run(ReduceKernel::Sum, red);
  ember::div_(s, scalar_to_tensor(double(red.sh.reduced)));
  return s.to(out_t);
}
const Tensor& mean_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  return write_out(out, native::mean(self, dim, keepdim, dtype ? dtype : std::optional<ScalarType>(out.dtype())));
}

// Complex products and running products, by a plain loop over each run of the (moved-last) dim: unlike
// sums they don't split into the real view's parts. The products are PyTorch's textbook ones.
namespace {
Tensor complex_products(const Tensor& x, int64_t dim, bool running) {
  if (EMBER_UNLIKELY(!x.device().is_cpu())) no_kernel_for(running ? "cumprod" : "prod", x.device());  // host loops
  Tensor moved = x.movedim({dim}, {-1}).contiguous();
  DimVector out_sizes(moved.sizes());
  if (!running) out_sizes.pop_back();
  const int64_t n = moved.sizes().back();
  int64_t runs = 1;  // one run per position of the other dims (an empty run's product is 1)
  for (int64_t d = 0; d + 1 < moved.dim(); d++) runs *= moved.sizes()[d];
  Tensor out = empty_tensor(out_sizes, x.dtype(), x.device());
  EMBER_DISPATCH_WITH_COMPLEX(x.dtype(), running ? "cumprod" : "prod", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>>) {
      EMBER_FAIL(Runtime, "complex_products: expected a complex dtype");
    } else {
      const T* in = static_cast<const T*>(moved.data_ptr());
      T* o = static_cast<T*>(out.data_ptr());
      for (int64_t r = 0; r < runs; r++) {
        T acc(1, 0);
        for (int64_t i = 0; i < n; i++) {
          acc = textbook_mul(acc, in[r * n + i]);
          if (running) o[r * n + i] = acc;
        }
        if (!running) o[r] = acc;
      }
    }
  });
  return running ? out.movedim({-1}, {dim}) : out;
}
}  // namespace

static Tensor prod_impl(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (EMBER_UNLIKELY(is_complex(self.dtype()) || (dtype && is_complex(*dtype)))) {
    Tensor x = self.to(dtype ? *dtype : self.dtype());
    EMBER_CHECK(is_complex(x.dtype()), "prod(): a complex input needs a complex dtype, got ", x.dtype());
    if (!dim) return complex_products(x.reshape({-1}), 0, false).reshape({});
    const int64_t d = wrap_dim(*dim, std::max<int64_t>(x.dim(), 1));
    if (x.dim() == 0) return x.clone();
    Tensor r = complex_products(x, d, false);
    return keepdim ? r.unsqueeze(d) : r;
  }
  ScalarType out_t = sum_dtype(self, dtype);
  if (out_t == kBool && self.dtype() != kBool) return prod_impl(self.to(kBool), dim, keepdim, kBool);
  std::vector<bool> mask;
  if (dim) { int64_t d = *dim; mask = reduce_mask(self, IntArrayRef(&d, 1), "prod"); }
  else mask = reduce_mask(self, std::nullopt, "prod");
  auto red = prepare(self, mask, dim ? keepdim : false, compute_of(out_t));
  return run(ReduceKernel::Prod, red).to(out_t);
}
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) { return prod_impl(self, std::nullopt, false, dtype); }
Tensor prod(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  return prod_impl(self, dim, keepdim, dtype);
}
const Tensor& prod_out(const Tensor& out, const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  return write_out(out, prod_impl(self, dim, keepdim, dtype ? dtype : std::optional<ScalarType>(out.dtype())));
}

// ---- max/min family
static ScalarType extreme_compute(ScalarType t) { return is_reduced_float(t) ? kFloat : t; }

static Tensor amax_amin(const Tensor& self, IntArrayRef dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "amax" : "amin";
  auto mask = reduce_mask(self, dim, name);
  check_nonempty(self, mask, name, dim.empty());  // amax(empty) without dims: "specify the reduction dim"
  auto red = prepare(self, mask, keepdim, extreme_compute(self.dtype()));
  return run(is_max ? ReduceKernel::Max : ReduceKernel::Min, red).to(self.dtype());
}
Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) { return amax_amin(self, dim, keepdim, true); }
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) { return amax_amin(self, dim, keepdim, false); }
const Tensor& amax_out(const Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  check_same_dtype_out(self, out);
  return write_out(out, native::amax(self, dim, keepdim));
}
const Tensor& amin_out(const Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  check_same_dtype_out(self, out);
  return write_out(out, native::amin(self, dim, keepdim));
}

static Tensor full_extreme(const Tensor& self, bool is_max) {
  const char* name = is_max ? "max" : "min";
  auto mask = reduce_mask(self, std::nullopt, name);
  check_nonempty(self, mask, name, true);
  auto red = prepare(self, mask, false, extreme_compute(self.dtype()));
  return run(is_max ? ReduceKernel::Max : ReduceKernel::Min, red).to(self.dtype());
}
Tensor max(const Tensor& self) { return full_extreme(self, true); }
Tensor min(const Tensor& self) { return full_extreme(self, false); }

static std::tuple<Tensor, Tensor> dim_extreme(const Tensor& self, int64_t dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "max" : "min";
  auto mask = reduce_mask(self, IntArrayRef(&dim, 1), name);
  check_nonempty(self, mask, name, false);
  auto red = prepare(self, mask, keepdim, extreme_compute(self.dtype()));
  Tensor idx;
  Tensor vals = run(is_max ? ReduceKernel::Max : ReduceKernel::Min, red, &idx);
  return {vals.to(self.dtype()), idx};
}
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) { return dim_extreme(self, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) { return dim_extreme(self, dim, keepdim, false); }
Tensor max(const Tensor& self, const Tensor& other) { return ember::maximum(self, other); }
Tensor min(const Tensor& self, const Tensor& other) { return ember::minimum(self, other); }
const Tensor& max_out(const Tensor& out, const Tensor& self, const Tensor& other) { return ember::maximum_out(out, self, other); }
const Tensor& min_out(const Tensor& out, const Tensor& self, const Tensor& other) { return ember::minimum_out(out, self, other); }

static Tensor arg_extreme(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* name = is_max ? "argmax" : "argmin";
  EMBER_CHECK(self.dtype() != kBool, name, "(): does not support bool input");
  if (!dim) {
    check_nonempty(self, reduce_mask(self, std::nullopt, name), name, true, ErrorKind::Index);
    Tensor flat = self.reshape({-1});
    auto red = prepare(flat, {true}, false, extreme_compute(self.dtype()));
    Tensor idx;
    run(is_max ? ReduceKernel::ArgMax : ReduceKernel::ArgMin, red, &idx);
    if (keepdim) return idx.reshape(DimVector(size_t(self.dim()), 1));
    return idx;
  }
  int64_t d = *dim;
  auto mask = reduce_mask(self, IntArrayRef(&d, 1), name);
  check_nonempty(self, mask, name, false);
  auto red = prepare(self, mask, keepdim, extreme_compute(self.dtype()));
  Tensor idx;
  run(is_max ? ReduceKernel::ArgMax : ReduceKernel::ArgMin, red, &idx);
  return idx;
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(self, dim, keepdim, true); }
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(self, dim, keepdim, false); }
const Tensor& argmax_out(const Tensor& out, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  check_out_dtype(out, kLong);
  return write_out(out, native::argmax(self, dim, keepdim));
}
const Tensor& argmin_out(const Tensor& out, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  check_out_dtype(out, kLong);
  return write_out(out, native::argmin(self, dim, keepdim));
}

// ---- var, std
static double correction_of(std::optional<bool> unbiased, const std::optional<Scalar>& correction) {
  // PyTorch has no overload taking both (a TypeError from its argument parser)
  EMBER_CHECK_KIND(!(unbiased && correction), Type, "Cannot specify both unbiased and correction");
  if (correction) return correction->to_double();
  if (unbiased) return *unbiased ? 1.0 : 0.0;
  return 1.0;
}
static std::tuple<Tensor, Tensor> var_mean_impl(const Tensor& self, OptionalIntArrayRef dim, double correction,
                                                bool keepdim, const char* name) {
  EMBER_CHECK(is_differentiable_dtype(self.dtype()), name,
              "(): std and var only support floating point and complex dtypes");
  ScalarType cd = compute_of(self.dtype());
  Tensor x = self.to(cd);
  auto mask = reduce_mask(self, dim, name);
  int64_t n = 1;
  for (int64_t d = 0; d < std::max<int64_t>(self.dim(), 1); d++)
    if (mask[d]) n = checked_mul(n, self.dim() ? self.sizes()[d] : 1, "numel");
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < self.dim(); d++)
    if (mask[d]) dims.push_back(d);
  OptionalIntArrayRef dref = self.dim() ? OptionalIntArrayRef(IntArrayRef(dims)) : std::nullopt;
  Tensor m = native::mean(x, dref, true, std::nullopt);
  Tensor dev = ember::sub(x, m);
  // a complex deviation's square is |dev|^2: the variance is real
  Tensor sq = is_complex(cd) ? ember::abs(dev).square() : ember::mul(dev, dev);
  Tensor ss = native::sum(sq, dref, keepdim, std::nullopt);
  double denom = std::max(0.0, double(n) - correction);
  Tensor var = ember::div(ss, scalar_to_tensor(denom));
  Tensor mean_out = keepdim ? m : (self.dim() ? m.squeeze(dref) : m.reshape({}));
  return {var.to(to_real_dtype(self.dtype())), mean_out.to(self.dtype())};
}
Tensor var(const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased, bool keepdim,
           std::optional<Scalar> correction) {
  return std::get<0>(var_mean_impl(self, dim, correction_of(unbiased, correction), keepdim, "var"));
}
Tensor std(const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased, bool keepdim,
           std::optional<Scalar> correction) {
  return ember::sqrt(native::var(self, dim, unbiased, keepdim, correction));
}
const Tensor& var_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased,
                      bool keepdim, std::optional<Scalar> correction) {
  return write_out(out, native::var(self, dim, unbiased, keepdim, correction));
}
const Tensor& std_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased,
                      bool keepdim, std::optional<Scalar> correction) {
  return write_out(out, native::std(self, dim, unbiased, keepdim, correction));
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased,
                                    bool keepdim, std::optional<Scalar> correction) {
  return var_mean_impl(self, dim, correction_of(unbiased, correction), keepdim, "var_mean");
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, OptionalIntArrayRef dim, std::optional<bool> unbiased,
                                    bool keepdim, std::optional<Scalar> correction) {
  auto [v, m] = var_mean_impl(self, dim, correction_of(unbiased, correction), keepdim, "std_mean");
  return {ember::sqrt(v), m};
}

// ---- norm, logsumexp
Tensor norm(const Tensor& self, std::optional<Scalar> p_opt, OptionalIntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_CHECK(is_differentiable_dtype(self.dtype()),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ", self.dtype());
  // a complex input's norm is that of its moduli, a real tensor
  ScalarType out_t = to_real_dtype(dtype ? *dtype : self.dtype());
  double p = p_opt ? p_opt->to_double() : 2.0;
  Tensor xc = self.to(compute_of(dtype ? *dtype : self.dtype()));
  // (a real tensor's squares need no abs first: one pass over the input fewer for the 2-norm)
  Tensor x = p == 2 && !is_complex(xc.dtype()) ? xc : ember::abs(xc);
  if ((p < 0 || std::isinf(p)) && self.numel() == 0) {
    // max/min and negative powers have no identity: an empty reduction is an error
    std::ostringstream ps;
    ps << p;
    if (!dim || dim->empty())
      EMBER_FAIL(Runtime, "linalg.vector_norm cannot compute the ", ps.str(), " norm on an empty tensor because the "
                 "operation does not have an identity");
    for (int64_t d : *dim) {
      int64_t w = wrap_dim(d, self.dim());
      EMBER_CHECK(self.dim() == 0 || self.sizes()[w] != 0, "linalg.vector_norm cannot compute the ", ps.str(),
                  " norm on the dimension ", w, "because this dimension is empty and the operation does not have an "
                  "identity");
    }
  }
  Tensor r;
  if (std::isinf(p)) {
    r = p > 0 ? native::amax(x, dim ? *dim : IntArrayRef(), keepdim) : native::amin(x, dim ? *dim : IntArrayRef(), keepdim);
  } else if (p == 0) {
    r = native::sum(ember::ne(x, scalar_to_tensor(0.0)).to(x.dtype()), dim, keepdim, std::nullopt);
  } else if (p == 1) {
    r = native::sum(x, dim, keepdim, std::nullopt);
  } else if (p == 2 && x.device().is_cpu() && (x.dtype() == kFloat || x.dtype() == kDouble)) {
    // the squares summed as they are read (one pass, no squared copy); x is real here (a complex input's abs)
    auto red = prepare(x, reduce_mask(x, dim, "linalg.vector_norm"), keepdim, x.dtype());
    r = ember::sqrt(run(ReduceKernel::SumSquares, red));
  } else if (p == 2) {
    r = ember::sqrt(native::sum(ember::mul(x, x), dim, keepdim, std::nullopt));
  } else {
    r = ember::pow(native::sum(ember::pow(x, scalar_to_tensor(p)), dim, keepdim, std::nullopt), scalar_to_tensor(1.0 / p));
  }
  return r.to(out_t);
}
const Tensor& norm_out(const Tensor& out, const Tensor& self, std::optional<Scalar> p, OptionalIntArrayRef dim,
                       bool keepdim, std::optional<ScalarType> dtype) {
  Tensor r = native::norm(self, p, dim, keepdim, dtype);
  check_out_dtype(out, r.dtype());
  return write_out(out, r);
}

Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  if (is_complex(self.dtype())) {  // shifted by the largest real part, which bounds every |exp|
    Tensor m = native::amax(autograd::real_part(self.detach()), dim, true);
    m = ember::where(ember::isinf(m), ember::zeros_like(m), m);
    Tensor s = native::sum(ember::exp(ember::sub(self, m)), dim, keepdim, std::nullopt);
    Tensor shift = keepdim ? m : (dim.empty() ? m.reshape({}) : m.squeeze(dim));
    return ember::add(ember::log(s), shift);
  }
  Tensor x = is_floating(self.dtype()) ? self : self.to(default_dtype());
  if (x.numel() == 0) return ember::log(native::sum(ember::exp(x), dim, keepdim, std::nullopt));
  Tensor m = native::amax(x, dim, true);
  Tensor safe = ember::masked_fill(m, ember::isinf(m), 0);
  Tensor s = native::sum(ember::exp(ember::sub(x, safe)), dim, keepdim, std::nullopt);
  Tensor shift = keepdim ? safe : (dim.empty() ? safe.reshape({}) : safe.squeeze(dim));
  return ember::add(ember::log(s), shift);
}
const Tensor& logsumexp_out(const Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  return write_out(out, native::logsumexp(self, dim, keepdim));
}

// ---- all, any, count_nonzero
// The bool result; all()/any() of a uint8 tensor give uint8, out= takes bool or uint8.
static Tensor all_any_bool(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, bool all) {
  Tensor b = self.dtype() == kBool ? self : ember::ne(self, scalar_to_tensor(int64_t(0)));
  auto red = prepare(b, reduce_mask(self, dim, all ? "all" : "any"), keepdim, kBool);
  return run(all ? ReduceKernel::All : ReduceKernel::Any, red);
}
static Tensor all_any(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, bool all) {
  Tensor r = all_any_bool(self, dim, keepdim, all);
  return self.dtype() == kByte ? r.to(kByte) : r;
}
Tensor all(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) { return all_any(self, dim, keepdim, true); }
Tensor any(const Tensor& self, OptionalIntArrayRef dim, bool keepdim) { return all_any(self, dim, keepdim, false); }
const Tensor& all_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  EMBER_CHECK(out.dtype() == kBool || out.dtype() == kByte, "all only supports bool tensor for result, got: ",
              out.dtype());
  return write_out(out, all_any_bool(self, dim, keepdim, true));
}
const Tensor& any_out(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim) {
  EMBER_CHECK(out.dtype() == kBool || out.dtype() == kByte, "any only supports bool tensor for result, got: ",
              out.dtype());
  return write_out(out, all_any_bool(self, dim, keepdim, false));
}
Tensor count_nonzero(const Tensor& self, OptionalIntArrayRef dim) {
  return native::sum(ember::ne(self, scalar_to_tensor(int64_t(0))), dim, false, kLong);
}

// ---- scans
static Tensor scan(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool prod) {
  if (EMBER_UNLIKELY(prod && (is_complex(self.dtype()) || (dtype && is_complex(*dtype))))) {
    Tensor x = self.to(dtype ? *dtype : self.dtype());
    if (x.dim() == 0) return x.clone();
    return complex_products(x, wrap_dim(dim, x.dim()), true);
  }
  ScalarType out_t = sum_dtype(self, dtype);
  EMBER_CHECK_KIND(out_t != kBool || self.numel() == 0 || self.dim() == 0, NotImplemented, "\"", prod ? "cumprod" : "cumsum",
                   "_out_cpu\" not implemented for 'Bool'");
  ScalarType cd = compute_of(out_t);
  int64_t nd = self.dim();
  dim = wrap_dim(dim, nd);
  // dtype=bool casts the input first (0.5 is True), as PyTorch casts to dtype before scanning
  Tensor x = (out_t == kBool ? self.to(kBool) : self).to(cd);
  if (nd == 0) return x.clone().to(out_t);
  Tensor moved = x.movedim({dim}, {-1}).contiguous();
  Tensor y = empty_tensor(moved.sizes(), cd, moved.device());
  int64_t n = moved.sizes().back();
  if (moved.numel())  // raw buffers for the per-ISA scan kernel (kernels.h)
    scan_kernel_stub(moved.device(), prod ? "cumprod" : "cumsum")(prod, cd, moved.kernel_data(), y.kernel_data(), moved.numel() / std::max<int64_t>(n, 1), n);
  return y.movedim({-1}, {dim}).to(out_t).contiguous();
}
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  if (EMBER_UNLIKELY(is_complex(self.dtype()) || (dtype && is_complex(*dtype)))) {
    // a running sum of complex numbers is that of their parts: the same dim of the real view
    Tensor src = self.to(dtype ? *dtype : to_complex_dtype(to_real_dtype(self.dtype())));
    if (src.dim() == 0) return src.clone();
    int64_t d = wrap_dim(dim, src.dim());
    return native::view_as_complex(scan(native::view_as_real(src), d, std::nullopt, false).contiguous());
  }
  return scan(self, dim, dtype, false);
}
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) { return scan(self, dim, dtype, true); }
static void check_inplace_scan_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype && *dtype != self.dtype()) {
    EMBER_FAIL(Runtime, "Bad in-place call: input tensor dtype ", self.dtype(), " and output tensor dtype ", *dtype,
               " should match");
  }
}
const Tensor& cumsum_(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  check_inplace_scan_dtype(self, dtype);
  return ember::copy_(self, native::cumsum(self, dim, dtype ? dtype : std::optional<ScalarType>(self.dtype())));
}
const Tensor& cumprod_(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  check_inplace_scan_dtype(self, dtype);
  return ember::copy_(self, scan(self, dim, dtype ? dtype : std::optional<ScalarType>(self.dtype()), true));
}
const Tensor& cumsum_out(const Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return write_out(out, native::cumsum(self, dim, dtype ? dtype : std::optional<ScalarType>(out.dtype())));
}
const Tensor& cumprod_out(const Tensor& out, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return write_out(out, scan(self, dim, dtype ? dtype : std::optional<ScalarType>(out.dtype()), true));
}

// ---- nansum / nanmean: NaNs count as zero (and, for the mean, not at all). Composites: masked_fill
// gives the NaN positions a zero gradient.
Tensor nansum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  EMBER_CHECK(!is_complex(self.dtype()), "nansum on CPU does not support complex inputs");
  Tensor x = is_floating(self.dtype()) ? ember::masked_fill(self, ember::isnan(self), Scalar(0.0)) : self;
  return ember::sum(x, dim, keepdim, dtype);
}

Tensor nanmean(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType dt = dtype ? *dtype : self.dtype();
  EMBER_CHECK(is_floating(self.dtype()) && is_floating(dt), "nanmean(): expected input to have floating point or "
              "complex dtype but got ", dtype_cname(is_floating(self.dtype()) ? dt : self.dtype()));
  Tensor count = ember::sum(ember::logical_not(ember::isnan(self)), dim, keepdim, dt);
  return ember::div(native::nansum(self, dim, keepdim, dtype), count);
}

}  // namespace ember::native
