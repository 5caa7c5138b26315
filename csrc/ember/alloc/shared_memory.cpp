#include "ember/alloc/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "ember/core/error.h"

namespace ember::shm {

namespace {

// kFile segments start with this header; data follows one cache line later (keeps 64-byte alignment).
struct Header {
  std::atomic<int64_t> refcount;
};
constexpr size_t kHeaderBytes = 64;

struct Mapping {
  Kind kind;
  int fd;            // kFd: the memfd (kept open so it can be sent again); kFile: -1
  std::string name;  // kFile
  void* base;
  size_t map_bytes;
  // A fork()ed child inherits the mapping but holds no reference of its own to drop.
  pid_t owner = ::getpid();
};

std::atomic<int> g_tracker_fd{-1};
std::atomic<int64_t> g_live{0};

std::string errno_str() { return std::strerror(errno); }

void tell_tracker(const char* cmd, const std::string& name) {
  int fd = g_tracker_fd.load();
  if (fd < 0) return;
  std::string line = std::string(cmd) + ":" + name + ":shared_memory\n";
  // one write below PIPE_BUF is atomic; a dead tracker only costs the message
  ssize_t r = ::write(fd, line.data(), line.size());
  (void)r;
}

Header* header(void* base) { return static_cast<Header*>(base); }

void drop_file_ref(void* base, const std::string& name) {
  if (header(base)->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    ::shm_unlink(name.c_str());
    tell_tracker("UNREGISTER", name);
  }
}

void unmap(void* ctx, void*, size_t) {
  auto* m = static_cast<Mapping*>(ctx);
  if (m->kind == Kind::kFile && m->owner == ::getpid()) drop_file_ref(m->base, m->name);
  ::munmap(m->base, m->map_bytes);
  if (m->fd >= 0) ::close(m->fd);
  delete m;
  g_live.fetch_sub(1);
}

void* map_fd(int fd, size_t bytes) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    errno = e;
    EMBER_CHECK(false, "shared memory: mmap of ", bytes, " bytes failed: ", errno_str());
  }
  return p;
}

size_t file_size(int fd) {
  struct stat st;
  EMBER_CHECK(::fstat(fd, &st) == 0, "shared memory: fstat failed: ", errno_str());
  return size_t(st.st_size);
}

Storage wrap_mapping(Mapping* m, size_t nbytes) {
  g_live.fetch_add(1);
  char* data = static_cast<char*>(m->base) + (m->kind == Kind::kFile ? kHeaderBytes : 0);
  return StorageImpl::wrap(data, nbytes, unmap, m);
}

const Mapping& mapping_of(const StorageImpl& s, Kind want) {
  EMBER_CHECK(kind_of(s) == want, "storage is not in shared memory of the requested kind; call share_memory_() first");
  return *static_cast<const Mapping*>(s.deleter_ctx());
}

std::string fresh_name() {
  static std::atomic<uint64_t> counter{0};
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return "/ember_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1)) + "_" +
         std::to_string(rng() % 1000000007ULL);
}

// A new mapping of `nbytes` usable bytes (kFile: refcount 1, registered with the tracker).
Mapping* create(Kind kind, size_t nbytes) {
  auto* m = new Mapping{kind, -1, {}, nullptr, 0};
  if (kind == Kind::kFd) {
    m->map_bytes = std::max<size_t>(nbytes, 1);
    int fd = ::memfd_create("ember_shared", MFD_CLOEXEC);
    if (fd < 0 || ::ftruncate(fd, off_t(m->map_bytes)) != 0) {
      std::string err = errno == EMFILE ? errno_str() + " (try set_sharing_strategy('file_system'))" : errno_str();
      if (fd >= 0) ::close(fd);
      delete m;
      EMBER_CHECK(false, "shared memory: memfd of ", nbytes, " bytes failed: ", err);
    }
    m->fd = fd;
    try { m->base = map_fd(fd, m->map_bytes); } catch (...) { delete m; throw; }
    return m;
  }
  m->map_bytes = nbytes + kHeaderBytes;
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 16; tries++) {
    m->name = fresh_name();
    fd = ::shm_open(m->name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0) {
    std::string err = errno_str();
    delete m;
    EMBER_CHECK(false, "shared memory: shm_open failed: ", err);
  }
  if (::ftruncate(fd, off_t(m->map_bytes)) != 0) {
    std::string err = errno_str();
    ::close(fd);
    ::shm_unlink(m->name.c_str());
    delete m;
    EMBER_CHECK(false, "shared memory: cannot size a segment of ", nbytes, " bytes: ", err);
  }
  try {
    m->base = map_fd(fd, m->map_bytes);
  } catch (...) {
    ::shm_unlink(m->name.c_str());
    delete m;
    throw;
  }
  ::close(fd);
  new (m->base) Header{};
  header(m->base)->refcount.store(1);
  tell_tracker("REGISTER", m->name);
  return m;
}

}  // namespace

