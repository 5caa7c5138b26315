#include "ember/distributed/store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "ember/distributed/errors.h"

namespace ember::distributed {

namespace {

using Clock = std::chrono::steady_clock;

std::string join_keys(const std::vector<std::string>& keys) {
  std::string s = "[";
  for (size_t i = 0; i < keys.size(); i++) s += (i ? ", " : "") + keys[i];
  return s + "]";
}

[[noreturn]] void wait_timeout(const std::vector<std::string>& keys, Milliseconds timeout) {
  throw DistStoreError("wait timeout after " + std::to_string(timeout.count()) + "ms, keys: " + join_keys(keys));
}

int64_t parse_int(const std::string& key, const std::string& v) {
  try {
    size_t used = 0;
    int64_t r = std::stoll(v, &used);
    if (used == v.size()) return r;
  } catch (const std::exception&) {
  }
  throw DistStoreError("add: the value at key '" + key + "' is not an integer");
}

}  // namespace

// ---------------------------------------------------------------- the map all stores share
// Key-value semantics in one place: HashStore holds one, the TCP server holds one, the file
// store rebuilds one from its log.
struct KeyValues {
  std::map<std::string, std::string> kv;

  int64_t add(const std::string& key, int64_t amount) {
    auto it = kv.find(key);
    int64_t v = (it == kv.end() ? 0 : parse_int(key, it->second)) + amount;
    kv[key] = std::to_string(v);
    return v;
  }
  std::string compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
    auto it = kv.find(key);
    if (it == kv.end()) {
      if (expected.empty()) return kv[key] = desired;
      return expected;  // torch returns the expected value when the key is absent
    }
    if (it->second == expected) it->second = desired;
    return it->second;
  }
  bool has_all(const std::vector<std::string>& keys) const {
    return std::all_of(keys.begin(), keys.end(), [&](const std::string& k) { return kv.count(k) > 0; });
  }
};

// ---------------------------------------------------------------- HashStore
struct HashStore::State {
  std::mutex mu;
  std::condition_variable cv;
  KeyValues kv;
};

HashStore::HashStore() : s_(std::make_unique<State>()) {}
HashStore::~HashStore() = default;

void HashStore::set(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> g(s_->mu);
  s_->kv.kv[key] = value;
  s_->cv.notify_all();
}
std::string HashStore::get(const std::string& key) {
  wait({key});
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->kv.kv.at(key);
}
int64_t HashStore::add(const std::string& key, int64_t amount) {
  std::lock_guard<std::mutex> g(s_->mu);
  int64_t v = s_->kv.add(key, amount);
  s_->cv.notify_all();
  return v;
}
std::string HashStore::compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
  std::lock_guard<std::mutex> g(s_->mu);
  std::string v = s_->kv.compare_set(key, expected, desired);
  s_->cv.notify_all();
  return v;
}
void HashStore::append(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> g(s_->mu);
  s_->kv.kv[key] += value;
  s_->cv.notify_all();
}
bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->kv.has_all(keys);
}
bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(s_->mu);
  return s_->kv.kv.erase(key) > 0;
}
int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> g(s_->mu);
  return int64_t(s_->kv.kv.size());
}
void HashStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  std::unique_lock<std::mutex> g(s_->mu);
  if (!s_->cv.wait_for(g, timeout, [&] { return s_->kv.has_all(keys); })) wait_timeout(keys, timeout);
}

// ---------------------------------------------------------------- PrefixStore
PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store->timeout()), prefix_(std::move(prefix)), store_(std::move(store)) {}
std::vector<std::string> PrefixStore::k(const std::vector<std::string>& keys) const {
  std::vector<std::string> r;
  for (auto& key : keys) r.push_back(k(key));
  return r;
}
void PrefixStore::set(const std::string& key, const std::string& value) { store_->set(k(key), value); }
std::string PrefixStore::get(const std::string& key) {
  wait({key});
  return store_->get(k(key));
}
int64_t PrefixStore::add(const std::string& key, int64_t amount) { return store_->add(k(key), amount); }
std::string PrefixStore::compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
  return store_->compare_set(k(key), expected, desired);
}
void PrefixStore::append(const std::string& key, const std::string& value) { store_->append(k(key), value); }
bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(k(keys)); }
bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(k(key)); }
int64_t PrefixStore::num_keys() { return store_->num_keys(); }
void PrefixStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) { store_->wait(k(keys), timeout); }

