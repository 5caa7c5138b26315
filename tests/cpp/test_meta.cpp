// The meta device from C++: tensors without memory whose ops compute only their results' sizes,
// strides and dtypes; what would read elements raises NotImplementedError instead of touching a
// null pointer.
#include <gtest/gtest.h>

#include <sstream>

#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "error_kind.h"

using namespace ember;
using test_util::error_kind;

namespace {
const Device kMeta(DeviceType::Meta);
TensorOptions meta(ScalarType t = kFloat) { return TensorOptions(t).device(kMeta); }
}  // namespace

TEST(Meta, DeviceParsesAndPrints) {
  Device d("meta");
  EXPECT_TRUE(d.is_meta());
  EXPECT_EQ(d.str(), "meta");
  d.check_available();  // always there: no memory to find
}

TEST(Meta, TensorsHaveMetadataButNoData) {
  Tensor x = ember::empty({3, 4}, meta());
  EXPECT_TRUE(x.is_meta());
  EXPECT_TRUE(x.off_host());
  EXPECT_EQ(x.device(), kMeta);
  EXPECT_EQ(x.impl()->storage()->nbytes(), 48u);
  EXPECT_EQ(x.kernel_data(), nullptr);
  EXPECT_EQ(error_kind([&] { (void)x.data_ptr(); }), ErrorKind::NotImplemented);
  EXPECT_EQ(error_kind([&] { (void)x.sum().item(); }), ErrorKind::Runtime);  // PyTorch's RuntimeError
  EXPECT_EQ(error_kind([&] { (void)x.to(Device()); }), ErrorKind::NotImplemented);
}

TEST(Meta, OpsComputeShapesDtypesAndStrides) {
  Tensor x = ember::empty({3, 4}, meta());
  Tensor i = ember::empty({3, 4}, meta(kInt));
  Tensor y = x.t().contiguous();
  EXPECT_TRUE(y.is_meta());
  EXPECT_EQ(y.sizes(), IntArrayRef({4, 3}));
  EXPECT_EQ(y.strides(), IntArrayRef({3, 1}));
  Tensor z = ember::add(i, x);  // int + float promotes
  EXPECT_EQ(z.dtype(), kFloat);
  EXPECT_EQ(ember::sum(i).dtype(), kLong);
  Tensor m = ember::matmul(x, ember::empty({4, 5}, meta()));
  EXPECT_EQ(m.sizes(), IntArrayRef({3, 5}));
  Tensor c = ember::conv2d(ember::empty({2, 3, 9, 9}, meta()), ember::empty({8, 3, 3, 3}, meta()), Tensor(),
                           IntArrayRef({2, 2}), IntArrayRef({0, 0}));
  EXPECT_EQ(c.sizes(), IntArrayRef({2, 8, 4, 4}));
}

TEST(Meta, CopiesIntoMetaWriteNothingAndKeepTheLayout) {
  Tensor host = ember::ones({2, 3}).t();
  Tensor moved = host.to(kMeta);
  EXPECT_TRUE(moved.is_meta());
  EXPECT_EQ(moved.strides(), host.strides());  // PyTorch's to() preserves a dense layout
  Tensor dst = ember::empty({2, 3}, meta());
  ember::copy_(dst, ember::ones({3}));
  EXPECT_EQ(error_kind([&] { ember::copy_(dst, ember::ones({4})); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::copy_(ember::ones({2, 3}), dst); }), ErrorKind::NotImplemented);
}

TEST(Meta, OpsThatNeedValuesRaise) {
  Tensor x = ember::empty({5}, meta());
  EXPECT_EQ(error_kind([&] { (void)ember::nonzero(x); }), ErrorKind::NotImplemented);
}

TEST(Meta, PrintsTypeAndSizes) {
  std::ostringstream os;
  os << ember::empty({2, 3}, meta());
  EXPECT_EQ(os.str(), "[ MetaFloatType{2,3} ]");
}

TEST(Meta, MovesKeepADenseLayoutAndItsBytes) {
  // a transposed CPU tensor to meta and back through a dense copy: the layout travels, as PyTorch's
  Tensor host = ember::arange(6, TensorOptions(kFloat)).reshape({2, 3}).t();
  Tensor m = host.to(kMeta);
  EXPECT_EQ(m.strides(), host.strides());
  Tensor back = ember::empty_like(m, TensorOptions().device(Device()));
  EXPECT_FALSE(back.is_meta());
  EXPECT_EQ(back.strides(), host.strides());
}
