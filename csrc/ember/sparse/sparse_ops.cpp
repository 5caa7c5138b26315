// Sparse COO tensors and their ops (sparse_tensor.h, sparse_ops.h): everything is done on the
// indices and values with ordinary dense ops, so the dense kernels' checks and threads serve here too.
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/sparse/sparse_ops.h"
#include "ember/sparse/sparse_tensor.h"

namespace ember::sparse {

namespace {

DimVector zero_strides(size_t n) {
  DimVector z;
  z.resize(n, 0);
  return z;
}

}  // namespace

SparseTensorImpl::SparseTensorImpl(Tensor indices, Tensor values, IntArrayRef sizes, bool coalesced)
    : TensorImpl(StorageImpl::allocate(0, values.device()), values.dtype(), sizes, zero_strides(sizes.size()), 0),
      indices_(std::move(indices)),
      values_(std::move(values)),
      coalesced_(coalesced) {
  set_layout(Layout::SparseCoo);
}

void SparseTensorImpl::set_contents(Tensor indices, Tensor values, bool coalesced) {
  indices_ = std::move(indices);
  values_ = std::move(values);
  coalesced_ = coalesced;
  set_dtype(values_.dtype());
  bump_version();
}

SparseTensorImpl& impl_of(const Tensor& t) {
  EMBER_CHECK(t.is_sparse(), "expected a sparse COO tensor, but got a strided one");
  return static_cast<SparseTensorImpl&>(*t.impl());
}

Tensor make_coo(Tensor indices, Tensor values, IntArrayRef sizes, bool coalesced) {
  // a single entry (or none) is coalesced by definition
  coalesced = coalesced || values.size(0) <= 1;
  return Tensor(make_intrusive<SparseTensorImpl>(std::move(indices), std::move(values), sizes, coalesced));
}

void unsupported(const char* op) {
  EMBER_FAIL(NotImplemented, op, ": Ember has no sparse COO kernel for this op (an argument has layout "
             "sparse_coo); convert it with .to_dense() first");
}

namespace {

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << (t.is_sparse() ? "sparse " : "") << "tensor of size " << t.sizes() << " and dtype " << dtype_name(t.dtype());
  return os.str();
}

// Autograd does not record through sparse ops: refuse rather than silently drop a gradient.
void no_grad_through(const char* op, std::initializer_list<const Tensor*> ts) {
  if (!autograd::grad_enabled()) return;
  for (const Tensor* t : ts)
    EMBER_CHECK_KIND(!t->defined() || !autograd::requires_grad(*t), NotImplemented, op,
                     ": autograd through sparse COO tensors is not supported by Ember (an argument requires grad); "
                     "use .to_dense(), or run the op under no_grad()");
}

void check_same_size(const char* op, const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.sizes() == b.sizes(), op, ": operands must have the same size, but got ", describe(a), " and ",
              describe(b));
}

// One int64 row index per entry over the sparse dims (row-major), for sorting and hashing.
Tensor linear_index(const Tensor& indices, IntArrayRef sparse_sizes) {
  int64_t total;
  EMBER_CHECK(!numel_overflows(sparse_sizes, &total), "sparse COO tensor: the product of the sparse sizes ",
              sparse_sizes, " overflows int64");
  Tensor lin = ember::zeros({indices.size(1)}, TensorOptions(kLong).device(indices.device()));
  int64_t stride = 1;
  for (int64_t d = int64_t(sparse_sizes.size()) - 1; d >= 0; d--) {
    lin.add_(indices.select(0, d), Scalar(stride));
    stride *= sparse_sizes[size_t(d)];
  }
  return lin;
}

// The entries' positions as one index tensor per sparse dim: dense[index_tuple(indices)] is the
// elements the entries sit on (for index, index_put_).
std::vector<Tensor> index_tuple(const Tensor& indices) {
  std::vector<Tensor> rows;
  for (int64_t d = 0; d < indices.size(0); d++) rows.push_back(indices.select(0, d));
  return rows;
}

