// x.index({...}) and x.index_put_({...}, v): basic entries (integers, slices, None, Ellipsis, bools)
// become views; index tensors then go to the advanced index / index_put_ ops in one call, as Python's
// subscript does.
#include "ember/core/tensor_indexing.h"

#include <cstring>

#include "ember/generated/ops.h"

namespace ember {

TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  EMBER_CHECK_KIND(std::strcmp(s, "...") == 0, Index, "index(): the only string index is \"...\", got \"", s, "\"");
}

namespace {

// The view the basic entries select, and the index tensors laid out per dimension of that view
// (undefined where a dimension is not indexed by a tensor).
struct Applied {
  Tensor view;
  std::vector<Tensor> advanced;
  bool has_advanced = false;
};

Applied apply_indices(const Tensor& self, const TensorIndex* begin, size_t n) {
  int64_t consumed = 0;  // dimensions of self the entries use up
  bool seen_ellipsis = false;
  for (size_t i = 0; i < n; ++i) {
    const TensorIndex& e = begin[i];
    switch (e.kind()) {
      case TensorIndex::Kind::Integer:
      case TensorIndex::Kind::Slice: consumed += 1; break;
      case TensorIndex::Kind::Tensor:
        consumed += e.tensor().dtype() == kBool ? std::max<int64_t>(e.tensor().dim(), 1) : 1;
        break;
      case TensorIndex::Kind::Ellipsis:
        EMBER_CHECK_KIND(!seen_ellipsis, Index, "an index can only have a single ellipsis ('...')");
        seen_ellipsis = true;
        break;
      case TensorIndex::Kind::None:
      case TensorIndex::Kind::Boolean: break;
    }
  }
  EMBER_CHECK_KIND(consumed <= self.dim(), Index, "too many indices for tensor of dimension ", self.dim());
  Applied out;
  Tensor r = self;
  int64_t dim = 0;
  auto put_advanced = [&](int64_t d, const Tensor& t) {
    if (int64_t(out.advanced.size()) <= d) out.advanced.resize(d + 1);
    out.advanced[d] = t;
    out.has_advanced = true;
  };
  for (size_t i = 0; i < n; ++i) {
    const TensorIndex& e = begin[i];
    switch (e.kind()) {
      case TensorIndex::Kind::Integer: r = r.select(dim, e.integer()); break;
      case TensorIndex::Kind::Slice: {
        const auto& s = e.slice();
        int64_t step = s.step.value_or(1);
        EMBER_CHECK_KIND(step > 0, Value, "step must be greater than zero");
        r = ember::slice(r, dim, s.start, s.stop, step);
        dim += 1;
        break;
      }
      case TensorIndex::Kind::None: r = ember::unsqueeze(r, dim); dim += 1; break;
      case TensorIndex::Kind::Ellipsis: dim += self.dim() - consumed; break;
      case TensorIndex::Kind::Boolean:
        // x[True] adds a dimension of size 1, x[False] one of size 0
        r = ember::unsqueeze(r, dim);
        if (!e.boolean()) r = ember::slice(r, dim, 0, 0, 1);
        dim += 1;
        break;
      case TensorIndex::Kind::Tensor: {
        const Tensor& t = e.tensor();
        if (t.dtype() == kBool && t.dim() > 1) {
          // a mask over several dims indexes them together through its nonzero coordinates
          Tensor coords = ember::nonzero(t);
          for (int64_t k = 0; k < t.dim(); ++k) put_advanced(dim + k, coords.select(1, k));
          dim += t.dim();
        } else {
          put_advanced(dim, t);
          dim += 1;
        }
        break;
      }
    }
  }
  out.view = r;
  return out;
}

Tensor index_impl(const Tensor& self, const TensorIndex* begin, size_t n) {
  Applied a = apply_indices(self, begin, n);
  return a.has_advanced ? ember::index(a.view, a.advanced) : a.view;
}

const Tensor& index_put_impl(const Tensor& self, const TensorIndex* begin, size_t n, const Tensor& values) {
  Applied a = apply_indices(self, begin, n);
  if (a.has_advanced) {
    a.view.index_put_(a.advanced, values.to(a.view.device(), a.view.dtype()));
  } else {
    a.view.copy_(values);
  }
  return self;
}

Tensor scalar_values(const Tensor& self, const Scalar& v) { return scalar_to_tensor(v).to(self.device(), self.dtype()); }

}  // namespace

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const { return index_impl(*this, indices.begin(), indices.size()); }
Tensor Tensor::index(const std::vector<TensorIndex>& indices) const { return index_impl(*this, indices.data(), indices.size()); }
const Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& values) const {
  return index_put_impl(*this, indices.begin(), indices.size(), values);
}
const Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) const {
  return index_put_impl(*this, indices.begin(), indices.size(), scalar_values(*this, value));
}
const Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Tensor& values) const {
  return index_put_impl(*this, indices.data(), indices.size(), values);
}
const Tensor& Tensor::index_put_(const std::vector<TensorIndex>& indices, const Scalar& value) const {
  return index_put_impl(*this, indices.data(), indices.size(), scalar_values(*this, value));
}

}  // namespace ember
