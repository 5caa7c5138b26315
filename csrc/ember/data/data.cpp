#include "ember/data/data.h"

#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "ember/autograd/grad_mode.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"

namespace ember::data {

Dataset::~Dataset() = default;

namespace {
class MapDataset : public Dataset {
 public:
  MapDataset(DatasetPtr base, std::shared_ptr<transforms::Transform> t) : base_(std::move(base)), t_(std::move(t)) {}
  Example get(int64_t index) override { return t_->apply(base_->get(index)); }
  int64_t size() const override { return base_->size(); }
 private:
  DatasetPtr base_;
  std::shared_ptr<transforms::Transform> t_;
};

Tensor from_doubles(const std::vector<double>& v, ScalarType dtype) {
  Tensor t = ember::empty({int64_t(v.size())}, TensorOptions(kDouble));
  std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(double));
  return t.to(dtype);
}

void check_index(int64_t index, int64_t size) {
  EMBER_CHECK_KIND(index >= 0 && index < size, Index, "index ", index, " is out of range for a dataset of size ", size);
}
}  // namespace

DatasetPtr Dataset::map(std::shared_ptr<transforms::Transform> transform) {
  EMBER_CHECK_KIND(transform != nullptr, Value, "Dataset::map: the transform is empty");
  return std::make_shared<MapDataset>(shared_from_this(), std::move(transform));
}

TensorDataset::TensorDataset(Tensor data, Tensor targets) : data_(std::move(data)), targets_(std::move(targets)) {
  EMBER_CHECK_KIND(data_.dim() > 0 && targets_.dim() > 0 && data_.size(0) == targets_.size(0), Value,
                   "Size mismatch between tensors");
}

Example TensorDataset::get(int64_t index) {
  check_index(index, size());
  return {data_[index], targets_[index]};
}

// ---- IDX files

namespace datasets {

Tensor read_idx(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads uncompressed files as they are
  EMBER_CHECK(f, "cannot open ", path, ": ", std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) bytes.append(buf, n);
  int err = 0;
  const char* msg = gzerror(f, &err);
  bool failed = n < 0;
  std::string why = failed ? msg : "";
  gzclose(f);
  EMBER_CHECK(!failed, "error reading ", path, ": ", why);
  EMBER_CHECK(bytes.size() >= 4 && bytes[0] == 0 && bytes[1] == 0 && uint8_t(bytes[2]) == 0x08, path,
              ": not an unsigned-byte IDX file");
  int ndim = uint8_t(bytes[3]);
  EMBER_CHECK(bytes.size() >= size_t(4 + 4 * ndim), path, ": truncated IDX header");
  std::vector<int64_t> shape;
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) {
    const auto* p = reinterpret_cast<const uint8_t*>(bytes.data()) + 4 + 4 * d;
    int64_t s = (int64_t(p[0]) << 24) | (int64_t(p[1]) << 16) | (int64_t(p[2]) << 8) | int64_t(p[3]);
    shape.push_back(s);
    numel *= s;
  }
  size_t offset = 4 + 4 * ndim;
  EMBER_CHECK(bytes.size() - offset == size_t(numel), path, ": expected ", numel, " bytes of data, found ",
              bytes.size() - offset);
  Tensor t = ember::empty(shape, TensorOptions(kByte));
  std::memcpy(t.data_ptr(), bytes.data() + offset, numel);
  return t;
}

static std::string find_file(const std::string& root, const std::string& name) {
  for (const char* sfx : {"", ".gz"}) {
    std::string p = root + "/" + name + sfx;
    if (std::ifstream(p).good()) return p;
  }
  EMBER_FAIL(Runtime, "MNIST: ", root, "/", name, "[.gz] not found");
}

MNIST::MNIST(const std::string& root, Mode mode) : train_(mode == Mode::kTrain) {
  std::string prefix = train_ ? "train" : "t10k";
  Tensor img = read_idx(find_file(root, prefix + "-images-idx3-ubyte"));
  Tensor lbl = read_idx(find_file(root, prefix + "-labels-idx1-ubyte"));
  EMBER_CHECK(img.dim() == 3 && lbl.dim() == 1 && img.size(0) == lbl.size(0), "MNIST: images ", img.sizes(),
              " and labels ", lbl.sizes(), " do not match");
  autograd::NoGradGuard g;
  images_ = (img.to(kFloat) / 255.0).unsqueeze(1).contiguous();
  targets_ = lbl.to(kLong);
}

