// cross and linalg.cross: the cross product of 3-vectors along one dim, a composite of elementwise ops.
#include "ember/core/checked_math.h"
#include "ember/core/operators.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"

namespace ember::native {

Tensor linalg_cross(const Tensor& self, const Tensor& other, int64_t dim) {
  EMBER_CHECK(self.dim() == other.dim(), "linalg.cross: inputs must have the same number of dimensions.");
  int64_t d = wrap_existing_dim(dim, self.dim());
  EMBER_CHECK(self.sizes()[d] == 3 && other.sizes()[d] == 3, "linalg.cross: inputs dimension ", dim,
              " must have length 3. Got ", self.sizes()[d], " and ", other.sizes()[d]);
  EMBER_CHECK(self.dtype() == other.dtype(), "expected scalar type ", self.dtype(), " but found ", other.dtype());
  EMBER_CHECK_KIND(self.dtype() != kBool, NotImplemented, "\"cross\" not implemented for 'Bool'");
  DimVector shape = broadcast_shapes(self.sizes(), other.sizes());
  Tensor a = self.expand(shape), b = other.expand(shape);
  auto c = [&](const Tensor& t, int64_t i) { return t.narrow(d, i, 1); };
  return ember::cat({c(a, 1) * c(b, 2) - c(a, 2) * c(b, 1), c(a, 2) * c(b, 0) - c(a, 0) * c(b, 2),
                     c(a, 0) * c(b, 1) - c(a, 1) * c(b, 0)},
                    d);
}
const Tensor& linalg_cross_out(const Tensor& out, const Tensor& self, const Tensor& other, int64_t dim) {
  check_out_dtype(out, self.dtype());
  return copy_to_out(out, native::linalg_cross(self, other, dim), true);
}

namespace {
int64_t default_cross_dim(const Tensor& self, std::optional<int64_t> dim) {
  if (dim) return *dim;
  for (int64_t i = 0; i < self.dim(); i++)
    if (self.sizes()[i] == 3) return i;
  EMBER_FAIL(Runtime, "no dimension of size 3 in input");
}
}  // namespace

Tensor cross(const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  return ember::linalg_cross(self, other, default_cross_dim(self, dim));
}
const Tensor& cross_out(const Tensor& out, const Tensor& self, const Tensor& other, std::optional<int64_t> dim) {
  return ember::linalg_cross_out(out, self, other, default_cross_dim(self, dim));
}

}  // namespace ember::native
