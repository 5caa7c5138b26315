// Sparse COO tensors from C++: construction and its checks, coalesce, conversions, the ops with
// sparse kernels, sparse embedding gradients through the engine, and the refusals of every other op.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/autograd/node.h"
#include "ember/core/factories.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/sparse/sparse_tensor.h"
#include "error_kind.h"

using namespace ember;
using test_util::error_kind;

namespace {
// [[0, 1, 1, 0], [2, 0, 2, 2]] with values 1..4: (0, 2) twice
Tensor example() {
  Tensor idx = ember::tensor({{0, 1, 1, 0}, {2, 0, 2, 2}}).to(kLong);
  Tensor val = ember::tensor({1.0, 2.0, 3.0, 4.0});
  return ember::_sparse_coo_tensor(idx, val, {2, 3});
}
double at(const Tensor& t, int64_t i, int64_t j) { return t.select(0, i).select(0, j).item().to_double(); }
}  // namespace

TEST(Sparse, ConstructCoalesceAndDensify) {
  Tensor s = example();
  ASSERT_TRUE(s.is_sparse());
  EXPECT_EQ(s.sizes(), IntArrayRef({2, 3}));
  auto& impl = sparse::impl_of(s);
  EXPECT_EQ(impl.nnz(), 4);
  EXPECT_FALSE(impl.coalesced());
  Tensor c = ember::coalesce(s);
  EXPECT_EQ(sparse::impl_of(c).nnz(), 3);
  EXPECT_TRUE(sparse::impl_of(c).coalesced());
  Tensor d = ember::_to_dense(s);
  EXPECT_FALSE(d.is_sparse());
  EXPECT_EQ(at(d, 0, 2), 5.0);
  EXPECT_EQ(at(d, 1, 0), 2.0);
  EXPECT_EQ(at(d, 1, 2), 3.0);
  EXPECT_EQ(ember::sum(d).item().to_double(), ember::sum(s).item().to_double());
  // dense -> sparse -> dense round trip
  Tensor back = ember::_to_dense(ember::_to_sparse_coo(d));
  EXPECT_TRUE(ember::all(ember::eq(back, d)).item().to_bool());
}

TEST(Sparse, ConstructionChecks) {
  Tensor idx = ember::tensor({{0, 5}}).to(kLong);
  Tensor val = ember::tensor({1.0, 2.0});
  EXPECT_EQ(error_kind([&] { ember::_sparse_coo_tensor(idx, val, {3}); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::_sparse_coo_tensor(idx, ember::tensor({1.0}), {9}); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { ember::_sparse_coo_tensor(ember::tensor({0, 1}).to(kLong), val, {3}); }),
            ErrorKind::Runtime);
}

TEST(Sparse, ArithmeticKeepsOrDropsTheLayout) {
  Tensor s = example();
  Tensor dense = ember::ones({2, 3});
  Tensor r = dense + s;  // dense + sparse: dense
  EXPECT_FALSE(r.is_sparse());
  EXPECT_EQ(at(r, 0, 2), 6.0);
  Tensor twice = s + s;  // sparse + sparse: sparse, uncoalesced
  EXPECT_TRUE(twice.is_sparse());
  EXPECT_EQ(at(ember::_to_dense(twice), 0, 2), 10.0);
  EXPECT_EQ(at(ember::_to_dense(s * 3), 1, 2), 9.0);
  EXPECT_EQ(error_kind([&] { (void)(s + dense); }), ErrorKind::Runtime);  // add(sparse, dense)
  dense.add_(s, Scalar(-1));
  EXPECT_EQ(at(dense, 0, 2), -4.0);
  Tensor z = ember::clone(s);
  z.zero_();
  EXPECT_EQ(sparse::impl_of(z).nnz(), 0);
  EXPECT_EQ(sparse::impl_of(s).nnz(), 4);  // the clone was separate
}

TEST(Sparse, ZeroPreservingOpsRunOnTheCoalescedValues) {
  Tensor s = example() * -1;
  Tensor a = ember::abs(s);  // |-(1 + 4)| at (0, 2): after the duplicates are summed
  ASSERT_TRUE(a.is_sparse());
  EXPECT_TRUE(sparse::impl_of(a).coalesced());
  EXPECT_EQ(at(ember::_to_dense(a), 0, 2), 5.0);
  EXPECT_EQ(error_kind([&] { ember::sqrt_(s); }), ErrorKind::Runtime);  // in place: coalesced input only
  Tensor c = ember::coalesce(s);
  ember::neg_(c);
  EXPECT_EQ(at(ember::_to_dense(c), 1, 0), 2.0);
  EXPECT_NEAR(ember::norm(c).item().to_double(), std::sqrt(25.0 + 4.0 + 9.0), 1e-6);
}

TEST(Sparse, OtherOpsRefuseWithoutReadingStorage) {
  Tensor s = example();
  EXPECT_EQ(error_kind([&] { ember::exp(s); }), ErrorKind::NotImplemented);
  EXPECT_EQ(error_kind([&] { s.view({6}); }), ErrorKind::NotImplemented);
  EXPECT_EQ(error_kind([&] { s.transpose(0, 1); }), ErrorKind::NotImplemented);
  EXPECT_EQ(error_kind([&] { ember::cat({s, s}); }), ErrorKind::NotImplemented);
  EXPECT_EQ(error_kind([&] { s.data_ptr(); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { s.item(); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { s.requires_grad_(true); }), ErrorKind::NotImplemented);
}

TEST(Sparse, EmbeddingGradientIsSparseAndAccumulates) {
  Tensor w = ember::ones({5, 2}).requires_grad_(true);
  Tensor idx = ember::tensor({1, 3, 1}).to(kLong);
  ember::sum(ember::embedding(w, idx, -1, false, true)).backward();
  Tensor g = w.grad();
  ASSERT_TRUE(g.is_sparse());
  EXPECT_EQ(sparse::impl_of(g).nnz(), 3);
  ember::sum(ember::embedding(w, idx, -1, false, true)).backward();
  EXPECT_TRUE(w.grad().is_sparse());
  Tensor d = ember::_to_dense(w.grad());
  EXPECT_EQ(at(d, 1, 0), 4.0);
  EXPECT_EQ(at(d, 3, 1), 2.0);
  EXPECT_EQ(at(d, 0, 0), 0.0);
  // padding_idx rows get nothing
  Tensor w2 = ember::ones({5, 2}).requires_grad_(true);
  ember::sum(ember::embedding(w2, idx, 1, false, true)).backward();
  EXPECT_EQ(sparse::impl_of(w2.grad()).nnz(), 1);
}