Tensor coalesce_impl(const Tensor& self) {
  auto& s = impl_of(self);
  if (s.coalesced()) return self;
  const Tensor& idx = s.indices();
  const Tensor& val = s.values();
  IntArrayRef sizes = self.sizes();
  DimVector sparse_sizes(IntArrayRef(sizes.data(), size_t(s.sparse_dim())));
  autograd::AutoGradMode no_grad(false);
  // the sorted unique row indices, and each entry's position among them: duplicates add up in
  // their original order (as the stable sort orders them)
  auto [uniq, inverse, counts] = ember::unique2(linear_index(idx, sparse_sizes), true, true, false);
  (void)counts;
  DimVector vshape(val.sizes());
  vshape[0] = uniq.numel();
  Tensor values = ember::zeros(vshape, TensorOptions(val.dtype()).device(val.device()));
  values.index_add_(0, inverse, val);
  // unravel the unique row indices back to one row per sparse dim
  std::vector<Tensor> rows(size_t(s.sparse_dim()));
  Tensor rest = uniq;
  for (int64_t d = s.sparse_dim() - 1; d >= 0; d--) {
    const int64_t n = sparse_sizes[size_t(d)];
    rows[size_t(d)] = ember::remainder(rest, Scalar(n));
    rest = ember::floor_divide(rest, Scalar(n));
  }
  Tensor indices = rows.empty() ? ember::zeros({0, uniq.numel()}, TensorOptions(kLong).device(idx.device()))
                                : ember::stack(rows, 0);
  return make_coo(indices, values, sizes, true);
}

// alpha * values (the values themselves for an integer alpha of 1)
Tensor times_alpha(const Tensor& values, const Scalar& alpha) {
  return alpha.is_integral(true) && alpha.to_long() == 1 ? values : ember::mul(values, scalar_to_tensor(alpha));
}

// Dense self (+)= alpha * sparse other, in place.
void add_sparse_into_dense(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  auto& o = impl_of(other);
  if (o.nnz() == 0) return;
  autograd::AutoGradMode no_grad(false);
  ember::index_put_(self, index_tuple(o.indices()), times_alpha(o.values(), alpha).to(self.dtype()), true);
}

// The result r of an in-place op written back into sparse self, refusing a result dtype self cannot
// hold. With same_entries (r has self's indices: a product or quotient by a number) the values
// change in place, so a detach()ed alias sharing them follows; otherwise self takes r's contents.
const Tensor& assign_result(const Tensor& self, const Tensor& r, bool same_entries) {
  auto& rs = impl_of(r);
  EMBER_CHECK(can_cast(rs.values().dtype(), self.dtype()), "result type ", dtype_name(rs.values().dtype()),
              " can't be cast to the desired output type ", dtype_name(self.dtype()));
  auto& ss = impl_of(self);
  if (same_entries) {
    autograd::AutoGradMode no_grad(false);
    ss.values().copy_(rs.values());
    self.impl()->bump_version();
  } else {
    ss.set_contents(rs.indices(), rs.values().to(self.dtype()), rs.coalesced());
  }
  return self;
}

// The values of sparse `sp` times (or divided by) dense `dense`: a 0-d tensor (or Python number)
// scales them; a dense tensor of sp's size multiplies each entry by its own element.
Tensor scaled_values(const char* op, const Tensor& sp, const Tensor& dense, bool divide,
                     std::optional<std::string_view> rounding_mode) {
  auto& s = impl_of(sp);
  if (dense.dim() == 0) return divide ? ember::div(s.values(), dense, rounding_mode) : ember::mul(s.values(), dense);
  EMBER_CHECK_KIND(!divide, NotImplemented, op, ": dividing a sparse COO tensor by a tensor that is not 0-d "
                   "is not supported (got ", describe(dense), ")");
  check_same_size(op, sp, dense);
  return ember::mul(s.values(), ember::index(dense, index_tuple(s.indices())));
}

}  // namespace