// ---------------------------------------------------------------- FileStore
// The file is a log of records (u32 op, u32 key length, key, u32 value length, value); every
// process replays what others appended since its last read. flock serializes writers, so an
// add() reads the newest value and appends the sum atomically.
struct FileStore::Log {
  std::string path;
  int fd = -1;
  off_t pos = 0;
  KeyValues kv;
  std::mutex mu;  // threads of one process share the fd's offset

  enum Op : uint32_t { kSet = 1, kDelete = 2 };

  struct Lock {
    int fd;
    Lock(int fd, int how) : fd(fd) {
      while (flock(fd, how) != 0)
        if (errno != EINTR) throw DistStoreError(std::string("FileStore: flock failed: ") + std::strerror(errno));
    }
    ~Lock() { flock(fd, LOCK_UN); }
  };

  void refresh() {  // caller holds a lock on the file
    struct stat st;
    if (fstat(fd, &st) != 0) throw DistStoreError(std::string("FileStore: fstat failed: ") + std::strerror(errno));
    if (st.st_size <= pos) return;
    std::string buf(size_t(st.st_size - pos), '\0');
    ssize_t got = pread(fd, buf.data(), buf.size(), pos);
    if (got != ssize_t(buf.size())) throw DistStoreError("FileStore: short read of " + path);
    size_t i = 0;
    auto u32 = [&]() {
      uint32_t v;
      if (i + 4 > buf.size()) throw DistStoreError("FileStore: " + path + " is truncated or not a store");
      std::memcpy(&v, buf.data() + i, 4);
      i += 4;
      return v;
    };
    auto bytes = [&](uint32_t n) {
      if (i + n > buf.size()) throw DistStoreError("FileStore: " + path + " is truncated or not a store");
      std::string s = buf.substr(i, n);
      i += n;
      return s;
    };
    while (i < buf.size()) {
      uint32_t op = u32();
      std::string key = bytes(u32());
      std::string value = bytes(u32());
      if (op == kSet) kv.kv[key] = std::move(value);
      else if (op == kDelete) kv.kv.erase(key);
      else throw DistStoreError("FileStore: " + path + " is not a store file");
    }
    pos = st.st_size;
  }

  void write(uint32_t op, const std::string& key, const std::string& value) {  // caller holds LOCK_EX
    std::string rec;
    auto put = [&](uint32_t v) { rec.append(reinterpret_cast<const char*>(&v), 4); };
    put(op);
    put(uint32_t(key.size()));
    rec += key;
    put(uint32_t(value.size()));
    rec += value;
    off_t end = lseek(fd, 0, SEEK_END);
    size_t done = 0;
    while (done < rec.size()) {
      ssize_t n = pwrite(fd, rec.data() + done, rec.size() - done, end + off_t(done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw DistStoreError("FileStore: write to " + path + " failed: " + std::strerror(errno));
      done += size_t(n);
    }
    refresh();
  }

  // Runs a KeyValues operation on a scratch copy of `key`'s entry and appends the entry when it
  // changed (caller holds LOCK_EX): the map itself changes only by replaying the file, so it never
  // holds a value the file does not.
  template <class F> auto update(const std::string& key, F&& f) {
    KeyValues scratch;
    auto it = kv.kv.find(key);
    if (it != kv.kv.end()) scratch.kv[key] = it->second;
    auto r = f(scratch);
    auto now = scratch.kv.find(key);
    if (now != scratch.kv.end() && (it == kv.kv.end() || it->second != now->second)) write(kSet, key, now->second);
    return r;
  }

  template <class F> auto exclusive(F&& f) {
    std::lock_guard<std::mutex> g(mu);
    Lock l(fd, LOCK_EX);
    refresh();
    return f();
  }
  template <class F> auto shared(F&& f) {
    std::lock_guard<std::mutex> g(mu);
    Lock l(fd, LOCK_SH);
    refresh();
    return f();
  }
};

FileStore::FileStore(std::string path, int64_t num_workers)
    : path_(std::move(path)), num_workers_(num_workers), log_(std::make_unique<Log>()) {
  log_->path = path_;
  log_->fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (log_->fd < 0) throw DistStoreError("FileStore: cannot open " + path_ + ": " + std::strerror(errno));
  // every instance registers; the last one to leave removes the file (torch's cleanup rule)
  log_->exclusive([&] { return log_->update("cleanup/", [](KeyValues& kv) { return kv.add("cleanup/", 1); }); });
}

FileStore::~FileStore() {
  try {
    log_->exclusive([&] {
      int64_t left = log_->update("cleanup/", [](KeyValues& kv) { return kv.add("cleanup/", -1); });
      if (num_workers_ > 0 && left <= 0) ::unlink(path_.c_str());
      return 0;
    });
  } catch (const std::exception&) {  // a destructor never throws: a file left behind is harmless
  }
  ::close(log_->fd);
}

void FileStore::set(const std::string& key, const std::string& value) {
  log_->exclusive([&] { return log_->write(Log::kSet, key, value), 0; });
}
std::string FileStore::get(const std::string& key) {
  wait({key});
  return log_->shared([&] { return log_->kv.kv.at(key); });
}
int64_t FileStore::add(const std::string& key, int64_t amount) {
  return log_->exclusive([&] { return log_->update(key, [&](KeyValues& kv) { return kv.add(key, amount); }); });
}
std::string FileStore::compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
  return log_->exclusive(
      [&] { return log_->update(key, [&](KeyValues& kv) { return kv.compare_set(key, expected, desired); }); });
}
void FileStore::append(const std::string& key, const std::string& value) {
  log_->exclusive([&] { return log_->update(key, [&](KeyValues& kv) { return kv.kv[key] += value, 0; }); });
}
bool FileStore::check(const std::vector<std::string>& keys) {
  return log_->shared([&] { return log_->kv.has_all(keys); });
}
bool FileStore::delete_key(const std::string& key) {
  return log_->exclusive([&] {
    if (!log_->kv.kv.count(key)) return false;
    log_->write(Log::kDelete, key, "");
    return true;
  });
}
int64_t FileStore::num_keys() {
  return log_->shared([&] { return int64_t(log_->kv.kv.size()) - int64_t(log_->kv.kv.count("cleanup/")); });
}
void FileStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  auto nap = std::chrono::milliseconds(1);
  while (!check(keys)) {
    if (Clock::now() >= deadline) wait_timeout(keys, timeout);
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(20));
  }
}

