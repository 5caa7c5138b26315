// searchsorted and bucketize: where values would be inserted into sorted boundaries (one row, or
// one row per leading index of the values). The binary search lives in kernels/cpu/search.cpp.
#include "ember/generated/native.h"
#include "ember/generated/ops.h"
#include "ember/iter/tensor_iter.h"
#include "ember/kernels/search.h"

EMBER_DEFINE_STUB(searchsorted_stub)

namespace ember::native {

namespace {

ScalarType check_search_out(const Tensor& out, bool out_int32) {
  ScalarType od = out.dtype();
  EMBER_CHECK((od == kLong && !out_int32) || (od == kInt && out_int32),
              "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or Long(int64) depending "
              "on whether out_int32 flag is True, but we got output tensor's dtype ", od, " and out_int32 flag is ",
              out_int32 ? "True" : "False");
  return od;
}

Tensor search_impl(const Tensor& seq, const Tensor& input, bool out_int32, bool right,
                   std::optional<std::string_view> side, const Tensor& sorter, const char* op) {
  check_same_device(op, seq.device(), {&input, &sorter});
  auto kernel = searchsorted_stub(seq.device(), op);
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right", "torch.searchsorted(): side can only be 'left' or 'right' but got ",
                *side);
    EMBER_CHECK(!right || *side == "right", "torch.searchsorted(): side and right can't be set to opposites, got side of ",
                *side, " while right was True");
    right = *side == "right";
  }
  if (sorter.defined()) {
    EMBER_CHECK(sorter.sizes() == seq.sizes(), "torch.searchsorted(): boundary and sorter must have the same size, but "
                "got boundary tensor ", seq.sizes(), "and got sorter tensor ", sorter.sizes());
    EMBER_CHECK(sorter.dtype() == kLong, "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype ",
                sorter.dtype());
    if (sorter.numel() > 0 && !sorter.is_meta()) {  // (meta: no values to check)
      int64_t lo = ember::amin(sorter, {}, false).item().to_long(), hi = ember::amax(sorter, {}, false).item().to_long();
      EMBER_CHECK(lo >= 0 && hi < sorter.sizes().back(), "torch.searchsorted(): sorter index out of range");
    }
  }
  EMBER_CHECK(input.dim() > 0 || (input.dim() == 0 && input.numel() == 1 && seq.dim() == 1),
              "torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got "
              "boundaries tensor dim(", seq.dim(), ") and input value's dim(", input.dim(), ") numel(", input.numel(), ")");
  EMBER_CHECK(seq.dim() != 0, "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 dimension");
  bool matched = seq.dim() == input.dim();
  for (int64_t i = 0; matched && i + 1 < seq.dim(); i++) matched = seq.sizes()[i] == input.sizes()[i];
  EMBER_CHECK(seq.dim() == 1 || matched, "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
              "dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              seq.sizes(), " and input value tensor ", input.sizes());
  Tensor both[2] = {seq, input};
  ScalarType cd = seq.dtype() == input.dtype() ? seq.dtype() : result_type(both, 2);
  EMBER_CHECK_KIND(cd != kBool, NotImplemented, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  if (is_reduced_float(cd)) cd = kFloat;  // exact: half/bfloat16 values compare the same in float
  Tensor b = seq.to(cd).contiguous(), v = input.to(cd).contiguous();
  Tensor out = empty_tensor(input.sizes(), kLong, input.device());
  kernel(out, b, v, sorter.defined() ? sorter.contiguous() : Tensor(), right);
  return out_int32 ? out.to(kInt) : out;
}

}  // namespace

Tensor searchsorted(const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  return search_impl(seq, self, out_int32, right, side, sorter, "searchsorted");
}
const Tensor& searchsorted_out(const Tensor& out, const Tensor& seq, const Tensor& self, bool out_int32, bool right,
                               std::optional<std::string_view> side, const Tensor& sorter) {
  check_search_out(out, out_int32);
  return copy_to_out(out, search_impl(seq, self, out_int32, right, side, sorter, "searchsorted"), true);
}
Tensor searchsorted(const Tensor& seq, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const Tensor& sorter) {
  return search_impl(seq, scalar_to_tensor(self).to(seq.device()), out_int32, right, side, sorter, "searchsorted");
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  return search_impl(boundaries, self, out_int32, right, std::nullopt, Tensor(), "bucketize");
}
const Tensor& bucketize_out(const Tensor& out, const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
  check_search_out(out, out_int32);
  return copy_to_out(out, search_impl(boundaries, self, out_int32, right, std::nullopt, Tensor(), "bucketize"), true);
}
Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return native::bucketize(scalar_to_tensor(self).to(boundaries.device()), boundaries, out_int32, right);
}


}  // namespace ember::native