// ------------------------------------------------------------------ add / sub
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  no_grad_through("add", {&self, &other});
  check_same_size("add", self, other);
  if (!self.is_sparse()) {  // dense + sparse is dense
    ScalarType t = promote_types(self.dtype(), other.dtype());
    Tensor r = self.to(t, true);
    add_sparse_into_dense(r, other, alpha);
    return r;
  }
  EMBER_CHECK(other.is_sparse(), "add(sparse, dense) is not supported. Use add(dense, sparse) instead.");
  auto& a = impl_of(self);
  auto& b = impl_of(other);
  EMBER_CHECK(a.sparse_dim() == b.sparse_dim(), "add: expected same number of sparse dimensions, got ",
              a.sparse_dim(), " and ", b.sparse_dim());
  autograd::AutoGradMode no_grad(false);
  ScalarType t = promote_types(self.dtype(), other.dtype());
  // the union of the entries: duplicates add up when coalesced
  Tensor indices = ember::cat({a.indices(), b.indices()}, 1);
  Tensor values = ember::cat({a.values().to(t), times_alpha(b.values(), alpha).to(t)}, 0);
  return make_coo(indices, values, self.sizes(), false);
}

const Tensor& add_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  no_grad_through("add_", {&self, &other});
  check_same_size("add_", self, other);
  if (!self.is_sparse()) {
    EMBER_CHECK(can_cast(other.dtype(), self.dtype()), "result type ", dtype_name(promote_types(self.dtype(), other.dtype())),
                " can't be cast to the desired output type ", dtype_name(self.dtype()));
    add_sparse_into_dense(self, other, alpha);
    return self;
  }
  EMBER_CHECK(other.is_sparse(), "add_(sparse, dense) is not supported. Use add_(dense, sparse) instead.");
  return assign_result(self, sparse::add(self, other, alpha), false);
}

namespace {
Scalar negated(const Scalar& a) {
  if (a.is_complex()) return Scalar(-a.to_complex());
  return a.is_floating() ? Scalar(-a.to_double()) : Scalar(-a.to_long());
}
}  // namespace

Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) { return sparse::add(self, other, negated(alpha)); }
const Tensor& sub_(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return sparse::add_(self, other, negated(alpha));
}

// ------------------------------------------------------------------ mul / div / neg
Tensor mul(const Tensor& self, const Tensor& other) {
  no_grad_through("mul", {&self, &other});
  if (self.is_sparse() && other.is_sparse()) {
    // the entries both have: coalesced, their row indices come sorted, so the matches line up
    check_same_size("mul", self, other);
    autograd::AutoGradMode no_grad(false);
    Tensor a = coalesce_impl(self), b = coalesce_impl(other);
    auto &as = impl_of(a), &bs = impl_of(b);
    DimVector sparse_sizes(IntArrayRef(self.sizes().data(), size_t(as.sparse_dim())));
    Tensor la = linear_index(as.indices(), sparse_sizes), lb = linear_index(bs.indices(), sparse_sizes);
    Tensor ka = ember::nonzero(ember::isin(la, lb)).reshape({-1});
    Tensor kb = ember::nonzero(ember::isin(lb, la)).reshape({-1});
    Tensor values = ember::mul(ember::index_select(as.values(), 0, ka), ember::index_select(bs.values(), 0, kb));
    return make_coo(ember::index_select(as.indices(), 1, ka), values, self.sizes(), true);
  }
  const Tensor& sp = self.is_sparse() ? self : other;
  const Tensor& dense = self.is_sparse() ? other : self;
  autograd::AutoGradMode no_grad(false);
  auto& s = impl_of(sp);
  return make_coo(s.indices(), scaled_values("mul", sp, dense, false, std::nullopt), sp.sizes(), s.coalesced());
}

const Tensor& mul_(const Tensor& self, const Tensor& other) {
  EMBER_CHECK_KIND(self.is_sparse(), NotImplemented, "mul_: multiplying a dense tensor in place by a sparse COO one "
                   "is not supported; use mul()");
  return assign_result(self, sparse::mul(self, other), !other.is_sparse() && other.dim() == 0);
}

Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  no_grad_through("div", {&self, &other});
  EMBER_CHECK_KIND(self.is_sparse() && !other.is_sparse(), NotImplemented,
                   "div: only a sparse COO tensor divided by a dense 0-d tensor or a number is supported (got ",
                   describe(self), " and ", describe(other), ")");
  autograd::AutoGradMode no_grad(false);
  // a rounded quotient is not linear: duplicates are summed first
  Tensor src = rounding_mode ? coalesce_impl(self) : self;
  auto& s = impl_of(src);
  Tensor values = scaled_values("div", src, other, true, rounding_mode);
  return make_coo(s.indices(), values, self.sizes(), s.coalesced());
}