// ---------------------------------------------------------------- TCPStore wire format
// request: u8 command, u32 count, count x (u32 length, bytes); reply: u32 count, count x (...).
// WAIT's reply comes when every key exists, so waiting costs no polling.
namespace {

enum Cmd : uint8_t { kSet = 1, kGet, kAdd, kCas, kAppend, kCheck, kDelete, kNumKeys, kWait };

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

std::string encode(const std::vector<std::string>& parts) {
  std::string out;
  put_u32(out, uint32_t(parts.size()));
  for (auto& p : parts) {
    put_u32(out, uint32_t(p.size()));
    out += p;
  }
  return out;
}

// Parses one message of `n` parts at `buf[at]`; false when incomplete.
bool decode(const std::string& buf, size_t& at, std::vector<std::string>& parts) {
  size_t i = at;
  auto u32 = [&](uint32_t& v) {
    if (i + 4 > buf.size()) return false;
    std::memcpy(&v, buf.data() + i, 4);
    i += 4;
    return true;
  };
  uint32_t n;
  if (!u32(n)) return false;
  parts.clear();
  for (uint32_t j = 0; j < n; j++) {
    uint32_t len;
    if (!u32(len) || i + len > buf.size()) return false;
    parts.emplace_back(buf, i, len);
    i += len;
  }
  at = i;
  return true;
}

bool send_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

std::string errno_text() { return std::string(std::strerror(errno)); }

}  // namespace

