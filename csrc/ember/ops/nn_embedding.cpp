// Embeddings and one_hot (ember.nn.functional.embedding, embedding_bag, one_hot).
// embedding is one gather with its own backward (autograd/formulas.cpp: embedding_backward, an
// accumulating index_put_ that skips padding_idx and can scale by inverse frequency);
// embedding_bag reduces its rows per bag with differentiable ops on top of it, after the backend
// (kernels/embedding.h; the CPU's in kernels/cpu/embedding.cpp) has validated and planned the bags.
#include <algorithm>
#include <limits>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/embedding.h"
#include "ember/ops/nn_common.h"

EMBER_DEFINE_STUB(index_range_stub)
EMBER_DEFINE_STUB(embedding_bag_plan_stub)

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

// [min, max] of an integer tensor (numel > 0), from the backend.
std::pair<int64_t, int64_t> index_range(const Tensor& indices, const char* op) {
  return index_range_stub(indices.device(), op)(indices);
}

void check_in_range(const Tensor& indices, int64_t n, const char* op) {
  if (indices.numel() == 0 || indices.is_meta()) return;  // meta indices have no values to check
  auto [lo, hi] = index_range(indices, op);
  EMBER_CHECK_KIND(lo >= 0 && hi < n, Index, "index out of range in self");
}

}  // namespace

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse) {
  (void)padding_idx;  // backward's business (autograd/formulas.cpp: embedding_backward)
  (void)scale_grad_by_freq;
  (void)sparse;
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  check_index_dtype(indices, "1 'indices'", "embedding");
  check_same_device("embedding", weight.device(), {&indices});
  check_in_range(indices, weight.size(0), "embedding");
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
  check_same_device("embedding_renorm_", self.device(), {&indices});
  check_in_range(indices, self.size(0), "embedding_renorm_");
  if (indices.numel() == 0) return self;
  autograd::AutoGradMode no_grad(false);
  TensorOptions flags = TensorOptions(kBool).device(self.device());
  Tensor seen = ember::zeros({self.size(0)}, flags);
  ember::index_put_(seen, {indices.reshape({-1}).to(kLong)}, ember::ones({}, flags), false);
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
  check_same_device("embedding_bag", weight.device(), {&indices, &offsets, &per_sample_weights});
  if (weight.is_meta()) {  // shapes only, as PyTorch's meta kernel gives them (the bags come from offsets' values)
    const int64_t B = std::max<int64_t>(offsets.size(0) - (include_last_offset ? 1 : 0), 0);
    const Device m = weight.device();
    return {empty_tensor({B, D}, weight.dtype(), m), empty_tensor({n}, kLong, m),
            empty_tensor({offsets.size(0)}, kLong, m), mode == 2 ? empty_tensor({B, D}, kLong, m) : empty_tensor({0}, kLong, m)};
  }
  auto plan_kernel = embedding_bag_plan_stub(indices.device(), "embedding_bag");
  EmbeddingBagPlan plan = plan_kernel(indices, offsets, num, pad, include_last_offset, mode == 2);
  const int64_t B = plan.bags;
  const TensorOptions opts = TensorOptions(weight.dtype()).device(weight.device());
  const TensorOptions longs = TensorOptions(kLong).device(weight.device());
  Tensor keep_t = plan.keep, keep_bag_t = plan.keep_bag;
  Tensor rows = ember::embedding(weight, ember::index_select(indices, 0, keep_t), -1, scale_grad_by_freq, sparse);
  Tensor offset2bag = plan.offset2bag;
  Tensor sizes_t = plan.bag_size;
  Tensor out, max_indices;
  if (mode == 2) {
    int64_t lmax = plan.max_bag;
    if (lmax == 0) {
      out = ember::zeros({B, D}, opts);
      max_indices = ember::zeros({B, D}, longs);
    } else {
      Tensor dense = ember::full({B, lmax, D}, -std::numeric_limits<double>::infinity(), opts);
      dense = ember::index_put_(dense, {keep_bag_t, plan.keep_slot}, rows, false);
      auto [vals, arg] = ember::max(dense, 1, false);
      Tensor empty_bag = ember::eq(sizes_t, 0).unsqueeze(1);
      out = vals.masked_fill(empty_bag, 0);
      // the weight row each maximum came from
      Tensor slot_row = ember::zeros({B, lmax}, longs);
      ember::index_put_(slot_row, {keep_bag_t, plan.keep_slot}, ember::index_select(indices, 0, keep_t).to(kLong), false);
      max_indices = ember::gather(slot_row, 1, arg).masked_fill(empty_bag, 0);
    }
  } else {
    Tensor vals = rows;
    if (per_sample_weights.defined())
      vals = vals * ember::index_select(per_sample_weights, 0, keep_t).unsqueeze(1);
    out = ember::index_put_(ember::zeros({B, D}, opts), {keep_bag_t}, vals, true);
    if (mode == 1) out = out / ember::clamp_min(sizes_t, scalar_to_tensor(int64_t(1))).to(weight.dtype()).unsqueeze(1);
    max_indices = mode == 1 ? sizes_t : ember::zeros({B}, longs);
  }
  if (mode == 0) {  // as PyTorch's forward: no offset2bag and zero bag sizes in sum mode
    offset2bag = ember::zeros({0}, longs);
    sizes_t = ember::zeros({B}, longs);
  }
  return {out, offset2bag, sizes_t, max_indices};
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.dtype() == kLong, "one_hot is only applicable to index tensor of type LongTensor.");
  if (self.is_meta()) {  // no values: the classes must be given
    EMBER_CHECK(num_classes != -1, "Can not infer total number of classes from meta tensor.");
  } else if (self.numel() == 0) {
    EMBER_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
  } else {
    auto [lo, hi] = index_range(self, "one_hot");
    EMBER_CHECK(lo >= 0, "Class values must be non-negative.");
    if (num_classes == -1) num_classes = hi + 1;
    else EMBER_CHECK(hi < num_classes, "Class values must be smaller than num_classes.");
  }
  Tensor classes = ember::arange(0, num_classes, 1, TensorOptions(kLong).device(self.device()));
  return ember::eq(self.unsqueeze(-1), classes).to(kLong);
}

}  // namespace ember::native