const Tensor& div_(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return assign_result(self, sparse::div(self, other, rounding_mode), !rounding_mode);
}

Tensor neg(const Tensor& self) {
  no_grad_through("neg", {&self});
  auto& s = impl_of(self);
  autograd::AutoGradMode no_grad(false);
  return make_coo(s.indices(), ember::neg(s.values()), self.sizes(), s.coalesced());
}

const Tensor& neg_(const Tensor& self) {
  auto& s = impl_of(self);
  autograd::AutoGradMode no_grad(false);
  s.values().neg_();  // in place: a detach()ed alias shares the values
  self.impl()->bump_version();
  return self;
}

// ------------------------------------------------------------------ reductions, copies
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  no_grad_through("sum", {&self});
  autograd::AutoGradMode no_grad(false);
  return ember::sum(impl_of(self).values(), dtype);
}

Tensor sum(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  if (!dim.has_value() || dim->size() == 0) return sparse::sum(self, dtype);
  no_grad_through("sum", {&self});
  auto& s = impl_of(self);
  const int64_t nd = self.dim(), sd = s.sparse_dim();
  std::vector<bool> reduce(size_t(std::max<int64_t>(nd, 1)), false);
  for (int64_t d : *dim) {
    int64_t w = wrap_dim(d, nd);
    EMBER_CHECK(!reduce[size_t(w)], "dim ", w, " appears multiple times in the list of dims");
    reduce[size_t(w)] = true;
  }
  autograd::AutoGradMode no_grad(false);
  Tensor values = dtype ? s.values().to(*dtype) : s.values();
  DimVector dense_dims;  // reduced dense dims, as dims of the values
  for (int64_t d = sd; d < nd; d++)
    if (reduce[size_t(d)]) dense_dims.push_back(d - sd + 1);
  if (!dense_dims.empty()) values = ember::sum(values, OptionalIntArrayRef(IntArrayRef(dense_dims)), keepdim, dtype);
  DimVector kept_rows, sizes;
  bool all_sparse_reduced = true;
  for (int64_t d = 0; d < sd; d++) {
    if (!reduce[size_t(d)]) {
      kept_rows.push_back(d);
      all_sparse_reduced = false;
    }
  }
  if (all_sparse_reduced) {  // a strided result: the entries' values summed
    Tensor r = ember::sum(values, OptionalIntArrayRef(IntArrayRef({0})), false, dtype);
    if (keepdim)
      for (int64_t d = 0; d < sd; d++) r = r.unsqueeze(d);
    return r;
  }
  std::vector<Tensor> rows;
  for (int64_t d = 0; d < sd; d++) {
    if (!reduce[size_t(d)]) rows.push_back(s.indices().select(0, d));
    else if (keepdim) rows.push_back(ember::zeros_like(s.indices().select(0, d)));
  }
  for (int64_t d = 0; d < nd; d++) {
    if (!reduce[size_t(d)]) sizes.push_back(self.size(d));
    else if (keepdim) sizes.push_back(1);
  }
  Tensor indices = ember::stack(rows, 0);
  return coalesce_impl(make_coo(indices, values, sizes, false));
}

namespace {
Tensor empty_sparse_like(const Tensor& self, IntArrayRef sizes, int64_t sparse_dim, const TensorOptions& options) {
  DimVector vshape;
  vshape.push_back(0);
  for (size_t d = size_t(sparse_dim); d < sizes.size(); d++) vshape.push_back(sizes[d]);
  const Device dev = options.device_ ? *options.device_ : self.device();
  return make_coo(ember::zeros({sparse_dim, 0}, TensorOptions(kLong).device(dev)),
                  ember::zeros(vshape, TensorOptions(options.dtype_or(self.dtype())).device(dev)), sizes, true);
}
}  // namespace

