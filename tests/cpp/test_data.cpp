// ember::data (C++ frontend): datasets, transforms, samplers, and the DataLoader's batching,
// shuffling, drop_last, worker threads (order, coverage, error propagation, early exit), and the
// MNIST IDX reader on the Fashion-MNIST files when they are installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "ember/ember.h"

using namespace ember;

namespace {

// Example i is (i as a float tensor of shape (2,), i as int64); optionally throws at one index.
class Indices : public data::Dataset {
 public:
  explicit Indices(int64_t n, int64_t bad = -1) : n_(n), bad_(bad) {}
  data::Example get(int64_t i) override {
    if (i == bad_) throw std::runtime_error("bad example " + std::to_string(i));
    gets++;
    return {ember::full({2}, double(i)), ember::full({}, i, TensorOptions(kLong))};
  }
  int64_t size() const override { return n_; }
  std::atomic<int64_t> gets{0};
 private:
  int64_t n_, bad_;
};

std::vector<int64_t> targets_of(data::DataLoader& loader, std::vector<int64_t>* batch_sizes = nullptr) {
  std::vector<int64_t> out;
  for (auto& batch : loader) {
    EXPECT_EQ(batch.data.dim(), 2);
    EXPECT_EQ(batch.data.size(1), 2);
    if (batch_sizes) batch_sizes->push_back(batch.target.size(0));
    for (int64_t j = 0; j < batch.target.size(0); j++) {
      out.push_back(batch.target[j].item<int64_t>());
      EXPECT_EQ(batch.data[j][1].item<double>(), double(out.back()));
    }
  }
  return out;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

TEST(Data, TensorDatasetTransformsAndStack) {
  Tensor x = ember::randn({6, 3}), y = ember::arange(0, 6, 1, TensorOptions(kLong));
  auto ds = std::make_shared<data::TensorDataset>(x, y);
  EXPECT_EQ(ds->size(), 6);
  auto e = ds->get(2);
  EXPECT_EQ((e.data - x[2]).abs().max().item<double>(), 0.0);
  EXPECT_EQ(e.target.item<int64_t>(), 2);
  EXPECT_THROW(ds->get(6), Error);
  EXPECT_THROW(data::TensorDataset(x, ember::zeros({5})), Error);

  auto norm = ds->map(data::transforms::Normalize(0.5, 2.0));
  EXPECT_LT((norm->get(1).data - (x[1] - 0.5) / 2.0).abs().max().item<double>(), 1e-7);
  // per-channel values broadcast over dim 0
  data::transforms::Normalize per({1.0, 2.0, 3.0}, {1.0, 1.0, 2.0});
  auto pe = per.apply({ember::ones({3, 2}), Tensor()});
  EXPECT_EQ(pe.data[2][0].item<double>(), -1.0);
  EXPECT_THROW(data::transforms::Normalize(0.0, 0.0), Error);

  auto lambda = ds->map(data::transforms::Lambda([](data::Example ex) {
    ex.target = ex.target * 10;
    return ex;
  }));
  EXPECT_EQ(lambda->get(3).target.item<int64_t>(), 30);

  data::transforms::Stack stack;
  auto batch = stack.apply_batch({ds->get(0), ds->get(4)});
  EXPECT_EQ(batch.data.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(batch.target.sizes(), IntArrayRef({2}));
  EXPECT_THROW(stack.apply_batch({}), Error);
}

TEST(Data, Samplers) {
  data::SequentialSampler seq;
  EXPECT_EQ(seq.indices(5), iota(5));
  data::RandomSampler rnd;
  manual_seed(0);
  auto a = rnd.indices(100);
  auto b = rnd.indices(100);
  EXPECT_NE(a, b);  // a new order every epoch
  std::sort(a.begin(), a.end());
  EXPECT_EQ(a, iota(100));
  manual_seed(0);
  auto c = rnd.indices(100);
  manual_seed(0);
  EXPECT_EQ(rnd.indices(100), c);
}

TEST(Data, DataLoaderBatchingAndDropLast) {
  auto ds = std::make_shared<Indices>(10);
  data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(4));
  EXPECT_EQ(loader.size(), 3u);
  std::vector<int64_t> sizes;
  EXPECT_EQ(targets_of(loader, &sizes), iota(10));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  data::DataLoader dropping(ds, data::DataLoaderOptions().batch_size(4).drop_last(true));
  EXPECT_EQ(dropping.size(), 2u);
  EXPECT_EQ(targets_of(dropping), iota(8));
  EXPECT_THROW(data::DataLoader(ds, data::DataLoaderOptions().batch_size(0)), Error);
}

TEST(Data, DataLoaderWorkersKeepSamplerOrder) {
  auto ds = std::make_shared<Indices>(203);
  for (int64_t workers : {1, 3}) {
    data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(8).workers(workers));
    EXPECT_EQ(targets_of(loader), iota(203));
    // shuffled: each epoch a permutation, the same one as the sampler's with the same seed
    data::DataLoader shuffled(ds, data::DataLoaderOptions().batch_size(8).workers(workers).shuffle(true));
    manual_seed(7);
    auto e1 = targets_of(shuffled);
    manual_seed(7);
    data::RandomSampler rnd;
    EXPECT_EQ(e1, rnd.indices(203));
    auto e2 = targets_of(shuffled);
    EXPECT_NE(e1, e2);
    std::sort(e2.begin(), e2.end());
    EXPECT_EQ(e2, iota(203));
  }
}

TEST(Data, DataLoaderErrorsAndEarlyExit) {
  auto bad = std::make_shared<Indices>(100, /*bad=*/37);
  for (int64_t workers : {0, 2}) {
    data::DataLoader loader(bad, data::DataLoaderOptions().batch_size(4).workers(workers));
    EXPECT_THROW(targets_of(loader), std::runtime_error);
    // the loader is usable again afterwards
    EXPECT_THROW(targets_of(loader), std::runtime_error);
  }
  // leaving an epoch early stops the workers without consuming the rest
  auto ds = std::make_shared<Indices>(100000);
  {
    data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(10).workers(2).prefetch_factor(2));
    int n = 0;
    for (auto& batch : loader) {
      (void)batch;
      if (++n == 3) break;
    }
  }
  EXPECT_LT(ds->gets.load(), 1000);
}