Example MNIST::get(int64_t index) {
  check_index(index, size());
  return {images_[index], targets_[index]};
}

}  // namespace datasets

// ---- transforms

namespace transforms {

Transform::~Transform() = default;
Collation::~Collation() = default;

Normalize::Normalize(double mean, double stddev) : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}
Normalize::Normalize(std::vector<double> mean, std::vector<double> stddev) : mean_(std::move(mean)), std_(std::move(stddev)) {
  EMBER_CHECK_KIND(!mean_.empty() && mean_.size() == std_.size(), Value,
                   "Normalize: mean and std need the same (non-zero) number of values");
  for (double s : std_) EMBER_CHECK_KIND(s != 0, Value, "std evaluated to zero after conversion to float, leading to division by zero.");
}

Example Normalize::apply(Example e) const {
  autograd::NoGradGuard g;
  if (mean_.size() == 1) {
    e.data = (e.data - mean_[0]) / std_[0];
    return e;
  }
  EMBER_CHECK(e.data.dim() >= 1 && e.data.size(0) == int64_t(mean_.size()), "Normalize: ", mean_.size(),
              " channel values for data of shape ", e.data.sizes());
  std::vector<int64_t> shape(e.data.dim(), 1);
  shape[0] = int64_t(mean_.size());
  Tensor m = from_doubles(mean_, e.data.dtype()).view(shape), s = from_doubles(std_, e.data.dtype()).view(shape);
  e.data = (e.data - m) / s;
  return e;
}

Lambda::Lambda(std::function<Example(Example)> fn) : fn_(std::move(fn)) {}
Example Lambda::apply(Example e) const { return fn_(std::move(e)); }

Example Stack::apply_batch(std::vector<Example> examples) const {
  EMBER_CHECK_KIND(!examples.empty(), Value, "Stack: an empty batch");
  std::vector<Tensor> d, t;
  for (auto& e : examples) {
    d.push_back(e.data);
    if (e.target.defined()) t.push_back(e.target);
  }
  EMBER_CHECK(t.empty() || t.size() == d.size(), "Stack: some examples of the batch have no target");
  return {ember::stack(d), t.empty() ? Tensor() : ember::stack(t)};
}

}  // namespace transforms

// ---- samplers

Sampler::~Sampler() = default;

std::vector<int64_t> SequentialSampler::indices(int64_t size) {
  std::vector<int64_t> out(size);
  for (int64_t i = 0; i < size; i++) out[i] = i;
  return out;
}

std::vector<int64_t> RandomSampler::indices(int64_t size) {
  Tensor p = ember::randperm(size);
  const int64_t* d = p.data_ptr<int64_t>();
  return std::vector<int64_t>(d, d + size);
}

// ---- worker threads

namespace detail {

struct OrderedWorkers::State {
  std::function<void(size_t)> build;
  size_t tasks = 0, window = 1, next_task = 0, consumed = 0;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable cv_ready, cv_space;
  std::vector<bool> done;
  std::exception_ptr error;
  bool stopping = false;
};

OrderedWorkers::OrderedWorkers(size_t tasks, int64_t workers, size_t window, std::function<void(size_t)> build)
    : state_(std::make_unique<State>()) {
  State* st = state_.get();
  st->build = std::move(build);
  st->tasks = tasks;
  st->window = std::max<size_t>(window, 1);
  st->done.assign(tasks, false);
  for (int64_t w = 0; w < workers; w++) {
    st->threads.emplace_back([st] {
      autograd::NoGradGuard no_grad;
      for (;;) {
        size_t task;
        {
          std::unique_lock<std::mutex> lk(st->mu);
          st->cv_space.wait(lk, [&] { return st->stopping || st->next_task < st->consumed + st->window; });
          if (st->stopping || st->next_task >= st->tasks) return;
          task = st->next_task++;
        }
        try {
          st->build(task);
        } catch (...) {
          std::lock_guard<std::mutex> g(st->mu);
          if (!st->error) st->error = std::current_exception();
          st->stopping = true;
          st->cv_ready.notify_all();
          st->cv_space.notify_all();
          return;
        }
        std::lock_guard<std::mutex> g(st->mu);
        st->done[task] = true;
        st->cv_ready.notify_all();
      }
    });
  }
}

OrderedWorkers::~OrderedWorkers() { stop(); }

void OrderedWorkers::stop() {
  {
    std::lock_guard<std::mutex> g(state_->mu);
    state_->stopping = true;
  }
  state_->cv_space.notify_all();
  for (auto& t : state_->threads) t.join();
  state_->threads.clear();
}

void OrderedWorkers::wait(size_t index) {
  State& st = *state_;
  std::unique_lock<std::mutex> lk(st.mu);
  st.cv_ready.wait(lk, [&] { return st.error || st.done[index]; });
  if (st.error) {
    std::exception_ptr e = st.error;
    lk.unlock();
    stop();
    std::rethrow_exception(e);
  }
  st.consumed = index + 1;
  st.cv_space.notify_all();
}

}  // namespace detail

