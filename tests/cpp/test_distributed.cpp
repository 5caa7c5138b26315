// ember::distributed from C++: stores, Gloo groups whose ranks are threads of this process, and
// DDP's reducer (gradients equal to single-process training).
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <thread>

#include "ember/distributed/distributed.h"
#include "ember/ember.h"
#include "temp_dir.h"

namespace ember {
namespace {

using namespace ember::distributed;

// Runs fn(rank, group) on `size` threads, each a rank of one Gloo group.
void run_ranks(int size, const std::function<void(int, ProcessGroup&)>& fn) {
  if (!gloo_available()) GTEST_SKIP() << "built without Gloo";
  auto store = std::make_shared<HashStore>();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(static_cast<size_t>(size));
  for (int r = 0; r < size; r++) {
    threads.emplace_back([&, r] {
      try {
        GlooOptions o;
        o.hostname = "127.0.0.1";
        o.timeout = Milliseconds(20000);
        auto pg = make_gloo_process_group(std::make_shared<PrefixStore>("t", store), r, size, o);
        fn(r, *pg);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < size; r++) EXPECT_EQ(errors[size_t(r)], "") << "rank " << r;
}

TEST(Distributed, CollectivesAcrossThreeRanks) {
  run_ranks(3, [](int rank, ProcessGroup& pg) {
    Tensor t = full({2, 3}, double(rank + 1));
    pg.allreduce(t, ReduceOp::SUM)->wait();
    EXPECT_TRUE(equal(t, full({2, 3}, 6.0)));
    Tensor m = arange(4, TensorOptions(kLong)) * int64_t(rank);
    pg.allreduce(m, ReduceOp::MAX)->wait();
    EXPECT_EQ(m[3].item<int64_t>(), 6);
    Tensor b = rank == 1 ? arange(5, TensorOptions(kDouble)) : zeros({5}, TensorOptions(kDouble));
    pg.broadcast(b, 1)->wait();
    EXPECT_EQ(b[4].item<double>(), 4.0);
    std::vector<Tensor> outs = {zeros({2}), zeros({2}), zeros({2})};
    pg.allgather(outs, full({2}, double(rank)))->wait();
    for (int i = 0; i < 3; i++) EXPECT_EQ(outs[size_t(i)][1].item<float>(), float(i));
    Tensor nc = full({3, 2}, double(rank)).t();  // non-contiguous
    pg.allreduce(nc, ReduceOp::SUM)->wait();
    EXPECT_TRUE(equal(nc, full({2, 3}, 3.0)));
    pg.barrier()->wait();
  });
}

TEST(Distributed, MismatchRaisesOnEveryRank) {
  run_ranks(2, [](int rank, ProcessGroup& pg) {
    Tensor t = ones({3 + rank});
    EXPECT_THROW(pg.allreduce(t, ReduceOp::SUM)->wait(), DistBackendError);
    Tensor u = ones({2});
    pg.allreduce(u, ReduceOp::SUM)->wait();  // still usable
    EXPECT_EQ(u[0].item<float>(), 2.f);
  });
}

TEST(Distributed, PointToPoint) {
  run_ranks(2, [](int rank, ProcessGroup& pg) {
    if (rank == 0) {
      pg.send(arange(4, TensorOptions(kFloat)), 1, 3)->wait();
    } else {
      Tensor buf = zeros({4});
      auto w = pg.recv(buf, -1, 3);
      w->wait();
      EXPECT_EQ(w->source_rank, 0);
      EXPECT_EQ(buf[3].item<float>(), 3.f);
    }
  });
}

TEST(Distributed, ReducerAveragesGradientsLikeTheGlobalBatch) {
  // two ranks, each half of a batch of 8: gradients equal the full batch's (mean loss)
  manual_seed(0);
  Tensor w0 = randn({4, 3}), x = randn({8, 4}), y = randn({8, 3});
  Tensor ref_w = w0.clone().requires_grad_();
  (matmul(x, ref_w) - y).pow(2).mean().backward();
  Tensor want = ref_w.grad();
  run_ranks(2, [&](int rank, ProcessGroup& pg) {
    // rank 1 starts from other weights: DDP broadcasts rank 0's
    Tensor w = (rank == 0 ? w0.clone() : zeros({4, 3})).requires_grad_();
    Tensor b = zeros({3}).requires_grad_();  // unused parameter would break; this one is used
    ReducerOptions o;
    o.bucket_cap_bytes = 4;  // one bucket per parameter
    o.first_bucket_bytes = 4;
    auto sp = std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {});
    DistributedDataParallel ddp({w, b}, {}, sp, o);
    EXPECT_EQ(ddp.reducer().bucket_indices().size(), 2u);
    Tensor xs = x.narrow(0, rank * 4, 4), ys = y.narrow(0, rank * 4, 4);
    Tensor loss = (matmul(xs, w) + b - ys).pow(2).mean();
    ddp.after_forward();
    loss.backward();
    EXPECT_TRUE(allclose(w.grad(), want, 1e-5, 1e-6));
    ReducerStats s = ddp.reducer().stats();
    EXPECT_EQ(s.iterations, 1);
    EXPECT_EQ(s.buckets_reduced, 2);
  });
}

// The gradient of sum(x_r @ w) on each of two ranks' halves of x: what a hook receives, unaveraged.
static std::vector<Tensor> local_gradients(const Tensor& w0, const Tensor& x) {
  std::vector<Tensor> local(2);
  for (int r = 0; r < 2; r++) {
    Tensor w = w0.clone().requires_grad_();
    matmul(x.narrow(0, r * 4, 4), w).sum().backward();
    local[size_t(r)] = w.grad();
  }
  return local;
}

TEST(Distributed, CommHookReplacesTheAllReduce) {
  // a hook that sums with MAX instead of averaging: the gradients are the ranks' elementwise max,
  // and the hook sees each bucket once, unaveraged, in launch order, the last one flagged
  manual_seed(1);
  Tensor w0 = randn({4, 3}), x = randn({8, 4});
  std::vector<Tensor> local = local_gradients(w0, x);
  Tensor want = maximum(local[0], local[1]);
  run_ranks(2, [&](int rank, ProcessGroup& pg) {
    Tensor w = w0.clone().requires_grad_(), b = zeros({3}).requires_grad_();
    ReducerOptions o;
    o.bucket_cap_bytes = o.first_bucket_bytes = 4;  // one bucket per parameter
    auto sp = std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {});
    DistributedDataParallel ddp({w, b}, {}, sp, o);
    std::vector<std::pair<int64_t, bool>> seen;
    std::atomic<int> callbacks{0};
    ddp.reducer().register_comm_hook([&](GradBucket& bucket) -> std::function<Tensor()> {
      seen.emplace_back(bucket.index, bucket.is_last);
      if (bucket.parameters[0].is_same(w)) {
        EXPECT_TRUE(equal(bucket.gradients()[0], local[size_t(rank)]));
      }
      WorkPtr work = pg.allreduce(bucket.buffer, ReduceOp::MAX);
      work->add_callback([&callbacks] { callbacks++; });
      return [work] {
        work->wait();
        return work->result()[0];
      };
    });
    EXPECT_THROW(ddp.reducer().register_comm_hook([](GradBucket&) { return std::function<Tensor()>(); }), DistError);
    ddp.after_forward();
    (matmul(x.narrow(0, rank * 4, 4), w) + b).sum().backward();
    EXPECT_TRUE(equal(w.grad(), want));
    EXPECT_TRUE(equal(b.grad(), full({3}, 4.0)));  // each rank's 4 rows; MAX of equal values
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0], std::make_pair(int64_t(0), false));
    EXPECT_EQ(seen[1], std::make_pair(int64_t(1), true));
    pg.barrier()->wait();  // queued behind the hook's all-reduces: their callbacks have run
    EXPECT_EQ(callbacks.load(), 2);
    int late = 0;
    Tensor t = ones({2});
    WorkPtr done = pg.allreduce(t, ReduceOp::SUM);
    done->wait();
    done->add_callback([&late] { late++; });  // a finished work runs it at once
    EXPECT_EQ(late, 1);
  });
}

TEST(Distributed, BuiltinHooksAverageAsDefaultHooksDo) {
  // ALLREDUCE: the reducer's own average, bit for bit; FP16_COMPRESS: each rank's gradient cast to
  // half, divided by the world size, summed in half, cast back
  manual_seed(2);
  Tensor w0 = randn({4, 3}), x = randn({8, 4});
  std::vector<Tensor> local = local_gradients(w0, x);
  Tensor mean = (local[0] / 2.0) + (local[1] / 2.0);
  Tensor half = ((local[0].to(kHalf) / 2.0) + (local[1].to(kHalf) / 2.0)).to(kFloat);
  for (auto kind : {Reducer::BuiltinHook::AllReduce, Reducer::BuiltinHook::Fp16Compress}) {
    run_ranks(2, [&](int rank, ProcessGroup& pg) {
      Tensor w = w0.clone().requires_grad_();
      auto sp = std::shared_ptr<ProcessGroup>(&pg, [](ProcessGroup*) {});
      DistributedDataParallel ddp({w}, {}, sp, {});
      ddp.reducer().register_builtin_comm_hook(kind);
      EXPECT_THROW(ddp.reducer().register_builtin_comm_hook(kind), DistError);  // once per reducer
      ddp.after_forward();
      matmul(x.narrow(0, rank * 4, 4), w).sum().backward();
      EXPECT_TRUE(equal(w.grad(), kind == Reducer::BuiltinHook::AllReduce ? mean : half));
      EXPECT_EQ(w.grad().dtype(), kFloat);
    });
  }
}

TEST(Distributed, Stores) {
  test_util::TempDir dir("ember_dist_");
  std::string path = dir.file("store");
  {
    FileStore a(path, 2), b(path, 2);
    a.set("k", "v");
    EXPECT_EQ(b.get("k"), "v");
    EXPECT_EQ(a.add("n", 2), 2);
    EXPECT_EQ(b.add("n", 3), 5);
    EXPECT_THROW(b.wait({"missing"}, Milliseconds(50)), DistStoreError);
  }
  EXPECT_FALSE(std::ifstream(path).good());  // the last store removed the file
  TCPStoreOptions o;
  o.port = 0;
  o.is_master = true;
  o.timeout = Milliseconds(5000);
  TCPStore server("127.0.0.1", o);
  TCPStoreOptions c = o;
  c.is_master = false;
  c.port = server.port();
  TCPStore client("127.0.0.1", c);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    client.set("late", "x");
  });
  EXPECT_EQ(server.get("late"), "x");  // a waiter wakes without polling
  later.join();
  EXPECT_EQ(client.compare_set("late", "x", "y"), "y");
  EXPECT_TRUE(server.delete_key("late"));
  EXPECT_FALSE(server.check({"late"}));
}

}  // namespace
}  // namespace ember
