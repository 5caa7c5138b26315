// libtorch-style data loading: a custom Dataset, .map(Normalize/Lambda/Stack), samplers, loader options
// (workers, drop_last) and MNIST on the Fashion-MNIST files. Exits non-zero on the first wrong value.
// (Includes torch/data.h and ember.h directly until <torch/torch.h> gathers them.)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "check.h"

namespace data = torch::data;
using ember::Tensor;

namespace {

// Example i: data = (i, 2i) as float, target = i as int64; get(fail_at) throws.
class Ramp : public data::datasets::Dataset<Ramp> {
 public:
  explicit Ramp(size_t n, std::optional<size_t> fail_at = std::nullopt) : n_(n), fail_at_(fail_at) {}
  data::Example<> get(size_t index) override {
    if (fail_at_ && index == *fail_at_) throw std::runtime_error("example " + std::to_string(index) + " is broken");
    double i = double(index);
    Tensor d = ember::arange(0, 2, 1, ember::TensorOptions(ember::kFloat)) * i + i;  // (i, 2i)
    return {d, ember::full({}, int64_t(index), ember::TensorOptions(ember::kLong))};
  }
  std::optional<size_t> size() const override { return n_; }

 private:
  size_t n_;
  std::optional<size_t> fail_at_;
};

double max_abs_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

std::vector<int64_t> values(const Tensor& t) {
  Tensor c = t.contiguous();
  std::vector<int64_t> out;
  for (int64_t i = 0; i < c.numel(); i++) out.push_back(c.reshape({-1})[i].item<int64_t>());
  return out;
}

// The targets of every batch of a stacked loader, batch by batch.
template <class Loader>
std::vector<std::vector<int64_t>> target_batches(Loader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (auto& batch : loader) out.push_back(values(batch.target));
  return out;
}

void custom_dataset() {
  Ramp ramp(7);
  EXPECT(ramp.size().value() == 7);
  data::Example<> e = ramp.get(3);
  EXPECT(e.data.sizes().vec() == std::vector<int64_t>({2}));
  EXPECT(e.data[0].item<double>() == 3.0 && e.data[1].item<double>() == 6.0);
  EXPECT(e.target.item<int64_t>() == 3);
  // get_batch of a Dataset is the vector of its examples.
  std::vector<data::Example<>> batch = ramp.get_batch({4, 1});
  EXPECT(batch.size() == 2 && batch[0].target.item<int64_t>() == 4 && batch[1].target.item<int64_t>() == 1);
}

void map_normalize_stack() {
  Ramp source(5);
  // map on an lvalue copies the source; the chain on a temporary moves it.
  auto normalized = source.map(data::transforms::Normalize<>(1.0, 2.0));
  auto stacked = std::move(normalized).map(data::transforms::Stack<>());
  EXPECT(stacked.size().value() == 5);
  data::Example<> b = stacked.get_batch({0, 2, 4});
  EXPECT(b.data.sizes().vec() == std::vector<int64_t>({3, 2}));
  EXPECT(b.target.sizes().vec() == std::vector<int64_t>({3}));
  EXPECT(values(b.target) == std::vector<int64_t>({0, 2, 4}));
  for (int64_t r = 0; r < 3; r++) {
    double i = double(2 * r);
    EXPECT(std::abs(b.data[r][0].item<double>() - (i - 1.0) / 2.0) < 1e-6);
    EXPECT(std::abs(b.data[r][1].item<double>() - (2 * i - 1.0) / 2.0) < 1e-6);
  }
  // Per-channel Normalize: one mean/std per element of dim 0.
  auto per_channel = Ramp(3).map(data::transforms::Normalize<>({1.0, 2.0}, {0.5, 4.0})).map(data::transforms::Stack<>());
  data::Example<> c = per_channel.get_batch({2});
  EXPECT(std::abs(c.data[0][0].item<double>() - (2.0 - 1.0) / 0.5) < 1e-6);
  EXPECT(std::abs(c.data[0][1].item<double>() - (4.0 - 2.0) / 4.0) < 1e-6);
  // Lambda on whole examples, TensorLambda on the data only.
  auto lambdas = Ramp(4)
                     .map(data::transforms::Lambda<data::Example<>>([](data::Example<> e) {
                       e.target = e.target * 10;
                       return e;
                     }))
                     .map(data::transforms::TensorLambda<>([](Tensor t) { return t * 3; }))
                     .map(data::transforms::Stack<>());
  data::Example<> l = lambdas.get_batch({1, 3});
  EXPECT(values(l.target) == std::vector<int64_t>({10, 30}));
  EXPECT(l.data[1][1].item<double>() == 18.0);
}

void tensor_dataset() {
  Tensor rows = ember::arange(0, 12, 1, ember::TensorOptions(ember::kFloat)).reshape({6, 2});
  data::datasets::TensorDataset ds(rows);
  EXPECT(ds.size().value() == 6);
  Tensor row = ds.get(4);  // a target-less example converts to its data
  EXPECT(row[0].item<double>() == 8.0 && row[1].item<double>() == 9.0);
  auto stacked = data::datasets::map(ds, data::transforms::Stack<data::TensorExample>());
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(std::move(stacked), 4);
  std::vector<int64_t> rows_seen;
  for (auto& batch : *loader) rows_seen.push_back(batch.data.size(0));
  EXPECT(rows_seen == std::vector<int64_t>({4, 2}));
  EXPECT(max_abs_diff(loader->begin()->data, rows.narrow(0, 0, 4)) == 0);
}

void sequential_sampler() {
  data::samplers::SequentialSampler s(5);
  EXPECT(s.next(2).value() == std::vector<size_t>({0, 1}));
  EXPECT(s.next(2).value() == std::vector<size_t>({2, 3}));
  EXPECT(s.next(2).value() == std::vector<size_t>({4}));
  EXPECT(!s.next(2).has_value());
  s.reset(3);
  EXPECT(s.next(10).value() == std::vector<size_t>({0, 1, 2}));
  bool rejected = false;
  try {
    s.next(0);
  } catch (const std::exception&) {
    rejected = true;
  }
  EXPECT(rejected);

  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(Ramp(10).map(data::transforms::Stack<>()),
                                                                          data::DataLoaderOptions().batch_size(4));
  auto batches = target_batches(*loader);
  EXPECT(batches == std::vector<std::vector<int64_t>>({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT(target_batches(*loader) == batches);  // a second epoch starts over
  for (auto& b : *loader) EXPECT(b.data.size(0) == b.target.size(0));
}

void random_sampler() {
  ember::manual_seed(7);
  const size_t n = 50;
  // make_data_loader(dataset, batch_size) defaults to a RandomSampler.
  auto loader = data::make_data_loader(Ramp(n).map(data::transforms::Stack<>()), 8);
  std::vector<int64_t> epoch1, epoch2;
  size_t batches = 0;
  for (auto& b : *loader) {
    batches++;
    for (int64_t v : values(b.target)) epoch1.push_back(v);
  }
  for (auto& b : *loader)
    for (int64_t v : values(b.target)) epoch2.push_back(v);
  EXPECT(batches == 7);
  std::vector<int64_t> sorted = epoch1, all(n);
  std::iota(all.begin(), all.end(), 0);
  std::sort(sorted.begin(), sorted.end());
  EXPECT(sorted == all);  // every index exactly once
  EXPECT(epoch1 != all);  // shuffled (the identity has probability 1/50!)
  EXPECT(epoch1 != epoch2);  // a new order each epoch
  std::sort(epoch2.begin(), epoch2.end());
  EXPECT(epoch2 == all);

  // The same seed gives the same order (the loader resets its sampler when an epoch begins).
  ember::manual_seed(7);
  data::samplers::RandomSampler s(n);
  s.reset(n);
  std::vector<int64_t> again;
  while (auto idx = s.next(8))
    for (size_t i : *idx) again.push_back(int64_t(i));
  EXPECT(again == epoch1);
}

void workers_and_drop_last() {
  auto stacked = [] { return Ramp(23).map(data::transforms::Stack<>()); };
  auto serial = data::make_data_loader<data::samplers::SequentialSampler>(stacked(), 5);
  auto expected = target_batches(*serial);
  EXPECT(expected.size() == 5 && expected.back() == std::vector<int64_t>({20, 21, 22}));
  for (size_t workers : {1, 2, 3}) {
    auto threaded = data::make_data_loader<data::samplers::SequentialSampler>(
        stacked(), data::DataLoaderOptions().batch_size(5).workers(workers));
    EXPECT(target_batches(*threaded) == expected);
    EXPECT(target_batches(*threaded) == expected);
  }
  // One batch in flight, unordered delivery allowed: still every batch, in sampler order.
  auto narrow = data::make_data_loader<data::samplers::SequentialSampler>(
      stacked(), data::DataLoaderOptions(5).workers(3).max_jobs(1).enforce_ordering(false));
  EXPECT(target_batches(*narrow) == expected);
  // A seeded RandomSampler gives the same batches with and without workers.
  ember::manual_seed(3);
  auto random_serial = data::make_data_loader(stacked(), data::DataLoaderOptions().batch_size(4));
  auto random_expected = target_batches(*random_serial);
  ember::manual_seed(3);
  auto random_threaded = data::make_data_loader(stacked(), data::DataLoaderOptions().batch_size(4).workers(2));
  EXPECT(target_batches(*random_threaded) == random_expected);

  // drop_last drops the short final batch, with and without workers.
  for (size_t workers : {0, 2}) {
    auto dropping = data::make_data_loader<data::samplers::SequentialSampler>(
        stacked(), data::DataLoaderOptions(5).drop_last(true).workers(workers));
    auto got = target_batches(*dropping);
    EXPECT(got.size() == 4 && got.back() == std::vector<int64_t>({15, 16, 17, 18, 19}));
  }

  // Without Stack<> a batch is the vector of its examples.
  auto unstacked = data::make_data_loader<data::samplers::SequentialSampler>(
      Ramp(5), data::DataLoaderOptions().batch_size(2).workers(2));
  std::vector<size_t> sizes;
  int64_t next_target = 0;
  for (std::vector<data::Example<>>& batch : *unstacked) {
    sizes.push_back(batch.size());
    for (auto& e : batch) EXPECT(e.target.item<int64_t>() == next_target++);
  }
  EXPECT(sizes == std::vector<size_t>({2, 2, 1}));

  // A worker's exception reaches the loop; leaving a loop early does not hang the loader.
  for (size_t workers : {0, 2}) {
    auto failing = data::make_data_loader<data::samplers::SequentialSampler>(
        Ramp(20, 9).map(data::transforms::Stack<>()), data::DataLoaderOptions().batch_size(2).workers(workers));
    bool threw = false;
    try {
      for (auto& b : *failing) (void)b;
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()).find("example 9 is broken") != std::string::npos;
    }
    EXPECT(threw);
  }
  auto early = data::make_data_loader<data::samplers::SequentialSampler>(
      Ramp(100).map(data::transforms::Stack<>()), data::DataLoaderOptions().batch_size(2).workers(3));
  for (auto& b : *early) {
    EXPECT(values(b.target) == std::vector<int64_t>({0, 1}));
    break;
  }
  EXPECT(target_batches(*early).size() == 50);
}

bool mnist() {
  const std::string root = "/usr/share/datasets/fashion-mnist";
  if (!std::filesystem::exists(root + "/train-images-idx3-ubyte.gz") &&
      !std::filesystem::exists(root + "/train-images-idx3-ubyte")) {
    std::printf("skipping MNIST: no Fashion-MNIST files in %s\n", root.c_str());
    return false;
  }
  auto train = data::datasets::MNIST(root);
  EXPECT(train.is_train() && train.size().value() == 60000);
  data::Example<> first = train.get(0);
  EXPECT(first.data.sizes().vec() == std::vector<int64_t>({1, 28, 28}));
  EXPECT(first.data.dtype() == ember::kFloat && first.target.dtype() == ember::kLong);
  EXPECT(first.target.item<int64_t>() == 9);  // Fashion-MNIST's first training image is an ankle boot
  EXPECT(train.images().min().item<double>() >= 0.0 && train.images().max().item<double>() == 1.0);

  auto test = data::datasets::MNIST(root, data::datasets::MNIST::Mode::kTest);
  EXPECT(!test.is_train() && test.size().value() == 10000);
  Tensor raw_images = test.images(), raw_targets = test.targets();
  auto mapped = std::move(test).map(data::transforms::Normalize<>(0.5, 0.5)).map(data::transforms::Stack<>());
  EXPECT(mapped.size().value() == 10000);
  auto loader = data::make_data_loader<data::samplers::SequentialSampler>(
      std::move(mapped), data::DataLoaderOptions().batch_size(1000).workers(2));
  size_t seen = 0, batches = 0;
  for (const data::Example<>& batch : *loader) {
    EXPECT(batch.data.sizes().vec() == std::vector<int64_t>({1000, 1, 28, 28}));
    Tensor want = (raw_images.narrow(0, int64_t(seen), 1000) - 0.5) / 0.5;
    EXPECT(max_abs_diff(batch.data, want) < 1e-6);
    EXPECT(max_abs_diff(batch.target, raw_targets.narrow(0, int64_t(seen), 1000)) == 0);
    seen += size_t(batch.data.size(0));
    batches++;
  }
  EXPECT(seen == 10000 && batches == 10);
  EXPECT(raw_targets.min().item<int64_t>() == 0 && raw_targets.max().item<int64_t>() == 9);
  return true;
}

}  // namespace

int main() {
  custom_dataset();
  map_normalize_stack();
  tensor_dataset();
  sequential_sampler();
  random_sampler();
  workers_and_drop_last();
  if (!mnist()) std::printf("data_loading: MNIST skipped (no Fashion-MNIST files)\n");
  return libtorch_test::finish("data_loading");
}
