#include "ember/distributed/ddp.h"

#include <cstdlib>
#include <map>
#include <netdb.h>
#include <arpa/inet.h>

#include "ember/autograd/grad_mode.h"
#include "ember/distributed/errors.h"
#include "ember/generated/ops.h"

namespace ember::distributed {

namespace {
std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) throw DistError(std::string("init_process_group: environment variable ") + name +
                          " expected, but not set (launch with python -m ember.distributed.run)");
  return v;
}

bool is_loopback(const std::string& host) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0) return host == "localhost";
  bool lo = (ntohl(reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr.s_addr) >> 24) == 127;
  freeaddrinfo(res);
  return lo;
}
}  // namespace

ProcessGroupPtr init_process_group(Milliseconds timeout) {
  int rank = std::stoi(env("RANK")), size = std::stoi(env("WORLD_SIZE"));
  std::string host = env("MASTER_ADDR");
  TCPStoreOptions o;
  o.port = uint16_t(std::stoi(env("MASTER_PORT")));
  o.is_master = rank == 0;
  o.world_size = size;
  o.timeout = timeout;
  auto store = std::make_shared<TCPStore>(host, o);
  GlooOptions g;
  g.timeout = timeout;
  if (is_loopback(host)) g.hostname = "127.0.0.1";
  return make_gloo_process_group(std::make_shared<PrefixStore>("default_pg", store), rank, size, g);
}

void broadcast_coalesced(ProcessGroup& pg, const std::vector<Tensor>& tensors, int root) {
  autograd::NoGradGuard ng;
  std::map<int, std::vector<Tensor>> by_dtype;
  for (auto& t : tensors) by_dtype[int(t.dtype())].push_back(t);
  for (auto& [dt, group] : by_dtype) {
    std::vector<Tensor> flat_parts;
    for (auto& t : group) flat_parts.push_back(t.reshape({-1}));
    Tensor flat = ember::cat(flat_parts, 0);
    pg.broadcast(flat, root)->wait();
    int64_t at = 0;
    for (auto& t : group) {
      t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
      at += t.numel();
    }
  }
}

DistributedDataParallel::DistributedDataParallel(std::vector<Tensor> parameters, std::vector<Tensor> buffers,
                                                 ProcessGroupPtr pg, const ReducerOptions& opts)
    : buffers_(std::move(buffers)), pg_(std::move(pg)) {
  std::vector<Tensor> state = parameters;
  state.insert(state.end(), buffers_.begin(), buffers_.end());
  broadcast_coalesced(*pg_, state, 0);
  reducer_ = std::make_unique<Reducer>(std::move(parameters), pg_, opts);
}

void DistributedDataParallel::before_forward() {
  if (!buffers_.empty() && pg_->size() > 1) broadcast_coalesced(*pg_, buffers_, 0);
}

void DistributedDataParallel::after_forward(const std::vector<Tensor>& outputs) {
  if (autograd::grad_enabled()) reducer_->prepare_for_backward(outputs);
}

}  // namespace ember::distributed
