// Embeddings and one_hot (ember.nn.functional.embedding, embedding_bag, one_hot).
// embedding is one gather with its own backward (autograd/formulas.cpp: embedding_backward, an
// accumulating index_put_ that skips padding_idx and can scale by inverse frequency);
// embedding_bag reduces its rows per bag with differentiable ops on top of it.
#include <algorithm>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/ops/nn_common.h"

namespace ember::native {

namespace {

const char* legacy_type_name(ScalarType t) {
  switch (t) {
    case kByte: return "ByteTensor";
    case kChar: return "CharTensor";
    case kShort: return "ShortTensor";
    case kInt: return "IntTensor";
    case kLong: return "LongTensor";
    case kHalf: return "HalfTensor";
    case kFloat: return "FloatTensor";
    case kDouble: return "DoubleTensor";
    case kBool: return "BoolTensor";
    case kBFloat16: return "BFloat16Tensor";
    default: return "Tensor";
  }
}

void check_index_dtype(const Tensor& indices, const char* arg, const char* op) {
  EMBER_CHECK(indices.dtype() == kLong || indices.dtype() == kInt, "Expected tensor for argument #", arg,
              " to have one of the following scalar types: Long, Int; but got ember.", legacy_type_name(indices.dtype()),
              " instead (while checking arguments for ", op, ")");
}

// [min, max] of an integer tensor (numel > 0), read without recording.
std::pair<int64_t, int64_t> index_range(const Tensor& indices) {
  Tensor flat = indices.reshape({-1}).to(kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(flat.data_ptr());
  auto [lo, hi] = std::minmax_element(p, p + flat.numel());
  return {*lo, *hi};
}

void check_in_range(const Tensor& indices, int64_t n) {
  if (indices.numel() == 0) return;
  auto [lo, hi] = index_range(indices);
  EMBER_CHECK_KIND(lo >= 0 && hi < n, Index, "index out of range in self");
}

std::vector<int64_t> to_vec(const Tensor& t) {
  Tensor c = t.reshape({-1}).to(kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  return std::vector<int64_t>(p, p + c.numel());
}
Tensor long_tensor(const std::vector<int64_t>& v) {
  Tensor t = ember::empty({int64_t(v.size())}, TensorOptions(kLong));
  std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));
  return t;
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx;
  (void)scale_grad_by_freq;
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_index_dtype(indices, "1 'indices'", "embedding");
  EMBER_CHECK_KIND(!sparse, NotImplemented, "embedding: sparse gradients (sparse=True) are not supported by Ember; "
                   "use sparse=False");
  check_in_range(indices, weight.size(0));
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return ember::index_select(weight, 0, indices.reshape({-1})).reshape(shape);
}

// Rows of `self` named by `indices` whose p-norm exceeds max_norm are scaled down to max_norm
// (each distinct row once), in place.
const Tensor& embedding_renorm_(const Tensor& self, const Tensor& indices, double max_norm, double norm_type) {
  EMBER_CHECK(self.dim() == 2, "Expected 2-dimensional tensor, but got ", self.dim(),
              "-dimensional tensor for argument #1 'self' (while checking arguments for embedding_renorm_)");
  check_index_dtype(indices, "2 'indices'", "embedding_renorm_");
  check_in_range(indices, self.size(0));
  if (indices.numel() == 0) return self;
  autograd::AutoGradMode no_grad(false);
  Tensor seen = ember::zeros({self.size(0)}, TensorOptions(kBool));
  ember::index_put_(seen, {indices.reshape({-1}).to(kLong)}, ember::ones({}, TensorOptions(kBool)), false);
  Tensor rows = ember::nonzero(seen).reshape({-1});
  Tensor sel = ember::index_select(self, 0, rows);
  Tensor norms = ember::norm(sel, Scalar(norm_type), IntArrayRef({1}), true);
  Tensor scale = ember::where(ember::gt(norms, max_norm), max_norm / (norms + 1e-7), ember::ones_like(norms));
  ember::index_put_(self, {rows}, sel * scale, false);
  return self;
}

// torch.embedding_bag: (output, offset2bag, bag_size, max_indices). Bag b holds
// indices[offsets[b]:offsets[b+1]]; entries equal to padding_idx are skipped; empty bags give zeros.
std::tuple<Tensor, Tensor, Tensor, Tensor> embedding_bag(const Tensor& weight, const Tensor& indices,
                                                         const Tensor& offsets, bool scale_grad_by_freq, int64_t mode,
                                                         bool sparse, const Tensor& per_sample_weights,
                                                         bool include_last_offset, std::optional<int64_t> padding_idx) {
  EMBER_CHECK(weight.dim() == 2, "weight has to be a 2D Tensor, but got Tensor of dimension ", weight.dim());
  check_index_dtype(indices, "2 'indices'", "embedding_bag");
  check_index_dtype(offsets, "3 'offsets'", "embedding_bag");
  EMBER_CHECK(indices.dim() == 1, "input has to be a 1D or 2D Tensor, but got Tensor of dimension ", indices.dim());
  EMBER_CHECK(offsets.dim() == 1, "offsets has to be a 1D Tensor, but got Tensor of dimension ", offsets.dim());
  EMBER_CHECK(mode >= 0 && mode <= 2, "embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), but got ", mode);
  EMBER_CHECK_KIND(!sparse, NotImplemented, "embedding_bag: sparse gradients (sparse=True) are not supported by Ember; "
                   "use sparse=False");
  EMBER_CHECK(!(mode == 2 && scale_grad_by_freq), "max mode does not support scaling the gradient by the frequency");
  const int64_t num = weight.size(0), D = weight.size(1), n = indices.numel();
  int64_t pad = -1;
  if (padding_idx) {
    pad = *padding_idx;
    EMBER_CHECK(pad >= -num && pad < num, "padding_idx must be within the number of embeddings, ", -num, " through ",
                num - 1, ", but got ", pad);
    if (pad < 0) pad += num;
  }
  if (per_sample_weights.defined()) {
    EMBER_CHECK(mode == 0, "embedding_bag: per_sample_weights only supported with mode='sum'");
    EMBER_CHECK(per_sample_weights.dim() == 1 && per_sample_weights.numel() == n,
                "expected per_sample_weights to be 1D tensor and have the same size as indices, but got ",
                per_sample_weights.sizes(), " and ", indices.sizes());
  }
  // bag boundaries
  std::vector<int64_t> off = to_vec(offsets);
  int64_t B = int64_t(off.size()) - (include_last_offset ? 1 : 0);
  EMBER_CHECK(B >= 0, "embedding_bag: offsets must have at least one element with include_last_offset=True");
  if (!off.empty()) {
    EMBER_CHECK(off[0] == 0, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                "position 0. However, got ", off[0]);
    EMBER_CHECK(off.back() <= n, "offsets[-1] can not be greater than input's length ", n, " but got offsets[-1] of ",
                off.back());
  }
  for (size_t i = 1; i < off.size(); i++)
    EMBER_CHECK(off[i - 1] <= off[i], "embedding_bag: offsets must be non-decreasing, but got offsets[", i - 1, "] = ",
                off[i - 1], " > offsets[", i, "] = ", off[i]);
  std::vector<int64_t> idx = to_vec(indices);
  for (int64_t i = 0; i < n; i++)
    EMBER_CHECK(idx[size_t(i)] >= 0 && idx[size_t(i)] < num, "Index ", i, " of input takes value ", idx[size_t(i)],
                " which is not in the valid range [0, ", num, ")");
  // the bag of each index
  std::vector<int64_t> bag_of(size_t(n), -1), bag_size(size_t(B), 0);
  for (int64_t b = 0; b < B; b++) {
    // with include_last_offset the offsets close the last bag too (its documented value is the
    // input's length); without, the last bag runs to the end of the input
    int64_t end = b + 1 < int64_t(off.size()) ? off[size_t(b) + 1] : n;
    for (int64_t i = off[size_t(b)]; i < end; i++) {
      bag_of[size_t(i)] = b;
      if (idx[size_t(i)] != pad) bag_size[size_t(b)]++;
    }
  }
  // the rows that take part: in a bag and not padding
  std::vector<int64_t> keep, keep_bag;
  for (int64_t i = 0; i < n; i++)
    if (bag_of[size_t(i)] >= 0 && idx[size_t(i)] != pad) {
      keep.push_back(i);
      keep_bag.push_back(bag_of[size_t(i)]);
    }
  Tensor keep_t = long_tensor(keep), keep_bag_t = long_tensor(keep_bag);
  Tensor rows = ember::embedding(weight, ember::index_select(indices, 0, keep_t), -1, scale_grad_by_freq, false);
  Tensor offset2bag = long_tensor(std::vector<int64_t>(bag_of.begin(), bag_of.end()));
  Tensor sizes_t = long_tensor(bag_size);
  Tensor out, max_indices;
  if (mode == 2) {
    int64_t lmax = B ? *std::max_element(bag_size.begin(), bag_size.end()) : 0;
    if (lmax == 0) {
      out = ember::zeros({B, D}, TensorOptions(weight.dtype()));
      max_indices = ember::zeros({B, D}, TensorOptions(kLong));
    } else {
      std::vector<int64_t> pos(keep.size()), fill(size_t(B), 0);
      for (size_t j = 0; j < keep.size(); j++) pos[j] = fill[size_t(keep_bag[j])]++;
      Tensor dense = ember::full({B, lmax, D}, -std::numeric_limits<double>::infinity(), TensorOptions(weight.dtype()));
      dense = ember::index_put_(dense, {keep_bag_t, long_tensor(pos)}, rows, false);
      auto [vals, arg] = ember::max(dense, 1, false);
      Tensor empty_bag = ember::eq(sizes_t, 0).unsqueeze(1);
      out = vals.masked_fill(empty_bag, 0);
      // the weight row each maximum came from
      Tensor slot_row = ember::zeros({B, lmax}, TensorOptions(kLong));
      ember::index_put_(slot_row, {keep_bag_t, long_tensor(pos)}, ember::index_select(indices, 0, keep_t).to(kLong), false);
      max_indices = ember::gather(slot_row, 1, arg).masked_fill(empty_bag, 0);
    }
  } else {
    Tensor vals = rows;
    if (per_sample_weights.defined())
      vals = vals * ember::index_select(per_sample_weights, 0, keep_t).unsqueeze(1);
    out = ember::index_put_(ember::zeros({B, D}, TensorOptions(weight.dtype())), {keep_bag_t}, vals, true);
    if (mode == 1) out = out / ember::clamp_min(sizes_t, scalar_to_tensor(int64_t(1))).to(weight.dtype()).unsqueeze(1);
    max_indices = mode == 1 ? sizes_t : ember::zeros({B}, TensorOptions(kLong));
  }
  if (mode == 0) {  // as PyTorch's forward: no offset2bag and zero bag sizes in sum mode
    offset2bag = ember::zeros({0}, TensorOptions(kLong));
    sizes_t = ember::zeros({B}, TensorOptions(kLong));
  }
  return {out, offset2bag, sizes_t, max_indices};
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.dtype() == kLong, "one_hot is only applicable to index tensor of type LongTensor.");
  if (self.numel() == 0) {
    EMBER_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
  } else {
    auto [lo, hi] = index_range(self);
    EMBER_CHECK(lo >= 0, "Class values must be non-negative.");
    if (num_classes == -1) num_classes = hi + 1;
    else EMBER_CHECK(hi < num_classes, "Class values must be smaller than num_classes.");
  }
  Tensor classes = ember::arange(0, num_classes, 1, TensorOptions(kLong));
  return ember::eq(self.unsqueeze(-1), classes).to(kLong);
}

}  // namespace ember::native