TEST(Data, IdxReaderAndMNIST) {
  namespace fs = std::filesystem;
  fs::path tmp = fs::temp_directory_path() / ("ember_idx_" + std::to_string(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary);
    const unsigned char bytes[] = {0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3, 4, 5, 255};
    f.write(reinterpret_cast<const char*>(bytes), sizeof(bytes));
  }
  Tensor t = data::datasets::read_idx(tmp.string());
  EXPECT_EQ(t.sizes(), IntArrayRef({2, 3}));
  EXPECT_EQ(t.dtype(), kByte);
  EXPECT_EQ(t[1][2].item<int64_t>(), 255);
  {
    std::ofstream f(tmp, std::ios::binary);
    f << "not an idx file";
  }
  EXPECT_THROW(data::datasets::read_idx(tmp.string()), Error);
  fs::remove(tmp);
  EXPECT_THROW(data::datasets::MNIST("/nonexistent"), Error);

  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!fs::exists(root + "/t10k-images-idx3-ubyte.gz") && !fs::exists(root + "/t10k-images-idx3-ubyte"))
    GTEST_SKIP() << "Fashion-MNIST not installed";
  data::datasets::MNIST test(root, data::datasets::MNIST::Mode::kTest);
  EXPECT_EQ(test.size(), 10000);
  EXPECT_FALSE(test.is_train());
  auto e = test.get(0);
  EXPECT_EQ(e.data.sizes(), IntArrayRef({1, 28, 28}));
  EXPECT_EQ(e.data.dtype(), kFloat);
  EXPECT_GE(test.images().min().item<double>(), 0.0);
  EXPECT_LE(test.images().max().item<double>(), 1.0);
  EXPECT_EQ(test.targets().max().item<int64_t>(), 9);
  EXPECT_EQ(e.target.item<int64_t>(), 9);  // the first test image is an ankle boot
}
