// Overflow-checked size arithmetic (core/checked_math.h) and the C++ entry points that use it: each
// case once wrapped into a small size, a view past its storage, or signed-overflow UB.
#include <gtest/gtest.h>

#include <climits>

#include "ember/core/checked_math.h"
#include "ember/generated/ops.h"

using namespace ember;

namespace {
template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an ember::Error";
  return "";
}
constexpr int64_t k62 = int64_t(1) << 62;
}  // namespace

TEST(CheckedMath, NumelMultipliesLeftToRightLikePyTorch) {
  int64_t n;
  EXPECT_FALSE(numel_overflows({2, 3, 4}, &n));
  EXPECT_EQ(n, 24);
  EXPECT_FALSE(numel_overflows({0, k62, k62}, &n));  // the product is 0 throughout
  EXPECT_EQ(n, 0);
  EXPECT_TRUE(numel_overflows({k62, k62, 0}, &n));  // a partial product overflowed first
  EXPECT_TRUE(numel_overflows({k62, 2}, &n));        // 2**63 does not fit in int64
  EXPECT_FALSE(numel_overflows({k62, 1}, &n));
  EXPECT_EQ(checked_numel({}), 1);
  EXPECT_NE(error_message([] { checked_numel({k62, 4}); }).find("numel: integer multiplication overflow"),
            std::string::npos);
  EXPECT_NE(error_message([] { prod({k62, 4}); }).find("numel"), std::string::npos);
}

TEST(CheckedMath, StorageBytes) {
  EXPECT_EQ(storage_nbytes({2, 3}, {3, 1}, 0, 4), 24);
  EXPECT_EQ(storage_nbytes({2, 3}, {3, 1}, 5, 8), 88);
  EXPECT_EQ(storage_nbytes({0, k62}, {k62, k62}, 0, 8), 0);  // empty: no storage needed
  EXPECT_EQ(storage_nbytes({1}, {k62}, 0, 8), 8);            // a single element ignores its stride
  std::string m = error_message([] { storage_nbytes({2}, {k62 - 1}, 0, 4); });
  EXPECT_NE(m.find("Storage size calculation overflowed with sizes=[2] and strides=[4611686018427387903]"),
            std::string::npos) << m;
  EXPECT_THROW(storage_nbytes({2}, {1}, INT64_MAX, 1), Error);  // the offset alone overflows
}

TEST(CheckedMath, ContiguousStrides) {
  DimVector s = checked_contiguous_strides({2, 0, 3});
  EXPECT_EQ(s[0], 3);  // a 0 size counts as 1
  EXPECT_EQ(s[1], 3);
  EXPECT_EQ(s[2], 1);
  EXPECT_NE(error_message([] { checked_contiguous_strides({0, k62, k62}); }).find("Stride calculation overflowed"),
            std::string::npos);
}

TEST(CheckedMath, WrappingIntegerArithmetic) {
  EXPECT_EQ(wrapping_add<int64_t>(INT64_MAX, 1), INT64_MIN);
  EXPECT_EQ(wrapping_sub<int64_t>(INT64_MIN, 1), INT64_MAX);
  EXPECT_EQ(wrapping_mul<int64_t>(k62, 4), 0);
  EXPECT_EQ(wrapping_mul<int32_t>(1 << 30, 8), 0);
  EXPECT_EQ(wrapping_mul<int16_t>(-32768, -1), -32768);
  EXPECT_EQ(wrapping_mul<int8_t>(100, 3), int8_t(44));
  EXPECT_EQ(wrapping_neg<int64_t>(INT64_MIN), INT64_MIN);
  EXPECT_EQ(wrapping_add<double>(1.5, 2.0), 3.5);  // floats are plain arithmetic
}

TEST(CheckedMath, OpsRaiseInsteadOfWrapping) {
  Tensor x = ember::zeros({3});
  EXPECT_THROW(ember::as_strided(x, {2}, {k62 - 1}, std::nullopt), Error);
  EXPECT_THROW(ember::as_strided(x, {2}, {1}, k62 - 1), Error);
  EXPECT_THROW(ember::repeat_interleave(ember::arange(4.0), k62, std::nullopt, std::nullopt), Error);
  EXPECT_THROW(ember::randn({4}).repeat({k62}), Error);
  EXPECT_THROW(ember::randn({1, 4}).expand({k62 + 1, 4}), Error);
  EXPECT_THROW(ember::empty({k62, k62}), Error);
  EXPECT_THROW(ember::tensor_split(ember::arange(4.0), k62, 0), Error);
  EXPECT_THROW(ember::chunk(ember::empty({0}), int64_t(1) << 31, 0), Error);
  Tensor r = ember::arange(Scalar(INT64_MIN), Scalar(INT64_MAX), Scalar(INT64_MAX));
  ASSERT_EQ(r.numel(), 3);
  EXPECT_EQ(r[2].item().to_long(), INT64_MAX - 1);
  Tensor w = ember::add(ember::full({1}, INT64_MAX, TensorOptions(kLong)), 1);  // wraps, no UB
  EXPECT_EQ(w.item().to_long(), INT64_MIN);
}