Tensor zeros_like(const Tensor& self, const TensorOptions& options, std::optional<MemoryFormat>) {
  return empty_sparse_like(self, self.sizes(), impl_of(self).sparse_dim(), options);
}

Tensor empty_like(const Tensor& self, const TensorOptions& options, std::optional<MemoryFormat>) {
  return empty_sparse_like(self, self.sizes(), impl_of(self).sparse_dim(), options);
}

Tensor new_zeros(const Tensor& self, IntArrayRef size, const TensorOptions& options) {
  return empty_sparse_like(self, size, int64_t(size.size()), options);
}

Tensor clone(const Tensor& self, std::optional<MemoryFormat>) {
  no_grad_through("clone", {&self});
  auto& s = impl_of(self);
  autograd::AutoGradMode no_grad(false);
  return make_coo(ember::clone(s.indices()), ember::clone(s.values()), self.sizes(), s.coalesced());
}

const Tensor& zero_(const Tensor& self) {
  auto& s = impl_of(self);
  DimVector vshape(s.values().sizes());
  vshape[0] = 0;
  const Device dev = s.values().device();
  s.set_contents(ember::zeros({s.sparse_dim(), 0}, TensorOptions(kLong).device(dev)),
                 ember::zeros(vshape, TensorOptions(self.dtype()).device(dev)), true);
  return self;
}

Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy) {
  if (dtype == self.dtype() && !copy) return self;
  no_grad_through("to", {&self});
  auto& s = impl_of(self);
  autograd::AutoGradMode no_grad(false);
  return make_coo(copy ? ember::clone(s.indices()) : s.indices(), ember::to_dtype(s.values(), dtype, copy),
                  self.sizes(), s.coalesced());
}

// ------------------------------------------------------------------ pow, norm, copy_, the values ops
void check_scalar_operand(const char* op, const Tensor& t) {
  if (!t.defined()) return;
  EMBER_CHECK_KIND(!t.is_sparse() && t.dim() == 0, NotImplemented, op, ": with a sparse COO input the other tensor "
                   "arguments must be dense 0-d (numbers), but got ", describe(t));
}

Tensor coalesced(const Tensor& self, const char* op) {
  no_grad_through(op, {&self});
  return coalesce_impl(self);
}

void check_coalesced(const char* op, const Tensor& self) {
  no_grad_through(op, {&self});
  EMBER_CHECK(impl_of(self).coalesced(), op, " requires coalesced input");
}

Tensor with_values(const Tensor& c, Tensor values) {
  return make_coo(impl_of(c).indices(), std::move(values), c.sizes(), true);
}

Tensor pow(const Tensor& self, const Tensor& exponent) {
  EMBER_CHECK(self.is_sparse() && !exponent.is_sparse() && exponent.dim() == 0,
              "pow: only a sparse COO tensor to a number power is supported (got ", describe(self), " and ",
              describe(exponent), ")");
  EMBER_CHECK(ember::gt(exponent, Scalar(0)).item().to_bool(), "pow: a sparse COO tensor's exponent must be "
              "positive (0 ** exponent must stay 0), but got ", exponent.item().to_double());
  return map_values("pow", self, [&](const Tensor& v) { return ember::pow(v, exponent); });
}

const Tensor& pow_(const Tensor& self, const Tensor& exponent) {
  (void)sparse::pow(self, exponent);  // the argument checks
  return map_values_("pow_", self, [&](const Tensor& v) { v.pow_(exponent); });
}

Tensor norm(const Tensor& self, const std::optional<Scalar>& p, OptionalIntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_CHECK(!dim.has_value() || dim->size() == 0,
              "norm: a sparse COO tensor's norm is over all elements only, so 'dim' must be empty (got ", *dim, ")");
  (void)keepdim;
  Tensor c = coalesced(self, "norm");
  return ember::norm(impl_of(c).values(), p, std::nullopt, false, dtype);
}

