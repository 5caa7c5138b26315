// The shape, indexing, sort, scatter, scan, search, histogram and distance ops through the backend
// seam: on a device with only elementwise, reduction and copy kernels (host_device.h), the ops with
// kernels of their own raise NotImplementedError naming the op, the composites run and match the
// CPU, and arguments on two devices raise PyTorch's RuntimeError.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "error_kind.h"
#include "device_checks.h"
#include "host_device.h"

using namespace ember;
using test_util::error_kind;
using test_util::host_device;
using namespace test_util;

namespace {

void expect_no_kernel(const char* op, const std::function<void()>& f) { test_util::expect_no_kernel(f, op); }

void expect_device_mismatch(const char* what, const std::function<void()>& f) { expect_mixed_devices(f, what); }

#define expect_same_at(...) expect_same(__VA_ARGS__, __LINE__)

Tensor dev(const Tensor& t) { return t.to(host_device()); }

}  // namespace

TEST(SeamShape, SortFamilyHasNoKernelOnTheDevice) {
  test_util::HostDevice device;
  Tensor x = dev(ember::randn({3, 5}));
  expect_no_kernel("sort", [&] { ember::sort(x, 1); });
  expect_no_kernel("argsort", [&] { ember::argsort(x, int64_t(1), false); });
  expect_no_kernel("topk", [&] { ember::topk(x, 2, 1); });
  expect_no_kernel("kthvalue", [&] { ember::kthvalue(x, 2, 1); });
  expect_no_kernel("median", [&] { ember::median(x, 1); });
  expect_no_kernel("mode", [&] { ember::mode(x, 1); });
  expect_no_kernel("unique", [&] { ember::unique2(x); });
  expect_no_kernel("unique_dim", [&] { ember::unique_dim(x, 0); });
  expect_no_kernel("unique_consecutive", [&] { ember::unique_consecutive2(x); });
}

TEST(SeamShape, IndexingAndScatterHaveNoKernelOnTheDevice) {
  test_util::HostDevice device;
  Tensor x = dev(ember::randn({4, 3}));
  Tensor i = dev(longs({2, 0, 1}));
  Tensor gi = dev(ember::zeros({2, 3}, TensorOptions(kLong)));
  expect_no_kernel("gather", [&] { ember::gather(x, 0, gi); });
  expect_no_kernel("scatter", [&] { ember::scatter(x, 0, gi, dev(ember::ones({2, 3}))); });
  expect_no_kernel("scatter_add", [&] { ember::scatter_add(x, 0, gi, dev(ember::ones({2, 3}))); });
  expect_no_kernel("scatter_reduce", [&] { ember::scatter_reduce(x, 0, gi, dev(ember::ones({2, 3})), "amax"); });
  expect_no_kernel("index_select", [&] { ember::index_select(x, 0, i); });
  expect_no_kernel("index", [&] { ember::index(x, {i}); });
  expect_no_kernel("index_put_", [&] { ember::index_put_(x.clone(), {i}, dev(ember::ones({3, 3}))); });
  expect_no_kernel("nonzero", [&] { ember::nonzero(x); });
  expect_no_kernel("nonzero", [&] { ember::masked_select(x, x.gt(0)); });
  expect_no_kernel("take", [&] { ember::take(x, i); });
  expect_no_kernel("repeat_interleave", [&] { ember::repeat_interleave(i); });
  // index tensors given on the CPU are moved to the indexed tensor's device, as in PyTorch
  expect_no_kernel("index", [&] { ember::index(x, {longs({1})}); });
}

TEST(SeamShape, ScansSearchesHistogramsDistancesHaveNoKernelOnTheDevice) {
  test_util::HostDevice device;
  Tensor x = dev(ember::randn({3, 4}));
  expect_no_kernel("cummax", [&] { ember::cummax(x, 1); });
  expect_no_kernel("cummin", [&] { ember::cummin(x, 0); });
  expect_no_kernel("logcumsumexp", [&] { ember::logcumsumexp(x, 1); });
  Tensor b = dev(ember::arange(0, 5, 1, TensorOptions(kFloat)));
  expect_no_kernel("searchsorted", [&] { ember::searchsorted(b, x); });
  expect_no_kernel("searchsorted", [&] { ember::searchsorted(b, Scalar(2.5)); });
  expect_no_kernel("bucketize", [&] { ember::bucketize(x, b); });
  expect_no_kernel("histc", [&] { ember::histc(x, 4, 0, 1); });
  expect_no_kernel("bincount", [&] { ember::bincount(dev(longs({1, 3, 3}))); });
  expect_no_kernel("cdist", [&] { ember::cdist(x, x, 1.0); });
  expect_no_kernel("tril_indices", [&] { ember::tril_indices(3, 3, 0, TensorOptions().device(host_device())); });
  expect_no_kernel("triu_indices", [&] { ember::triu_indices(3, 4, 1, TensorOptions().device(host_device())); });
  expect_no_kernel("combinations", [&] { ember::combinations(dev(ember::randn({4})), 2); });
}