Kind kind_of(const StorageImpl& s) {
  if (s.deleter() != unmap) return Kind::kNone;
  return static_cast<const Mapping*>(s.deleter_ctx())->kind;
}

Storage allocate(size_t nbytes, Kind kind) {
  EMBER_CHECK(kind != Kind::kNone, "shared memory: expected a shared-memory kind");
  return wrap_mapping(create(kind, nbytes), nbytes);
}

void share(StorageImpl& s, Kind kind) {
  EMBER_CHECK(kind != Kind::kNone, "share: expected a shared-memory kind");
  EMBER_CHECK(s.device().is_cpu(), "share_memory_: only CPU storages can be shared");
  if (kind_of(s) != Kind::kNone) return;
  Mapping* m = create(kind, s.nbytes());
  char* data = static_cast<char*>(m->base) + (kind == Kind::kFile ? kHeaderBytes : 0);
  if (s.nbytes()) std::memcpy(data, s.data(), s.nbytes());
  g_live.fetch_add(1);
  s.replace_memory(data, unmap, m);
}

int fd_of(const StorageImpl& s) { return mapping_of(s, Kind::kFd).fd; }

std::string name_of(const StorageImpl& s) { return mapping_of(s, Kind::kFile).name; }

void add_ref(const StorageImpl& s) {
  header(mapping_of(s, Kind::kFile).base)->refcount.fetch_add(1, std::memory_order_relaxed);
}

Storage open_fd(int fd, size_t nbytes) {
  int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  EMBER_CHECK(own >= 0 || errno != EMFILE, "shared memory: too many open files: every tensor shared by the "
              "'file_descriptor' strategy keeps one open; raise the limit (ulimit -n) or call "
              "ember.multiprocessing.set_sharing_strategy('file_system')");
  EMBER_CHECK(own >= 0, "shared memory: invalid file descriptor ", fd, ": ", errno_str());
  size_t size = file_size(own);
  if (size < std::max<size_t>(nbytes, 1)) {
    ::close(own);
    EMBER_CHECK(false, "shared memory: the received segment holds ", size, " bytes, expected ", nbytes);
  }
  auto* m = new Mapping{Kind::kFd, own, {}, nullptr, std::max<size_t>(nbytes, 1)};
  try { m->base = map_fd(own, m->map_bytes); } catch (...) { delete m; throw; }
  return wrap_mapping(m, nbytes);
}

Storage open_file(const std::string& name, size_t nbytes, bool adopt) {
  int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  EMBER_CHECK(fd >= 0, "shared memory: cannot open segment ", name, ": ", errno_str(),
              " (was it released by every process before this one mapped it?)");
  size_t want = nbytes + kHeaderBytes;
  size_t size = 0;
  try { size = file_size(fd); } catch (...) { ::close(fd); throw; }
  if (size < want) {
    ::close(fd);
    EMBER_CHECK(false, "shared memory: segment ", name, " holds ", size, " bytes, expected ", want);
  }
  auto* m = new Mapping{Kind::kFile, -1, name, nullptr, want};
  try { m->base = map_fd(fd, want); } catch (...) { delete m; throw; }
  ::close(fd);
  if (!adopt) header(m->base)->refcount.fetch_add(1, std::memory_order_relaxed);
  return wrap_mapping(m, nbytes);
}

void release_file_ref(const std::string& name) {
  int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) return;
  void* base = ::mmap(nullptr, kHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) return;
  drop_file_ref(base, name);
  ::munmap(base, kHeaderBytes);
}

void set_tracker_fd(int fd) { g_tracker_fd.store(fd); }

int64_t live_mappings() { return g_live.load(); }

}  // namespace ember::shm
