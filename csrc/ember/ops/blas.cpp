// The BLAS family (mm, bmm, mv, dot, outer, addmm, ...), tensordot, einsum and kron, as composites
// of matmul with each op's own shape checks; autograd flows through matmul.
#include <algorithm>
#include <map>

#include "ember/core/checked_math.h"
#include "ember/core/operators.h"
#include <string_view>

#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/ops/gemm.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

namespace {
void check_dim(const Tensor& t, int64_t d, const char* op, const char* arg) {
  // PyTorch's wording: mm says "must be a matrix", addmm adds the rank it got
  if (d == 2 && std::string_view(op) == "addmm") {
    EMBER_CHECK(t.dim() == 2, arg, " must be a matrix, got ", t.dim(), "-D tensor");
  } else if (d == 2) {
    EMBER_CHECK(t.dim() == 2, arg, " must be a matrix");
  }
  EMBER_CHECK(t.dim() == d, arg, " must be a ", d, "D tensor");
}
void check_same_dtype(const Tensor& a, const Tensor& b) {
  EMBER_CHECK(a.dtype() == b.dtype(), "expected m1 and m2 to have the same dtype, but got: ", dtype_name(a.dtype()),
              " != ", dtype_name(b.dtype()));
}
const Tensor& write(const Tensor& out, const Tensor& r) { return copy_to_out(out, r, true); }
const Tensor& write_cast(const Tensor& out, const Tensor& r) { return copy_to_out(out, r, false); }
Tensor scaled_add(const Tensor& self, const Tensor& prod, const Scalar& beta_in, const Scalar& alpha_in) {
  // integer products take beta and alpha truncated to integers, bool ones as bools (PyTorch casts them to the
  // inputs' dtype): a float scalar must not promote the result to float
  const bool integral = is_integral(prod.dtype(), true);
  if (prod.dtype() == kBool) {
    Tensor p = alpha_in.to_bool() ? prod : ember::zeros_like(prod);
    return beta_in.to_bool() ? ember::logical_or(self, p) : ember::logical_or(ember::zeros_like(self), p);
  }
  const Scalar alpha = integral ? Scalar(alpha_in.to_long()) : alpha_in;
  const Scalar beta = integral ? Scalar(beta_in.to_long()) : beta_in;
  Tensor p = (alpha.is_integral(true) && alpha.to_long() == 1) ? prod : prod * alpha;
  if (beta.to_double() == 0) return p + ember::zeros_like(self).expand(p.sizes()) * 0;  // beta=0 ignores nan/inf in self
  Tensor s = (beta.is_integral(true) && beta.to_long() == 1) ? self : self * beta;
  return ember::add(s, p);
}
}  // namespace

Tensor mm(const Tensor& self, const Tensor& mat2) {
  check_dim(self, 2, "mm", "self");
  check_dim(mat2, 2, "mm", "mat2");
  check_same_dtype(self, mat2);
  EMBER_CHECK(self.sizes()[1] == mat2.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", self.sizes()[0], "x",
              self.sizes()[1], " and ", mat2.sizes()[0], "x", mat2.sizes()[1], ")");
  return ember::matmul(self, mat2);
}
const Tensor& mm_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write(out, native::mm(a, b)); }

Tensor bmm(const Tensor& self, const Tensor& mat2) {
  check_dim(self, 3, "bmm", "batch1");
  check_dim(mat2, 3, "bmm", "batch2");
  check_same_dtype(self, mat2);
  EMBER_CHECK(self.sizes()[0] == mat2.sizes()[0], "batch1 and batch2 must have same number of batches, got ",
              self.sizes()[0], " and ", mat2.sizes()[0]);
  EMBER_CHECK(self.sizes()[2] == mat2.sizes()[1], "Expected size for first two dimensions of batch2 tensor to be: [",
              self.sizes()[0], ", ", self.sizes()[2], "] but got: [", mat2.sizes()[0], ", ", mat2.sizes()[1], "].");
  return ember::matmul(self, mat2);
}
const Tensor& bmm_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write(out, native::bmm(a, b)); }