Tensor norm(const Tensor& self, std::string_view p, OptionalIntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  EMBER_CHECK_KIND(p == "fro", NotImplemented, "norm: a sparse COO tensor's '", std::string(p), "' norm is not supported");
  return sparse::norm(self, Scalar(2.0), dim, keepdim, dtype);
}

const Tensor& copy_(const Tensor& self, const Tensor& other, bool non_blocking) {
  (void)non_blocking;
  EMBER_CHECK_KIND(self.is_sparse() && other.is_sparse(), NotImplemented,
                   "copy_: copying between sparse COO and strided tensors is not supported (got ", describe(self),
                   " and ", describe(other), "); use to_dense() / to_sparse()");
  check_same_size("copy_", self, other);
  no_grad_through("copy_", {&self, &other});
  auto& o = impl_of(other);
  impl_of(self).set_contents(ember::clone(o.indices()), o.values().to(self.dtype(), true), o.coalesced());
  return self;
}

// ------------------------------------------------------------------ products
// Built from index_select / mul / index_add, which autograd records: the dense factor gets its
// gradient (the sparse one cannot require grad).
Tensor mm(const Tensor& self, const Tensor& mat2) {
  EMBER_CHECK_KIND(self.is_sparse() && !mat2.is_sparse(), NotImplemented,
                   "mm: only sparse COO @ strided is supported by Ember (got ", describe(self), " and ", describe(mat2), ")");
  auto& s = impl_of(self);
  EMBER_CHECK(self.dim() == 2 && s.sparse_dim() == 2, "mm: expected a 2-D sparse COO matrix with 2 sparse dims, got ",
              describe(self));
  EMBER_CHECK(mat2.dim() == 2 || mat2.dim() == 1, "mm: expected a 1-D or 2-D strided tensor, got ", describe(mat2));
  EMBER_CHECK(mat2.size(0) == self.size(1), "mm: mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x",
              self.size(1), " and ", mat2.size(0), mat2.dim() == 2 ? "x" + std::to_string(mat2.size(1)) : "", ")");
  EMBER_CHECK(self.dtype() == mat2.dtype(), "expected mat1 and mat2 to have the same dtype, but got: ",
              dtype_name(self.dtype()), " != ", dtype_name(mat2.dtype()));
  const bool vec = mat2.dim() == 1;
  Tensor m2 = vec ? mat2.unsqueeze(1) : mat2;
  Tensor rows = s.indices().select(0, 0), cols = s.indices().select(0, 1);
  Tensor contrib = ember::mul(ember::index_select(m2, 0, cols), s.values().unsqueeze(1));
  Tensor out = ember::index_add(ember::zeros({self.size(0), m2.size(1)}, TensorOptions(mat2.dtype()).device(mat2.device())),
                                0, rows, contrib);
  return vec ? out.squeeze(1) : out;
}

Tensor matmul(const Tensor& self, const Tensor& other) { return sparse::mm(self, other); }

// ------------------------------------------------------------------ autograd's helpers
Tensor shallow_copy(const Tensor& self) {
  auto& s = impl_of(self);
  Tensor r = make_coo(s.indices(), s.values(), self.sizes(), s.coalesced());
  r.impl()->set_version_counter(self.impl()->version_counter());
  return r;
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights, int64_t padding_idx,
                          bool scale_grad_by_freq) {
  EMBER_CHECK(!scale_grad_by_freq, "embedding_backward: scale_grad_by_freq not supported with sparse gradients");
  const int64_t D = grad.size(-1);
  Tensor idx = indices.reshape({-1}).to(kLong);
  Tensor rows = grad.reshape({-1, D});
  if (padding_idx >= 0) {
    Tensor keep = ember::nonzero(ember::ne(idx, Scalar(padding_idx))).reshape({-1});
    idx = ember::index_select(idx, 0, keep);
    rows = ember::index_select(rows, 0, keep);
  }
  return make_coo(idx.reshape({1, -1}), rows.contiguous(), {num_weights, D}, false);
}

}  // namespace ember::sparse