// ---------------------------------------------------------------- TCPStore server
class TCPStore::Server {
 public:
  explicit Server(uint16_t port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) throw DistNetworkError("TCPStore: socket() failed: " + errno_text());
    int one = 1, zero = 0;
    setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {  // dual stack: IPv4 clients arrive as mapped addresses
      setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(port);
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(port);
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    if (rc != 0 || ::listen(listen_fd_, 1024) != 0) {
      std::string why = errno_text();
      ::close(listen_fd_);
      throw DistNetworkError("The server socket has failed to listen on any local network address. port: " +
                             std::to_string(port) + ", " + why);
    }
    sockaddr_storage got{};
    socklen_t len = sizeof got;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&got), &len);
    port_ = ntohs(got.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
    if (::pipe2(wake_, O_CLOEXEC) != 0) throw DistNetworkError("TCPStore: pipe() failed: " + errno_text());
    thread_ = std::thread([this] { loop(); });
  }

  ~Server() {
    char c = 0;
    (void)!::write(wake_[1], &c, 1);
    thread_.join();
    for (auto& [fd, c2] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  uint16_t port() const { return port_; }

 private:
  struct Conn {
    std::string in;
    std::vector<std::string> waiting;  // keys of a pending WAIT
  };

  void loop() {
    std::vector<pollfd> fds;
    for (;;) {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          int one = 1;
          setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients_[fd];
        }
      }
      for (size_t i = 2; i < fds.size(); i++) {
        if (!fds[i].revents) continue;
        int fd = fds[i].fd;
        char buf[65536];
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) {
          if (n < 0 && errno == EINTR) continue;
          ::close(fd);
          clients_.erase(fd);
          continue;
        }
        Conn& c = clients_[fd];
        c.in.append(buf, size_t(n));
        if (!serve(fd, c)) {
          ::close(fd);
          clients_.erase(fd);
        }
      }
    }
  }

  // Handles every complete request in c.in; false drops the client.
  bool serve(int fd, Conn& c) {
    size_t at = 0;
    std::vector<std::string> parts;
    bool changed = false;
    while (at < c.in.size()) {
      uint8_t cmd = uint8_t(c.in[at]);
      size_t body = at + 1;
      if (!decode(c.in, body, parts)) break;
      at = body;
      std::vector<std::string> reply;
      auto need = [&](size_t n) { return parts.size() == n; };
      switch (cmd) {
        case kSet:
          if (!need(2)) return false;
          kv_.kv[parts[0]] = parts[1];
          changed = true;
          break;
        case kGet: {
          if (!need(1)) return false;
          auto it = kv_.kv.find(parts[0]);
          if (it != kv_.kv.end()) reply.push_back(it->second);
          break;
        }
        case kAdd:
          if (!need(2)) return false;
          try {
            reply.push_back(std::to_string(kv_.add(parts[0], std::stoll(parts[1]))));
          } catch (const std::exception& e) {
            reply = {"", e.what()};  // two parts: an error
          }
          changed = true;
          break;
        case kCas:
          if (!need(3)) return false;
          reply.push_back(kv_.compare_set(parts[0], parts[1], parts[2]));
          changed = true;
          break;
        case kAppend:
          if (!need(2)) return false;
          kv_.kv[parts[0]] += parts[1];
          changed = true;
          break;
        case kCheck:
          reply.push_back(kv_.has_all(parts) ? "1" : "0");
          break;
        case kDelete:
          if (!need(1)) return false;
          reply.push_back(kv_.kv.erase(parts[0]) ? "1" : "0");
          break;
        case kNumKeys:
          reply.push_back(std::to_string(kv_.kv.size()));
          break;
        case kWait:
          if (!kv_.has_all(parts)) {
            c.waiting = parts;
            continue;  // the reply goes out when the keys exist
          }
          reply.push_back("ok");
          break;
        default:
          return false;
      }
      if (!send_all(fd, encode(reply))) return false;
    }
    c.in.erase(0, at);
    if (changed) wake_waiters();
    return true;
  }

  void wake_waiters() {
    for (auto& [fd, c] : clients_) {
      if (c.waiting.empty() || !kv_.has_all(c.waiting)) continue;
      c.waiting.clear();
      send_all(fd, encode({"ok"}));  // a failed send shows up as a closed socket in the loop
    }
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::map<int, Conn> clients_;
  KeyValues kv_;
  std::thread thread_;
};

// ---------------------------------------------------------------- TCPStore client
class TCPStore::Client {
 public:
  Client(std::string host, uint16_t port, Milliseconds timeout) : host_(std::move(host)), port_(port) {
    connect(timeout);
  }
  ~Client() { disconnect(); }