Tensor mv(const Tensor& self, const Tensor& vec) {
  EMBER_CHECK(self.dim() == 2 && vec.dim() == 1, "vector + matrix @ vector expected, got ", self.dim(), ", ",
              vec.dim());
  check_same_dtype(self, vec);
  EMBER_CHECK(self.sizes()[1] == vec.sizes()[0], "size mismatch, got input (", self.sizes()[0], "), mat (",
              self.sizes()[0], "x", self.sizes()[1], "), vec (", vec.sizes()[0], ")");
  return ember::matmul(self, vec);
}
const Tensor& mv_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write(out, native::mv(a, b)); }

Tensor dot(const Tensor& self, const Tensor& other) {
  EMBER_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(), "D and ", other.dim(),
              "D tensors");
  EMBER_CHECK(self.dtype() == other.dtype(), "dot : expected both vectors to have same dtype, but found ",
              self.dtype(), " and ", other.dtype());
  return ember::matmul(self, other);
}
const Tensor& dot_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write(out, native::dot(a, b)); }
// conjugates the first vector (a no-op for real dtypes)
Tensor vdot(const Tensor& self, const Tensor& other) {
  return native::dot(is_complex(self.dtype()) ? ember::conj_physical(self) : self, other);
}
const Tensor& vdot_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write(out, native::vdot(a, b)); }

Tensor inner(const Tensor& self, const Tensor& other) {
  if (self.dim() == 0 || other.dim() == 0) return ember::mul(self, other);
  EMBER_CHECK(self.sizes().back() == other.sizes().back(), "inner() the last dimension must match on both input "
              "tensors but got shapes ", self.sizes(), " and ", other.sizes());
  return ember::tensordot(self, other, {-1}, {-1});
}
const Tensor& inner_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  // with a 0-d operand inner is a multiplication, with its casting rules
  return copy_to_out(out, native::inner(a, b), a.dim() != 0 && b.dim() != 0);
}

Tensor outer(const Tensor& self, const Tensor& vec2) {
  EMBER_CHECK(self.dim() == 1 && vec2.dim() == 1, "outer: expected 1D tensors, got ", self.dim(), "D and ", vec2.dim(), "D");
  return ember::mul(self.unsqueeze(1), vec2.unsqueeze(0));
}
const Tensor& outer_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write_cast(out, native::outer(a, b)); }

// addr (only) refuses scalars its integer or bool result cannot hold, as PyTorch's
static void check_addr_scalars(const Tensor& self, const Scalar& beta, const Scalar& alpha) {
  if (self.dtype() == kBool) return;
  EMBER_CHECK(!beta.is_bool(), "Boolean beta only supported for Boolean results.");
  EMBER_CHECK(!alpha.is_bool(), "Boolean alpha only supported for Boolean results.");
  if (!is_integral(self.dtype(), false)) return;
  EMBER_CHECK(!beta.is_floating(), "For integral input tensors, argument beta must not be a floating point number.");
  EMBER_CHECK(!alpha.is_floating(), "For integral input tensors, argument alpha must not be a floating point number.");
}