// ------------------------------------------------------------------ ops.yaml's `sparse: accept` bodies
namespace ember::native {

using sparse::impl_of;
using sparse::make_coo;

Tensor _sparse_coo_tensor(const Tensor& indices, const Tensor& values, IntArrayRef size, bool check_invariants,
                          std::optional<bool> is_coalesced) {
  (void)check_invariants;  // always checked: a bad index would otherwise surface later, far from its cause
  EMBER_CHECK(!indices.is_sparse() && !values.is_sparse(), "sparse_coo_tensor: indices and values must be dense");
  EMBER_CHECK(indices.dim() == 2, "indices must be sparse_dim x nnz, but got: ", indices.sizes());
  EMBER_CHECK(is_integral(indices.dtype(), false), "indices must be an int64 tensor");
  EMBER_CHECK(values.dim() >= 1, "values must have at least one dimension (nnz), but got a 0-d tensor");
  const int64_t sparse_dim = indices.size(0), nnz = indices.size(1);
  const int64_t dense_dim = values.dim() - 1;
  EMBER_CHECK(values.size(0) == nnz, "indices and values must have same nnz, but got nnz from indices: ", nnz,
              ", nnz from values: ", values.size(0));
  EMBER_CHECK(int64_t(size.size()) == sparse_dim + dense_dim, "number of dimensions must be sparse_dim (", sparse_dim,
              ") + dense_dim (", dense_dim, "), but got ", size.size());
  for (int64_t d = 0; d < dense_dim; d++)
    EMBER_CHECK(values.size(d + 1) == size[size_t(sparse_dim + d)], "values has incorrect size, expected ", size,
                " in the dense dimensions, got ", values.sizes());
  for (int64_t s : size) EMBER_CHECK(s >= 0, "sparse_coo_tensor: negative size in ", size);
  Tensor idx = indices.to(kLong);
  if (nnz > 0 && sparse_dim > 0) {
    autograd::AutoGradMode no_grad(false);
    auto [lo, lo_at] = ember::min(idx, 1, false);
    auto [hi, hi_at] = ember::max(idx, 1, false);
    (void)lo_at;
    (void)hi_at;
    for (int64_t d = 0; d < sparse_dim; d++) {
      int64_t l = lo.select(0, d).item().to_long(), h = hi.select(0, d).item().to_long();
      EMBER_CHECK(l >= 0, "found negative index ", l, " for dim ", d);
      EMBER_CHECK(h < size[size_t(d)], "size is inconsistent with indices: for dim ", d, ", size is ", size[size_t(d)],
                  " but found index ", h);
    }
  }
  EMBER_CHECK_KIND(!(autograd::grad_enabled() && autograd::requires_grad(values)), NotImplemented,
                   "sparse_coo_tensor: autograd through sparse COO tensors is not supported by Ember (values requires "
                   "grad); pass values.detach()");
  return make_coo(idx, values, size, is_coalesced.value_or(false));
}

Tensor _indices(const Tensor& self) {
  EMBER_CHECK(self.is_sparse(), "_indices expected a sparse COO tensor, but got a strided one");
  return impl_of(self).indices();
}

Tensor _values(const Tensor& self) {
  EMBER_CHECK(self.is_sparse(), "_values expected a sparse COO tensor, but got a strided one");
  return impl_of(self).values();
}

Tensor _coalesced_indices(const Tensor& self) {
  EMBER_CHECK(self.is_sparse(), "indices expected sparse coordinate tensor layout but got Strided");
  EMBER_CHECK(impl_of(self).coalesced(), "Cannot get indices on an uncoalesced tensor, please call .coalesce() first");
  return impl_of(self).indices();
}

Tensor _coalesced_values(const Tensor& self) {
  EMBER_CHECK(self.is_sparse(), "values expected sparse tensor layout but got Strided");
  EMBER_CHECK(impl_of(self).coalesced(), "Cannot get values on an uncoalesced tensor, please call .coalesce() first");
  return impl_of(self).values();
}

Tensor coalesce(const Tensor& self) {
  EMBER_CHECK(self.is_sparse(), "coalesce expected sparse coordinate tensor layout but got Strided");
  return sparse::coalesce_impl(self);
}

Tensor _to_dense(const Tensor& self, std::optional<ScalarType> dtype, std::optional<bool> masked_grad) {
  (void)masked_grad;
  if (!self.is_sparse()) return dtype ? self.to(*dtype) : self;
  EMBER_CHECK(!dtype, "dtype argument is not supported by sparse_to_dense");
  auto& s = impl_of(self);
  const ScalarType t = dtype.value_or(self.dtype());
  Tensor out = ember::zeros(self.sizes(), TensorOptions(t).device(s.values().device()));
  if (s.nnz() == 0) return out;
  autograd::AutoGradMode no_grad(false);
  ember::index_put_(out, sparse::index_tuple(s.indices()), s.values().to(t), true);
  return out;
}

Tensor _to_sparse_coo(const Tensor& self, std::optional<int64_t> sparse_dim) {
  const int64_t sd = sparse_dim.value_or(self.dim());
  if (self.is_sparse()) {
    EMBER_CHECK(sd == impl_of(self).sparse_dim(), "to_sparse: conversion from Sparse to Sparse with sparse_dim argument !=",
                " self.sparse_dim() is not supported");
    return self;
  }
  EMBER_CHECK(sd >= 0 && sd <= self.dim(), "sparse_dim must be in [0, ", self.dim(), "], but got ", sd);
  EMBER_CHECK(sd > 0 || self.dim() == 0, "dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0");
  EMBER_CHECK_KIND(!(autograd::grad_enabled() && autograd::requires_grad(self)), NotImplemented,
                   "to_sparse: autograd through sparse COO tensors is not supported by Ember (the input requires "
                   "grad); call it on .detach()");
  autograd::AutoGradMode no_grad(false);
  // an entry per position of the sparse dims where some value of its dense block is nonzero
  Tensor nz = ember::ne(self, Scalar(0));
  if (sd < self.dim()) {
    DimVector dims;
    for (int64_t d = sd; d < self.dim(); d++) dims.push_back(d);
    nz = ember::any(nz, OptionalIntArrayRef(IntArrayRef(dims)), false);
  }
  Tensor indices;
  if (sd == 0) {  // a 0-d tensor: one entry, or none when it is zero
    const bool nonzero = ember::ne(self, Scalar(0)).item().to_bool();
    indices = ember::zeros({0, nonzero ? 1 : 0}, TensorOptions(kLong).device(self.device()));
    Tensor values = nonzero ? self.unsqueeze(0).clone() : ember::zeros({0}, TensorOptions(self.dtype()).device(self.device()));
    return make_coo(indices, values, self.sizes(), true);
  }
  indices = ember::nonzero(nz).t().contiguous();  // row-major order: already coalesced
  Tensor values = ember::index(self, sparse::index_tuple(indices)).contiguous();
  return make_coo(indices, values, self.sizes(), true);
}

Tensor sparse_mask(const Tensor& self, const Tensor& mask) {
  EMBER_CHECK(mask.is_sparse(), "sparse_mask: expected mask to be a sparse COO tensor, but got a strided one");
  EMBER_CHECK(self.sizes() == mask.sizes(), "sparse_mask(): operands have incompatible sizes; self has size ",
              self.sizes(), " but mask has size ", mask.sizes());
  EMBER_CHECK_KIND(!self.is_sparse(), NotImplemented, "sparse_mask: a sparse self is not supported; use .to_dense()");
  EMBER_CHECK_KIND(!(autograd::grad_enabled() && autograd::requires_grad(self)), NotImplemented,
                   "sparse_mask: autograd through sparse COO tensors is not supported by Ember");
  auto& m = impl_of(mask);
  autograd::AutoGradMode no_grad(false);
  Tensor values = m.nnz() == 0 ? ember::zeros(m.values().sizes(), TensorOptions(self.dtype()).device(self.device()))
                               : ember::index(self, sparse::index_tuple(m.indices())).contiguous();
  return make_coo(m.indices(), values, self.sizes(), m.coalesced());
}

}  // namespace ember::native