  // One request and its reply; `timeout` bounds the wait for the reply (WAIT), after which the
  // connection is dropped (a late reply would desynchronize it) and reopened on the next call.
  std::vector<std::string> call(Cmd cmd, const std::vector<std::string>& args, Milliseconds timeout,
                                const std::vector<std::string>* wait_keys = nullptr) {
    std::lock_guard<std::mutex> g(mu_);
    if (fd_ < 0) connect(timeout);
    std::string msg(1, char(cmd));
    msg += encode(args);
    if (!send_all(fd_, msg)) fail("send");
    auto deadline = Clock::now() + timeout;
    std::vector<std::string> parts;
    for (;;) {
      size_t at = 0;
      if (decode(in_, at, parts)) {
        in_.erase(0, at);
        return parts;
      }
      auto left = std::chrono::duration_cast<Milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        disconnect();
        if (wait_keys) wait_timeout(*wait_keys, timeout);
        throw DistStoreError("TCPStore: no reply from " + where() + " within " + std::to_string(timeout.count()) + "ms");
      }
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, int(std::min<int64_t>(left, 1 << 30)));
      if (r < 0 && errno != EINTR) fail("poll");
      if (r <= 0) continue;
      char buf[65536];
      ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n == 0) {
        disconnect();
        throw DistNetworkError("TCPStore: the server at " + where() + " closed the connection (did the master exit?)");
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("recv");
      }
      in_.append(buf, size_t(n));
    }
  }

 private:
  std::string where() const { return host_ + ":" + std::to_string(port_); }

  [[noreturn]] void fail(const char* what) {
    std::string why = errno_text();
    disconnect();
    throw DistNetworkError(std::string("TCPStore: ") + what + " to " + where() + " failed: " + why);
  }

  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    in_.clear();
  }

  // The server may start after its clients: retry until the timeout.
  void connect(Milliseconds timeout) {
    auto deadline = Clock::now() + timeout;
    auto nap = std::chrono::milliseconds(10);
    std::string last = "no address";
    for (;;) {
      addrinfo hints{}, *res = nullptr;
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      int gai = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res);
      if (gai != 0) {
        last = gai_strerror(gai);
      } else {
        for (addrinfo* a = res; a; a = a->ai_next) {
          int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
          if (fd < 0) continue;
          if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            fd_ = fd;
            break;
          }
          last = errno_text();
          ::close(fd);
        }
        ::freeaddrinfo(res);
      }
      if (fd_ >= 0) return;
      if (Clock::now() + nap > deadline)
        throw DistNetworkError("TCPStore: could not connect to " + where() + " within " +
                               std::to_string(timeout.count()) + "ms (" + last + ")");
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::milliseconds(1000));
    }
  }

  std::string host_;
  uint16_t port_;
  int fd_ = -1;
  std::string in_;
  std::mutex mu_;
};

// ---------------------------------------------------------------- TCPStore
TCPStore::TCPStore(std::string host, const TCPStoreOptions& opts)
    : Store(opts.timeout), host_(std::move(host)), port_(opts.port) {
  if (opts.is_master) {
    server_ = std::make_unique<Server>(opts.port);
    port_ = server_->port();
  }
  client_ = std::make_unique<Client>(opts.is_master ? "127.0.0.1" : host_, port_, timeout_);
  if (opts.world_size && opts.wait_for_workers) {
    // every member checks in; everyone waits until all have (torch's init barrier)
    int64_t n = add("init/", 1);
    if (n < *opts.world_size) {
      try {
        wait({"init/done"});
      } catch (const DistStoreError&) {
        throw DistStoreError("Timed out after " + std::to_string(timeout_.count() / 1000) +
                             " seconds waiting for clients. " + std::to_string(add("init/", 0)) + "/" +
                             std::to_string(*opts.world_size) + " clients joined.");
      }
    } else {
      set("init/done", "1");
    }
  }
}

TCPStore::~TCPStore() {
  client_.reset();
  server_.reset();
}

void TCPStore::set(const std::string& key, const std::string& value) { client_->call(kSet, {key, value}, timeout_); }
std::string TCPStore::get(const std::string& key) {
  wait({key});
  auto r = client_->call(kGet, {key}, timeout_);
  if (r.empty()) throw DistStoreError("TCPStore: key '" + key + "' was deleted while being read");
  return r[0];
}
int64_t TCPStore::add(const std::string& key, int64_t amount) {
  auto r = client_->call(kAdd, {key, std::to_string(amount)}, timeout_);
  if (r.size() != 1) throw DistStoreError(r.size() == 2 ? r[1] : "TCPStore: bad reply to add");
  return std::stoll(r[0]);
}
std::string TCPStore::compare_set(const std::string& key, const std::string& expected, const std::string& desired) {
  return client_->call(kCas, {key, expected, desired}, timeout_).at(0);
}
void TCPStore::append(const std::string& key, const std::string& value) {
  client_->call(kAppend, {key, value}, timeout_);
}
bool TCPStore::check(const std::vector<std::string>& keys) { return client_->call(kCheck, keys, timeout_).at(0) == "1"; }
bool TCPStore::delete_key(const std::string& key) { return client_->call(kDelete, {key}, timeout_).at(0) == "1"; }
int64_t TCPStore::num_keys() { return std::stoll(client_->call(kNumKeys, {}, timeout_).at(0)); }
void TCPStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  client_->call(kWait, keys, timeout, &keys);
}

}  // namespace ember::distributed
