// Data-parallel training from C++: an MLP on Fashion-MNIST in N processes with
// ember::distributed::DistributedDataParallel over Gloo (gradients averaged during backward).
//
//   ddp_train --nproc 2 [--epochs 2] [--limit N] [--batch-size 128] [--data DIR]
//
// With --nproc it starts the N workers itself (each this program with RANK, WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT set); it also runs as one worker of a launcher that sets them
// (python -m ember.distributed.run --nproc-per-node 2 --no-python ./ddp_train), on one machine
// or several. Rank 0 prints the progress; at the end every rank checks it holds the same weights.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/distributed/distributed.h"
#include "ember/ember.h"

extern char** environ;

using namespace ember;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  int nproc = 0, epochs = 2, batch_size = 128;
  int64_t limit = 0;
  std::string data = "/usr/share/datasets/fashion-mnist";
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; i++) {
    std::string k = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s [--nproc N] [--epochs E] [--limit N] [--batch-size B] [--data DIR]\n", argv[0]);
      std::exit(2);
    }
    std::string v = argv[++i];
    if (k == "--nproc") a.nproc = std::stoi(v);
    else if (k == "--epochs") a.epochs = std::stoi(v);
    else if (k == "--limit") a.limit = std::stoll(v);
    else if (k == "--batch-size") a.batch_size = std::stoi(v);
    else if (k == "--data") a.data = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return a;
}

// A port nobody listens on now (the kernel's pick), for rank 0's store.
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// Starts `n` copies of this program as ranks 0..n-1 and waits; the first to fail stops the rest.
int launch(int n, int argc, char** argv) {
  int port = free_port();
  std::vector<pid_t> pids;
  for (int r = 0; r < n; r++) {
    std::vector<std::string> env = {"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r),
                                    "WORLD_SIZE=" + std::to_string(n), "MASTER_ADDR=127.0.0.1",
                                    "MASTER_PORT=" + std::to_string(port), "OMP_NUM_THREADS=1"};
    for (char** e = environ; *e; e++) env.push_back(*e);
    std::vector<char*> envp, args;
    for (auto& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    for (int i = 0; i < argc; i++) args.push_back(argv[i]);
    args.push_back(nullptr);
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, args.data(), envp.data()) != 0) {
      std::perror("posix_spawn");
      return 1;
    }
    pids.push_back(pid);
  }
  int failed = 0;
  for (size_t left = pids.size(); left > 0; left--) {
    int status;
    pid_t pid = wait(&status);
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && !failed) {
      for (size_t r = 0; r < pids.size(); r++)
        if (pids[r] == pid) std::fprintf(stderr, "rank %zu failed (status %d): stopping the others\n", r, status);
      for (pid_t p : pids)
        if (p != pid) kill(p, SIGTERM);
      failed = 1;
    }
  }
  return failed;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  if (!std::getenv("RANK")) {
    if (args.nproc < 1) {
      std::fprintf(stderr, "not launched as a worker: pass --nproc N (or start it with ember.distributed.run)\n");
      return 2;
    }
    return launch(args.nproc, argc, argv);
  }
  auto pg = distributed::init_process_group();
  const int rank = pg->rank(), world = pg->size();
  manual_seed(0);

  const double mean = 0.2860, stddev = 0.3530;
  data::datasets::MNIST train(args.data, data::datasets::MNIST::Mode::kTrain);
  data::datasets::MNIST test(args.data, data::datasets::MNIST::Mode::kTest);
  Tensor x = ((train.images() - mean) / stddev).flatten(1), y = train.targets();
  if (args.limit > 0) {
    x = x.narrow(0, 0, args.limit);
    y = y.narrow(0, 0, args.limit);
  }
  Tensor test_x = ((test.images() - mean) / stddev).flatten(1), test_y = test.targets();

  manual_seed(int64_t(rank) + 1);  // different initial weights: DDP starts every rank from rank 0's
  nn::Sequential model(nn::Linear(784, 256), nn::ReLU(), nn::Linear(256, 128), nn::ReLU(), nn::Linear(128, 10));
  distributed::DistributedDataParallel ddp(model->parameters(), model->buffers(), pg);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  if (rank == 0)
    std::printf("ember C++ DDP: %d processes (gloo), %lld training images, global batch %d\n", world,
                (long long)x.size(0), args.batch_size);

  const int64_t n = x.size(0), local = args.batch_size / world;
  auto start = Clock::now();
  for (int epoch = 1; epoch <= args.epochs; epoch++) {
    manual_seed(100 + epoch);  // the same shuffle on every rank; each takes its slice of every batch
    Tensor perm = randperm(n);
    double loss_sum = 0;
    int64_t steps = 0;
    for (int64_t b = 0; b + args.batch_size <= n; b += args.batch_size) {
      Tensor idx = perm.narrow(0, b + rank * local, local);
      opt.zero_grad();
      ddp.before_forward();
      Tensor loss = nn::F::cross_entropy(model(x.index_select(0, idx)), y.index_select(0, idx));
      ddp.after_forward();
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>();
      steps++;
    }
    Tensor avg = full({1}, loss_sum / double(steps), TensorOptions(kDouble));
    pg->allreduce(avg, distributed::ReduceOp::AVG)->wait();
    autograd::NoGradGuard ng;
    double acc = model(test_x).argmax(1).eq(test_y).to(kDouble).mean().item<double>();
    if (rank == 0)
      std::printf("epoch %d: train loss %.4f  test accuracy %.2f%%  %.0f img/s\n", epoch, avg.item<double>(),
                  100 * acc, double(steps * args.batch_size * epoch) / seconds_since(start));
  }
  // every rank must hold the same weights: max and min of a checksum agree
  Tensor sum = zeros({1}, TensorOptions(kDouble));
  for (auto& p : model->parameters()) sum += p.to(kDouble).sum();
  Tensor hi = sum.clone(), lo = sum.clone();
  pg->allreduce(hi, distributed::ReduceOp::MAX)->wait();
  pg->allreduce(lo, distributed::ReduceOp::MIN)->wait();
  if (hi.item<double>() != lo.item<double>()) {
    std::fprintf(stderr, "rank %d: replicas diverged\n", rank);
    return 1;
  }
  if (rank == 0) {
    auto s = ddp.reducer().stats();
    std::printf("replicas identical on all %d ranks; %lld buckets reduced, %.0f%% of all-reduce time hidden behind "
                "backward\n", world, (long long)s.buckets_reduced,
                s.comm_ns ? std::max(0.0, 100.0 * (1.0 - double(s.exposed_ns) / double(s.comm_ns))) : 0.0);
  }
  return 0;
}
