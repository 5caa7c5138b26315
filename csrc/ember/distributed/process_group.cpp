#include "ember/distributed/process_group.h"

#include <chrono>
#include <cstdio>

#include "ember/distributed/errors.h"

namespace ember::distributed {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM: return "SUM";
    case ReduceOp::AVG: return "AVG";
    case ReduceOp::PRODUCT: return "PRODUCT";
    case ReduceOp::MIN: return "MIN";
    case ReduceOp::MAX: return "MAX";
    case ReduceOp::BAND: return "BAND";
    case ReduceOp::BOR: return "BOR";
    case ReduceOp::BXOR: return "BXOR";
  }
  return "?";
}

namespace {
thread_local const void* tls_worker_of = nullptr;
}

WorkerThreadMark::WorkerThreadMark(const void* owner) : prev_(tls_worker_of) { tls_worker_of = owner; }
WorkerThreadMark::~WorkerThreadMark() { tls_worker_of = prev_; }

void Work::wait(Milliseconds timeout) {
  std::unique_lock<std::mutex> g(mu_);
  if (!done_ && runner && runner == tls_worker_of)
    throw DistError("Work.wait: waiting for a collective on the thread of its own process group (a Future.then() "
                    "callback of one of the group's collectives) would wait forever: that thread runs the "
                    "collective. Issue it with async_op=True and chain on its future, or wait outside the callback");
  if (timeout.count() > 0) {
    if (!cv_.wait_for(g, timeout, [&] { return done_; }))
      throw DistBackendError("Work.wait: the operation did not finish within " + std::to_string(timeout.count()) + "ms");
  } else {
    cv_.wait(g, [&] { return done_; });
  }
  if (error_) std::rethrow_exception(error_);
}

bool Work::is_completed() {
  std::lock_guard<std::mutex> g(mu_);
  return done_;
}

bool Work::is_success() {
  std::lock_guard<std::mutex> g(mu_);
  return done_ && !error_;
}

std::exception_ptr Work::exception() {
  std::lock_guard<std::mutex> g(mu_);
  return error_;
}

std::vector<Tensor> Work::result() {
  wait();
  return outputs;
}

void Work::add_callback(std::function<void()> fn) {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (!done_) {
      callbacks_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

void Work::finish(std::exception_ptr error) {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> g(mu_);
    done_ = true;
    error_ = std::move(error);
    callbacks.swap(callbacks_);
  }
  cv_.notify_all();
  // outside the lock: a callback may ask this work for its result
  for (auto& fn : callbacks) {
    try {
      fn();
    } catch (const std::exception& e) {  // the group's thread must go on
      std::fprintf(stderr, "ember.distributed: a Work callback raised: %s\n", e.what());
    }
  }
}

}  // namespace ember::distributed