// ---- DataLoader

// One epoch: the batches' indices, and (with workers) threads building them ahead of the consumer.
struct DataLoader::Epoch {
  std::vector<std::vector<int64_t>> batches;
  std::vector<Example> built;  // one slot per batch, filled by the workers
  std::unique_ptr<detail::OrderedWorkers> workers;
};

DataLoader::DataLoader(DatasetPtr dataset, const DataLoaderOptions& options, std::shared_ptr<Sampler> sampler,
                       std::shared_ptr<transforms::Collation> collate)
    : dataset_(std::move(dataset)), options_(options), sampler_(std::move(sampler)), collate_(std::move(collate)) {
  EMBER_CHECK_KIND(dataset_ != nullptr, Value, "DataLoader: the dataset is empty");
  EMBER_CHECK_KIND(options_.batch_size() > 0, Value,
                   "batch_size should be a positive integer value, but got batch_size=", options_.batch_size());
  EMBER_CHECK_KIND(options_.workers() >= 0, Value,
                   "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.");
  EMBER_CHECK_KIND(options_.prefetch_factor() > 0, Value, "prefetch_factor option must be positive");
  if (!sampler_) {
    if (options_.shuffle()) sampler_ = std::make_shared<RandomSampler>();
    else sampler_ = std::make_shared<SequentialSampler>();
  }
  if (!collate_) collate_ = std::make_shared<transforms::Stack>();
}

DataLoader::~DataLoader() { stop(); }

size_t DataLoader::size() const {
  int64_t n = dataset_->size(), b = options_.batch_size();
  return size_t(options_.drop_last() ? n / b : (n + b - 1) / b);
}

void DataLoader::stop() {
  if (!epoch_) return;
  if (epoch_->workers) epoch_->workers->stop();
  epoch_.reset();
}

DataLoader::Iterator DataLoader::begin() {
  stop();
  epoch_ = std::make_unique<Epoch>();
  std::vector<int64_t> order = sampler_->indices(dataset_->size());
  int64_t b = options_.batch_size();
  for (size_t i = 0; i < order.size(); i += b) {
    size_t e = std::min(order.size(), i + size_t(b));
    if (options_.drop_last() && e - i < size_t(b)) break;
    epoch_->batches.emplace_back(order.begin() + i, order.begin() + e);
  }
  if (options_.workers() > 0) {
    Epoch* ep = epoch_.get();
    ep->built.resize(ep->batches.size());
    ep->workers = std::make_unique<detail::OrderedWorkers>(
        ep->batches.size(), options_.workers(), size_t(options_.workers() * options_.prefetch_factor()),
        [this, ep](size_t task) { ep->built[task] = build(ep->batches[task]); });
  }
  Iterator it(this, 0);
  if (!epoch_->batches.empty()) it.current_ = next(0);
  return it;
}

DataLoader::Iterator DataLoader::end() { return Iterator(this, epoch_ ? epoch_->batches.size() : size()); }

Example DataLoader::build(const std::vector<int64_t>& indices) const {
  std::vector<Example> ex;
  ex.reserve(indices.size());
  for (int64_t i : indices) ex.push_back(dataset_->get(i));
  return collate_->apply_batch(std::move(ex));
}

Example DataLoader::next(size_t index) {
  Epoch& ep = *epoch_;
  if (!ep.workers) return build(ep.batches[index]);
  ep.workers->wait(index);
  return std::move(ep.built[index]);
}

DataLoader::Iterator::Iterator(DataLoader* loader, size_t index) : loader_(loader), index_(index) {}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  index_++;
  if (loader_->epoch_ && index_ < loader_->epoch_->batches.size()) current_ = loader_->next(index_);
  else current_ = Example();
  return *this;
}

}  // namespace ember::data
