#pragma once
// Key-value stores the processes of a group meet through (torch.distributed's Store family).
// Values are byte strings; get() and wait() block until the keys exist or the timeout passes.
//   TCPStore   a server in one process (the master), clients everywhere: the usual rendezvous
//   FileStore  a file on a filesystem all processes see (append-only log, flock-serialized)
//   HashStore  in-process (threads of one process, tests)
//   PrefixStore  a namespace inside another store (one per process group)
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ember/core/macros.h"

namespace ember::distributed {

using Milliseconds = std::chrono::milliseconds;
constexpr Milliseconds kDefaultStoreTimeout{300 * 1000};  // torch's 300 s

class EMBER_API Store {
 public:
  explicit Store(Milliseconds timeout = kDefaultStoreTimeout) : timeout_(timeout) {}
  virtual ~Store() = default;

  virtual void set(const std::string& key, const std::string& value) = 0;
  // Waits for the key up to timeout(); raises (DistStoreError) when it does not appear.
  virtual std::string get(const std::string& key) = 0;
  // Adds `amount` to the integer stored at key (0 when absent) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t amount) = 0;
  // Sets key to desired if its value is expected (or it is absent and expected is empty);
  // returns the value after the call.
  virtual std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) = 0;
  // Appends to the value (creating it).
  virtual void append(const std::string& key, const std::string& value) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  virtual void wait(const std::vector<std::string>& keys, Milliseconds timeout) = 0;

  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds t) { timeout_ = t; }

 protected:
  Milliseconds timeout_;
};

class EMBER_API HashStore : public Store {
 public:
  HashStore();
  ~HashStore() override;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) override;
  void append(const std::string& key, const std::string& value) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

struct TCPStoreOptions {
  uint16_t port = 29500;       // 0 on the master: any free port (read it back with port())
  bool is_master = false;
  std::optional<int64_t> world_size;  // when set, the master's constructor waits for that many clients
  bool wait_for_workers = true;
  Milliseconds timeout = kDefaultStoreTimeout;
};

class EMBER_API TCPStore : public Store {
 public:
  TCPStore(std::string host, const TCPStoreOptions& opts);
  ~TCPStore() override;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) override;
  void append(const std::string& key, const std::string& value) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;

  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  class Server;
  class Client;
  std::string host_;
  uint16_t port_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

class EMBER_API FileStore : public Store {
 public:
  // The file is removed when the last of num_workers stores using it is destroyed (-1: never).
  FileStore(std::string path, int64_t num_workers);
  ~FileStore() override;
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) override;
  void append(const std::string& key, const std::string& value) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  const std::string& path() const { return path_; }

 private:
  struct Log;
  std::string path_;
  int64_t num_workers_;
  std::unique_ptr<Log> log_;
};

class EMBER_API PrefixStore : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const std::string& value) override;
  std::string get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t amount) override;
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) override;
  void append(const std::string& key, const std::string& value) override;
  bool check(const std::vector<std::string>& keys) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string k(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> k(const std::vector<std::string>& keys) const;
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace ember::distributed