TEST(SeamShape, CompositesRunOnTheDevice) {
  test_util::HostDevice device;
  Tensor a = ember::randn({3, 4}), b = ember::randn({3, 4}), v = ember::randn({3, 3});
  Tensor da = dev(a), db = dev(b), dv = dev(v);
  expect_same_at(ember::hstack({da, db}), ember::hstack({a, b}));
  expect_same_at(ember::vstack({da, db}), ember::vstack({a, b}));
  expect_same_at(ember::column_stack({da, db}), ember::column_stack({a, b}));
  expect_same_at(ember::flip(da, IntArrayRef({int64_t(1)})), ember::flip(a, IntArrayRef({int64_t(1)})));
  expect_same_at(ember::rot90(da, 1, IntArrayRef({int64_t(0), int64_t(1)})), ember::rot90(a, 1, IntArrayRef({int64_t(0), int64_t(1)})));
  expect_same_at(ember::repeat(da, IntArrayRef({int64_t(2), int64_t(1), int64_t(3)})),
              ember::repeat(a, IntArrayRef({int64_t(2), int64_t(1), int64_t(3)})));
  expect_same_at(ember::tile(da, IntArrayRef({int64_t(2)})), ember::tile(a, IntArrayRef({int64_t(2)})));
  expect_same_at(ember::diff(da, 2, 1), ember::diff(a, 2, 1));
  expect_same_at(ember::diag_embed(da), ember::diag_embed(a));
  expect_same_at(ember::trace(dv), ember::trace(v));
  expect_same_at(ember::cross(dv, dev(v * 2 + 1), 1), ember::cross(v, v * 2 + 1, 1));
  expect_same_at(ember::cat({da, db}, 0), ember::cat({a, b}, 0));
  std::vector<Tensor> parts = ember::tensor_split(da, longs({1, 3}), 1), cpu_parts = ember::tensor_split(a, longs({1, 3}), 1);
  ASSERT_EQ(parts.size(), cpu_parts.size());
  for (size_t k = 0; k < parts.size(); k++) expect_same_at(parts[k].contiguous(), cpu_parts[k].contiguous());
  Tensor x = ember::randn({3}), y = ember::randn({2});
  expect_same_at(ember::cartesian_prod({dev(x), dev(y)}), ember::cartesian_prod({x, y}));
}

TEST(SeamShape, ArgumentsOnTwoDevicesRaise) {
  test_util::HostDevice device;
  Tensor x = ember::randn({4, 3}), dx = dev(x);
  Tensor i = longs({2, 0, 1}), gi = ember::zeros({2, 3}, TensorOptions(kLong)), src = ember::ones({2, 3});
  expect_device_mismatch("gather", [&] { ember::gather(dx, 0, gi); });
  expect_device_mismatch("scatter", [&] { ember::scatter(dx, 0, dev(gi), src); });
  expect_device_mismatch("scatter_add", [&] { ember::scatter_add(x, 0, dev(gi), src); });
  expect_device_mismatch("scatter_reduce", [&] { ember::scatter_reduce(dx, 0, gi, dev(src), "sum"); });
  expect_device_mismatch("index_select", [&] { ember::index_select(dx, 0, i); });
  expect_device_mismatch("index_add_", [&] { ember::index_add_(dx.clone(), 0, dev(i), ember::ones({3, 3})); });
  expect_device_mismatch("index_copy", [&] { ember::index_copy(dx, 0, i, dev(ember::ones({3, 3}))); });
  expect_device_mismatch("index_put_", [&] { ember::index_put_(dx.clone(), {dev(i)}, ember::ones({3, 3})); });
  expect_device_mismatch("take", [&] { ember::take(dx, i); });
  expect_device_mismatch("masked_scatter", [&] { ember::masked_scatter(dx, x.gt(0), dev(ember::ones({12}))); });
  expect_device_mismatch("searchsorted", [&] { ember::searchsorted(dev(ember::arange(0, 5, 1)), x); });
  expect_device_mismatch("bincount", [&] { ember::bincount(dev(longs({1, 2})), ember::ones({2})); });
  expect_device_mismatch("cdist", [&] { ember::cdist(dx, x, 1.0); });
  expect_device_mismatch("cat", [&] { ember::cat({dx, x}, 0); });
  expect_device_mismatch("hstack", [&] { ember::hstack({x, dx}); });
  // split points are host numbers: PyTorch wants them on the CPU
  EXPECT_EQ(error_kind([&] { ember::tensor_split(x, dev(longs({1})), 0); }), ErrorKind::Runtime);
  // an index tensor on a device other than the CPU and the indexed tensor's is refused
  EXPECT_EQ(error_kind([&] { ember::index(x, {dev(i)}); }), ErrorKind::Runtime);
}

// The CPU results of the moved kernels are those of the reference values (a smoke check that the
// CPU entries are registered; the Python suite compares every op with PyTorch).
TEST(SeamShape, CpuEntriesAreRegistered) {
  Tensor x = longs({3, 1, 2, 1});
  EXPECT_TRUE(ember::eq(std::get<0>(ember::sort(x, 0)), longs({1, 1, 2, 3})).all().item().to_bool());
  EXPECT_TRUE(ember::eq(ember::bincount(x), longs({0, 2, 1, 1})).all().item().to_bool());
  EXPECT_TRUE(ember::eq(ember::repeat_interleave(longs({2, 0, 1})), longs({0, 0, 2})).all().item().to_bool());
  EXPECT_TRUE(ember::eq(ember::searchsorted(longs({1, 2, 3}), longs({0, 2, 4})), longs({0, 1, 3})).all().item().to_bool());
  Tensor nz = ember::nonzero(x.gt(1));
  EXPECT_EQ(nz.size(0), 2);
  EXPECT_EQ(nz.size(1), 1);
  EXPECT_EQ(ember::tril_indices(3, 3).size(1), 6);
}
