// Padding (ember.nn.functional.pad): constant padding as narrow + cat with filled blocks;
// reflect, replicate and circular padding as an index_select per padded dim, its source positions
// from the backend's entry (kernels/padding.h; the CPU's in kernels/cpu/padding.cpp).
#include <algorithm>

#include "ember/core/checked_math.h"
#include "ember/generated/native.h"
#include "ember/iter/layout.h"
#include "ember/generated/ops.h"
#include "ember/kernels/padding.h"

EMBER_DEFINE_STUB(pad_source_index_stub)

namespace ember::native {

static Tensor pad_rowmajor(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value);
// the padded tensor in the input's layout (channels-last stays so, as PyTorch's)
Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  return to_memory_format(pad_rowmajor(self, pad, mode, value), suggest_memory_format(self));
}
static Tensor pad_rowmajor(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  EMBER_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  int64_t np = int64_t(pad.size()) / 2;
  EMBER_CHECK(np <= self.dim(), "Padding length should be less than or equal to two times the input dimension but got "
              "padding length ", pad.size(), " and input of dimension ", self.dim());
  // the output's size, checked before any part is built: each dim is n + lo + hi
  DimVector out_shape(self.sizes());
  for (int64_t i = 0; i < np; i++) {
    int64_t dim = self.dim() - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1], n = self.sizes()[dim];
    __int128 o = __int128(n) + lo + hi;
    if (o < 0) {  // constant mode: narrow() below raises PyTorch's error
      EMBER_CHECK(mode == "constant", "The input size ", n, ", plus negative padding ", lo, " and ", hi,
                  " resulted in a negative output size, which is invalid. Check dimension ", dim, " of your input.");
      break;
    }
    EMBER_CHECK(o <= INT64_MAX, "pad: the output size at dimension ", dim, " (", n, " + ", lo, " + ", hi,
                ") does not fit in int64");
    out_shape[dim] = int64_t(o);
    if (i == np - 1) check_output_size(out_shape, self.element_size(), "pad");
  }
  Tensor x = self;
  if (mode == "constant") {
    double v = value.value_or(0.0);
    for (int64_t i = 0; i < np; i++) {
      int64_t dim = self.dim() - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1];
      // -lo and size + lo in 128 bits: lo may be -2**63
      if (lo < 0) {
        EMBER_CHECK(__int128(x.sizes()[dim]) + lo >= 0, "narrow(): length must be non-negative.");
        x = x.narrow(dim, -lo, x.sizes()[dim] + lo), lo = 0;  // lo >= -size > -2**63: -lo fits
      }
      if (hi < 0) {
        EMBER_CHECK(__int128(x.sizes()[dim]) + hi >= 0, "narrow(): length must be non-negative.");
        x = x.narrow(dim, 0, x.sizes()[dim] + hi), hi = 0;
      }
      std::vector<Tensor> parts;
      DimVector shape(x.sizes());
      if (lo > 0) { shape[dim] = lo; parts.push_back(ember::full(shape, v, TensorOptions(x.dtype()).device(x.device()))); }
      parts.push_back(x);
      if (hi > 0) { shape[dim] = hi; parts.push_back(ember::full(shape, v, TensorOptions(x.dtype()).device(x.device()))); }
      if (parts.size() > 1) x = ember::cat(parts, dim);
    }
    return x.is_same(self) ? self.clone() : x;
  }
  EMBER_CHECK(!value || *value == 0.0, "Padding mode \"", mode, "\" doesn't take in value argument");
  bool reflect = mode == "reflect", replicate = mode == "replicate", circular = mode == "circular";
  EMBER_CHECK_KIND(reflect || replicate || circular, NotImplemented, "Unrecognised padding mode ", mode);
  PadMode kind = reflect ? PadMode::Reflect : replicate ? PadMode::Replicate : PadMode::Circular;
  EMBER_CHECK(np <= 3, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  EMBER_CHECK_KIND(self.dim() == np + 1 || self.dim() == np + 2, NotImplemented, "Padding size ", pad.size(),
                   " is not supported for ", self.dim(), "D input tensor.");
  auto index_kernel = pad_source_index_stub(self.device(), "pad");
  for (int64_t i = 0; i < np; i++) {
    int64_t dim = self.dim() - 1 - i, lo = pad[2 * i], hi = pad[2 * i + 1], n = x.sizes()[dim];
    if (reflect)
      EMBER_CHECK(lo < n && hi < n, "Argument #4: Padding size should be less than the corresponding input dimension, "
                  "but got: padding (", lo, ", ", hi, ") at dimension ", dim, " of input ", self.sizes());
    if (circular) {
      // a negative side crops first, and the other side wraps around what is left (PyTorch's order)
      if (lo < 0) x = x.narrow(dim, -lo, n + lo), n += lo, lo = 0;
      if (hi < 0) x = x.narrow(dim, 0, n + hi), n += hi, hi = 0;
      EMBER_CHECK(lo <= n && hi <= n, "Padding value causes wrapping around more than once.");
    }
    Tensor it = empty_tensor({std::max<int64_t>(n + hi + lo, 0)}, kLong, x.device());
    index_kernel(it, n, lo, kind);
    x = ember::index_select(x, dim, it);
  }
  return x;
}

}  // namespace ember::native