#define EMBER_ADDX(name, check, prod)                                                                          \
  Tensor name(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) { \
    check;                                                                                                     \
    Tensor p = prod;                                                                                           \
    EMBER_CHECK(broadcast_shapes(self.sizes(), p.sizes()) == p.sizes(), #name ": self of shape ", self.sizes(), \
                " cannot be broadcast to the product's shape ", p.sizes());                                   \
    return scaled_add(self, p, beta, alpha);                                                                   \
  }                                                                                                            \
  const Tensor& name##_(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) { \
    Tensor r = native::name(self, a, b, beta, alpha);                                                          \
    EMBER_CHECK(r.sizes() == self.sizes(), "output with shape ", self.sizes(), " doesn't match the broadcast shape ", \
                r.sizes());                                                                                    \
    return ember::copy_(self, r);                                                                              \
  }                                                                                                            \
  const Tensor& name##_out(const Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b,             \
                           const Scalar& beta, const Scalar& alpha) {                                          \
    return copy_to_out(out, native::name(self, a, b, beta, alpha), std::string_view(#name) != "addr");                                                  \
  }
EMBER_ADDX(addmv, (void)0, native::mv(a, b))
EMBER_ADDX(addbmm, (void)0, ember::sum(native::bmm(a, b), IntArrayRef({int64_t(0)}), false, a.dtype()))
EMBER_ADDX(baddbmm, (void)0, native::bmm(a, b))
EMBER_ADDX(addr, check_addr_scalars(self, beta, alpha), native::outer(a, b))
#undef EMBER_ADDX

// addmm on one GEMM (gemm_into): c starts as beta * self broadcast to [M, N] (BLAS scales it), then accumulates
// alpha * mat1 @ mat2. beta = 0 ignores self entirely (NaN in self does not propagate), as in PyTorch.
Tensor addmm(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  check_dim(a, 2, "addmm", "mat1");
  check_dim(b, 2, "addmm", "mat2");
  check_same_device("addmm", a.device(), {&self, &b});
  EMBER_CHECK(self.dtype() == b.dtype(), "self and mat2 must have the same dtype, but got ", dtype_name(self.dtype()),
              " and ", dtype_name(b.dtype()));
  check_same_dtype(a, b);
  EMBER_CHECK(a.sizes()[1] == b.sizes()[0], "mat1 and mat2 shapes cannot be multiplied (", a.sizes()[0], "x",
              a.sizes()[1], " and ", b.sizes()[0], "x", b.sizes()[1], ")");
  DimVector mn = {a.sizes()[0], b.sizes()[1]};
  Tensor expanded = self.expand(mn);  // raises PyTorch's "expanded size" error
  ScalarType dt = a.dtype();
  if (dt == kFloat || dt == kDouble) {
    Tensor c = empty_tensor(mn, dt, a.device());
    double bv = beta.to_double();
    if (bv != 0) c.copy_(expanded);
    gemm_into(a, b, c, alpha.to_double(), bv);
    return c;
  }
  return scaled_add(self, native::mm(a, b), beta, alpha);
}
const Tensor& addmm_(const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  Tensor r = native::addmm(self, a, b, beta, alpha);
  EMBER_CHECK(r.sizes() == self.sizes(), "Bad in-place call: input tensor size ", self.sizes(),
              " and output tensor size ", r.sizes(), " should match");
  return ember::copy_(self, r);
}
const Tensor& addmm_out(const Tensor& out, const Tensor& self, const Tensor& a, const Tensor& b, const Scalar& beta,
                        const Scalar& alpha) {
  return copy_to_out(out, native::addmm(self, a, b, beta, alpha), true);
}

// Contract dims_a of self with dims_b of other: permute both so the contracted dims meet, then one matmul.
Tensor tensordot(const Tensor& self_in, const Tensor& other_in, IntArrayRef dims_a, IntArrayRef dims_b) {
  EMBER_CHECK(dims_a.size() == dims_b.size(), "both dimension lists should have same length");
  // a contracted size-1 dim broadcasts against the other's: sum the other over that dim first, as PyTorch
  Tensor self = self_in, other = other_in;
  for (size_t i = 0; i < dims_a.size(); i++) {
    int64_t a = wrap_existing_dim(dims_a[i], self.dim()), b = wrap_existing_dim(dims_b[i], other.dim());
    if (self.sizes()[a] == other.sizes()[b]) continue;
    if (self.sizes()[a] == 1) other = ember::sum(other, IntArrayRef({b}), true, other.dtype());
    else if (other.sizes()[b] == 1) self = ember::sum(self, IntArrayRef({a}), true, self.dtype());
  }
  std::vector<bool> ca(static_cast<size_t>(std::max<int64_t>(self.dim(), 1)), false), cb(static_cast<size_t>(std::max<int64_t>(other.dim(), 1)), false);
  std::vector<int64_t> da, db;
  int64_t csize = 1;
  for (size_t i = 0; i < dims_a.size(); i++) {
    int64_t a = wrap_existing_dim(dims_a[i], self.dim()), b = wrap_existing_dim(dims_b[i], other.dim());
    EMBER_CHECK(self.sizes()[a] == other.sizes()[b], "contracted dimensions need to match, but first has size ",
                self.sizes()[a], " in dim ", a, " and second has size ", other.sizes()[b], " in dim ", b);
    ca[a] = cb[b] = true;
    da.push_back(a);
    db.push_back(b);
    csize = checked_mul(csize, self.sizes()[a], "numel");
  }
  std::vector<int64_t> pa, pb, out_shape;
  int64_t ma = 1, nb = 1;
  for (int64_t i = 0; i < self.dim(); i++)
    if (!ca[i]) { pa.push_back(i); out_shape.push_back(self.sizes()[i]); ma = checked_mul(ma, self.sizes()[i], "numel"); }
  for (int64_t d : da) pa.push_back(d);
  for (int64_t d : db) pb.push_back(d);
  for (int64_t i = 0; i < other.dim(); i++)
    if (!cb[i]) { pb.push_back(i); out_shape.push_back(other.sizes()[i]); nb = checked_mul(nb, other.sizes()[i], "numel"); }
  Tensor A = self.permute(pa).reshape({ma, csize});
  Tensor B = other.permute(pb).reshape({csize, nb});
  // every dim contracted: a dot product (under autocast it stays in the inputs' dtype, as PyTorch's)
  if (out_shape.empty()) return ember::dot(A.reshape({-1}), B.reshape({-1}));
  return ember::matmul(A, B).reshape(out_shape);
}

// einsum: parse "ij,jk->ik" (with implicit output and repeated indices). Diagonals of repeated
// indices within one operand are taken first; then operands are combined pairwise, summing out
// each index as soon as no later operand or the output needs it; a final permute orders the output.
Tensor einsum(std::string_view equation, TensorList tensors) {
  std::string eq(equation);
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  auto arrow = eq.find("->");
  if (arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicit_out = true;
  }
  std::vector<std::string> terms;
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); i++)
    if (i == lhs.size() || lhs[i] == ',') { terms.push_back(lhs.substr(start, i - start)); start = i + 1; }
  EMBER_CHECK(terms.size() == tensors.size(), "einsum(): more operands were provided than specified in the equation");
  // ellipsis: replace "..." by reserved uppercase-free symbols per operand
  int64_t ell_dims = 0;
  for (size_t i = 0; i < terms.size(); i++) {
    auto e = terms[i].find("...");
    int64_t letters = int64_t(terms[i].size()) - (e == std::string::npos ? 0 : 3);
    if (e != std::string::npos) ell_dims = std::max(ell_dims, tensors[i].dim() - letters);
  }
  const std::string ell_syms = "0123456789";
  EMBER_CHECK(ell_dims <= 10, "einsum(): too many dimensions covered by ellipsis");
  for (size_t i = 0; i < terms.size(); i++) {
    auto e = terms[i].find("...");
    if (e == std::string::npos) {
      EMBER_CHECK(int64_t(terms[i].size()) == tensors[i].dim(), "einsum(): the number of subscripts in the equation (",
                  terms[i].size(), ") does not match the number of dimensions (", tensors[i].dim(), ") for operand ",
                  i, " and no ellipsis was given");
      continue;
    }
    int64_t n = tensors[i].dim() - (int64_t(terms[i].size()) - 3);
    EMBER_CHECK(n >= 0, "einsum(): the number of subscripts in the equation (", terms[i].size() - 3,
                ") is more than the number of dimensions (", tensors[i].dim(), ") for operand ", i);
    terms[i] = terms[i].substr(0, e) + ell_syms.substr(size_t(ell_dims - n), size_t(n)) + terms[i].substr(e + 3);
  }
  for (auto& t : terms)
    for (char c : t)
      EMBER_CHECK(std::isalpha(c) || std::isdigit(c), "einsum(): invalid subscript given at index ", &c - t.data(),
                  " in the equation string, subscripts must be in [a-zA-Z]");
  std::map<char, int64_t> count, size_of;
  for (size_t i = 0; i < terms.size(); i++)
    for (size_t j = 0; j < terms[i].size(); j++) {
      char c = terms[i][j];
      int64_t s = tensors[i].sizes()[j];
      count[c]++;
      auto it = size_of.find(c);
      if (it == size_of.end() || it->second == 1) size_of[c] = s;
      else EMBER_CHECK(s == 1 || s == it->second, "einsum(): operands do not broadcast with remapped shapes (original->"
                       "remapped)");
    }
  if (explicit_out) {
    auto e = rhs.find("...");
    if (e != std::string::npos) rhs = rhs.substr(0, e) + ell_syms.substr(0, size_t(ell_dims)) + rhs.substr(e + 3);
    for (char c : rhs) EMBER_CHECK(count.count(c), "einsum(): output subscript ", c, " does not appear in the equation for any input operand");
  } else {
    rhs = ell_syms.substr(0, size_t(ell_dims));
    for (auto& [c, n] : count)
      if (n == 1 && !std::isdigit(c)) rhs += c;
  }
  // 1. diagonals of repeated letters within an operand; sum letters that appear nowhere else
  std::vector<Tensor> ops;
  std::vector<std::string> subs;
  for (size_t i = 0; i < terms.size(); i++) {
    Tensor t = tensors[i];
    std::string s = terms[i];
    for (size_t a = 0; a < s.size(); a++)
      for (size_t b = a + 1; b < s.size();) {
        if (s[a] != s[b]) { b++; continue; }
        t = t.diagonal(0, int64_t(a), int64_t(b)).movedim({-1}, {int64_t(a)});
        s.erase(b, 1);
      }
    ops.push_back(t);
    subs.push_back(s);
  }
  auto needed_later = [&](char c, size_t upto) {
    if (rhs.find(c) != std::string::npos) return true;
    for (size_t k = upto; k < subs.size(); k++)
      if (subs[k].find(c) != std::string::npos) return true;
    return false;
  };
  // sum the letters of t that neither the output, a later operand, nor `partner` (the operand it
  // is about to be contracted with) uses
  auto sum_unneeded = [&](Tensor t, std::string s, size_t next, const std::string& partner) {
    std::vector<int64_t> dims;
    std::string keep;
    for (size_t j = 0; j < s.size(); j++) {
      if (needed_later(s[j], next) || partner.find(s[j]) != std::string::npos) keep += s[j];
      else dims.push_back(int64_t(j));
    }
    if (!dims.empty()) t = ember::sum(t, IntArrayRef(dims), false);
    return std::make_pair(t, keep);
  };
  Tensor acc = ops[0];
  std::string as = subs[0];
  std::tie(acc, as) = sum_unneeded(acc, as, 1, "");
  for (size_t i = 1; i < ops.size(); i++) {
    Tensor b = ops[i];
    std::string bs = subs[i];
    std::tie(b, bs) = sum_unneeded(b, bs, i + 1, as);
    // contract letters in both that are not needed later; keep the rest (batch if in both)
    std::string contract, batch, only_a, only_b;
    for (char c : as) {
      bool inb = bs.find(c) != std::string::npos;
      if (inb && !needed_later(c, i + 1)) contract += c;
      else if (inb) batch += c;
      else only_a += c;
    }
    for (char c : bs)
      if (as.find(c) == std::string::npos) only_b += c;
    auto perm_of = [](const std::string& from, const std::string& to) {
      std::vector<int64_t> p;
      for (char c : to) p.push_back(int64_t(from.find(c)));
      return p;
    };
    auto size_prod = [&](const std::string& letters, const Tensor& t, const std::string& s) {
      int64_t p = 1;
      for (char c : letters) p = checked_mul(p, t.sizes()[s.find(c)], "numel");
      return p;
    };
    // broadcast size-1 dims between the operands
    std::vector<int64_t> bshape;
    for (char c : batch) bshape.push_back(std::max(acc.sizes()[as.find(c)], b.sizes()[bs.find(c)]));
    Tensor A = acc.permute(perm_of(as, batch + only_a + contract));
    Tensor B = b.permute(perm_of(bs, batch + contract + only_b));
    int64_t nb = 1;
    for (int64_t v : bshape) nb *= v;
    std::vector<int64_t> ea(bshape), eb(bshape);
    for (char c : only_a + contract) ea.push_back(acc.sizes()[as.find(c)]);
    for (char c : contract + only_b) eb.push_back(b.sizes()[bs.find(c)]);
    for (size_t k = 0; k < contract.size(); k++) {  // contracted dims broadcast too
      int64_t sa = ea[bshape.size() + only_a.size() + k], sb = eb[bshape.size() + k];
      ea[bshape.size() + only_a.size() + k] = eb[bshape.size() + k] = std::max(sa, sb);
    }
    A = A.expand(ea);
    B = B.expand(eb);
    int64_t ma = size_prod(only_a, acc, as), kc = 1, nbb = size_prod(only_b, b, bs);
    for (size_t k = 0; k < contract.size(); k++) kc *= ea[bshape.size() + only_a.size() + k];
    // an integer operand summed over a dropped dim is int64 already (sum's promotion, as PyTorch's)
    ScalarType ct = promote_types(A.dtype(), B.dtype());
    Tensor R = ember::matmul(A.reshape({nb, ma, kc}).to(ct), B.reshape({nb, kc, nbb}).to(ct));
    std::vector<int64_t> rshape(bshape);
    for (char c : only_a) rshape.push_back(acc.sizes()[as.find(c)]);
    for (char c : only_b) rshape.push_back(b.sizes()[bs.find(c)]);
    acc = R.reshape(rshape);
    as = batch + only_a + only_b;
  }
  std::tie(acc, as) = sum_unneeded(acc, as, ops.size(), "");
  EMBER_CHECK(as.size() == rhs.size(), "einsum(): internal error: output letters ", as, " vs ", rhs);
  std::vector<int64_t> p;
  for (char c : rhs) p.push_back(int64_t(as.find(c)));
  Tensor r = acc.permute(p);
  return r.is_same(tensors.empty() ? r : tensors[0]) ? r.clone() : r;
}

Tensor kron(const Tensor& self, const Tensor& other) {
  int64_t nd = std::max(self.dim(), other.dim());
  Tensor a = self, b = other;
  while (a.dim() < nd) a = a.unsqueeze(0);
  while (b.dim() < nd) b = b.unsqueeze(0);
  // a[i0..] * b[j0..] at position (i*bs + j): interleave dims then reshape
  std::vector<int64_t> ash, bsh, out;
  for (int64_t i = 0; i < nd; i++) {
    ash.push_back(a.sizes()[i]);
    ash.push_back(1);
    bsh.push_back(1);
    bsh.push_back(b.sizes()[i]);
    out.push_back(checked_mul(a.sizes()[i], b.sizes()[i], "kron: output size"));
  }
  return ember::mul(a.reshape(ash), b.reshape(bsh)).reshape(out);
}
const Tensor& kron_out(const Tensor& out, const Tensor& a, const Tensor& b) { return write_cast(out, native::kron(a, b)); }

}  // namespace ember::native
