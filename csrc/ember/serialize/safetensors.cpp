// safetensors reading and writing (see safetensors.h): a small JSON reader/writer for the header,
// checks of every entry against the file, and POSIX I/O (pread into the new tensors, atomic rename).
#include "ember/serialize/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/ops.h"
#include "ember/serialize/json.h"

namespace ember {
namespace {

constexpr uint64_t kMaxHeader = 100u * 1024 * 1024;

const std::pair<const char*, ScalarType> kDtypes[] = {
    {"F64", kDouble}, {"F32", kFloat}, {"F16", kHalf}, {"BF16", kBFloat16}, {"I64", kLong},
    {"I32", kInt},    {"I16", kShort}, {"I8", kChar},  {"U8", kByte},       {"BOOL", kBool},
};

const char* st_name(ScalarType t) {
  for (auto& d : kDtypes)
    if (d.second == t) return d.first;
  EMBER_FAIL(Runtime, "safetensors: unsupported dtype ", t);
}

// ---------------------------------------------------------------- header
struct Entry {
  std::string name;
  ScalarType dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

struct Header {
  std::vector<Entry> entries;
  StringDict metadata;
  uint64_t data_start = 0;  // 8 + header length
};

uint64_t read_le64(const unsigned char* b) {
  uint64_t n = 0;
  for (int k = 7; k >= 0; k--) n = (n << 8) | b[k];
  return n;
}

// Checks the 8-byte length prefix against the file size; returns the JSON length.
uint64_t header_length(const unsigned char* prefix, uint64_t file_size, const std::string& what) {
  EMBER_CHECK(file_size >= 8, what, ": file too small to be a safetensors file");
  uint64_t n = read_le64(prefix);
  EMBER_CHECK(n <= kMaxHeader && n <= file_size - 8, what, ": invalid header length ", n);
  return n;
}

Header parse_header(const char* json, uint64_t n, uint64_t file_size, const std::string& what) {
  EMBER_CHECK(n > 0 && json[0] == '{', what, ": invalid safetensors header: it must be a JSON object");
  json::Json doc = json::parse(json, n, what + ": invalid safetensors header");
  Header h;
  h.data_start = 8 + n;
  uint64_t data_len = file_size - h.data_start;
  std::set<std::string> seen;
  for (auto& [name, info] : doc.obj) {
    EMBER_CHECK(seen.insert(name).second, what, ": tensor name '", name, "' appears twice in the header");
    if (name == "__metadata__") {
      EMBER_CHECK(info.kind == json::Json::Obj, what, ": __metadata__ must be an object of strings");
      for (auto& [k, v] : info.obj) {
        EMBER_CHECK(v.kind == json::Json::Str, what, ": __metadata__ values must be strings");
        h.metadata[k] = v.s;
      }
      continue;
    }
    EMBER_CHECK(info.kind == json::Json::Obj, what, ": malformed entry for tensor '", name, "'");
    const json::Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (auto& [k, v] : info.obj) {
      if (k == "dtype") dtype = &v;
      else if (k == "shape") shape = &v;
      else if (k == "data_offsets") offsets = &v;
    }
    EMBER_CHECK(dtype && shape && offsets && dtype->kind == json::Json::Str && shape->kind == json::Json::Arr &&
                    offsets->kind == json::Json::Arr && offsets->arr.size() == 2,
                what, ": malformed entry for tensor '", name, "'");
    Entry e{name, ScalarType::Undefined, {}, 0, 0};
    for (auto& d : kDtypes)
      if (dtype->s == d.first) e.dtype = d.second;
    EMBER_CHECK(e.dtype != ScalarType::Undefined, what, ": unsupported dtype '", dtype->s, "' for tensor '", name, "'");
    unsigned __int128 bytes = uint64_t(itemsize(e.dtype));
    for (auto& s : shape->arr) {
      EMBER_CHECK(s.kind == json::Json::Int && s.i >= 0, what, ": invalid shape for tensor '", name, "'");
      e.shape.push_back(s.i);
      bytes *= uint64_t(s.i);
      if (bytes > (unsigned __int128)(UINT64_MAX)) bytes = (unsigned __int128)(UINT64_MAX);
    }
    EMBER_CHECK(offsets->arr[0].kind == json::Json::Int && offsets->arr[1].kind == json::Json::Int && offsets->arr[0].i >= 0 &&
                    offsets->arr[0].i <= offsets->arr[1].i && uint64_t(offsets->arr[1].i) <= data_len,
                what, ": data offsets of tensor '", name, "' are outside the file");
    e.begin = uint64_t(offsets->arr[0].i);
    e.end = uint64_t(offsets->arr[1].i);
    EMBER_CHECK(bytes == e.end - e.begin, what, ": tensor '", name, "' of dtype ", dtype->s,
                " does not match its ", e.end - e.begin, " bytes");
    h.entries.push_back(std::move(e));
  }
  // the spec: data regions may not overlap and must cover the buffer without holes
  std::vector<const Entry*> order;
  for (auto& e : h.entries) order.push_back(&e);
  std::sort(order.begin(), order.end(), [](const Entry* a, const Entry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t pos = 0;
  for (const Entry* e : order) {
    EMBER_CHECK(e->begin >= pos || e->begin == e->end, what, ": tensors overlap at '", e->name, "'");
    EMBER_CHECK(e->begin <= pos || e->begin == e->end, what, ": the data buffer has a hole before '", e->name, "'");
    pos = std::max(pos, e->end);
  }
  EMBER_CHECK(pos == data_len, what, ": the data buffer has ", data_len - pos, " bytes no tensor uses");
  return h;
}

// ---------------------------------------------------------------- files
class File {
 public:
  File(const std::string& path, int flags, mode_t mode = 0) : path_(path), fd_(::open(path.c_str(), flags, mode)) {
    EMBER_CHECK(fd_ >= 0, "cannot open ", path, ": ", std::strerror(errno));
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  uint64_t size() const {
    struct stat st;
    EMBER_CHECK(::fstat(fd_, &st) == 0, "cannot stat ", path_, ": ", std::strerror(errno));
    return uint64_t(st.st_size);
  }
  void pread_all(void* dst, uint64_t n, uint64_t offset) const {
    char* p = static_cast<char*>(dst);
    while (n > 0) {
      ssize_t got = ::pread(fd_, p, size_t(std::min<uint64_t>(n, 1u << 30)), off_t(offset));
      if (got < 0 && errno == EINTR) continue;
      EMBER_CHECK(got > 0, path_, ": read failed (", got == 0 ? "unexpected end of file" : std::strerror(errno), ")");
      p += got;
      n -= uint64_t(got);
      offset += uint64_t(got);
    }
  }
  void write_all(const char* p, size_t n) const {
    while (n > 0) {
      ssize_t put = ::write(fd_, p, std::min<size_t>(n, 1u << 30));
      if (put < 0 && errno == EINTR) continue;
      EMBER_CHECK(put > 0, path_, ": write failed (", std::strerror(errno), ")");
      p += put;
      n -= size_t(put);
    }
  }
  void sync() const { EMBER_CHECK(::fsync(fd_) == 0, path_, ": fsync failed (", std::strerror(errno), ")"); }
  void close() {
    int fd = fd_;
    fd_ = -1;
    EMBER_CHECK(::close(fd) == 0, path_, ": close failed (", std::strerror(errno), ")");
  }

 private:
  std::string path_;
  int fd_;
};

Header read_header(const File& f, uint64_t size, const std::string& path) {
  unsigned char prefix[8] = {0};
  if (size >= 8) f.pread_all(prefix, 8, 0);
  uint64_t n = header_length(prefix, size, path);
  std::string json(n, '\0');
  f.pread_all(json.data(), n, 8);
  return parse_header(json.data(), n, size, path);
}

Tensor read_tensor(const File& f, const Header& h, const Entry& e) {
  Tensor t = empty_tensor(e.shape, e.dtype);
  f.pread_all(t.data_ptr(), e.end - e.begin, h.data_start + e.begin);
  return t;
}

void check_little_endian() {
  const uint16_t probe = 1;
  EMBER_CHECK(*reinterpret_cast<const unsigned char*>(&probe) == 1, "safetensors I/O needs a little-endian host");
}

}  // namespace

namespace serialize {

std::string to_safetensors(const TensorDict& tensors, const StringDict& metadata) {
  check_little_endian();
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> data;
  std::ostringstream js;
  js << '{';
  uint64_t offset = 0;
  bool first = true;
  for (auto& [name, t] : tensors) {  // std::map: sorted names, so the bytes are deterministic
    EMBER_CHECK(t.defined(), "safetensors: tensor '", name, "' is undefined");
    EMBER_CHECK(name != "__metadata__", "safetensors: '__metadata__' is reserved and cannot name a tensor");
    Tensor c = t.to(Device()).contiguous();  // the bytes are written from host memory
    if (!first) js << ',';
    first = false;
    json::write_string(js, name);
    js << ":{\"dtype\":\"" << st_name(c.dtype()) << "\",\"shape\":[";
    for (int64_t d = 0; d < c.dim(); d++) js << (d ? "," : "") << c.size(d);
    uint64_t n = uint64_t(c.nbytes());
    js << "],\"data_offsets\":[" << offset << ',' << offset + n << "]}";
    offset += n;
    data.push_back(std::move(c));
  }
  if (!metadata.empty()) {
    js << (first ? "" : ",") << "\"__metadata__\":{";
    bool f2 = true;
    for (auto& [k, v] : metadata) {
      js << (f2 ? "" : ",");
      f2 = false;
      json::write_string(js, k);
      js << ':';
      json::write_string(js, v);
    }
    js << '}';
  }
  js << '}';
  std::string header = js.str();
  header.append((8 - header.size() % 8) % 8, ' ');  // align the data to 8 bytes
  std::string out;
  out.reserve(8 + header.size() + offset);
  uint64_t n = header.size();
  for (int k = 0; k < 8; k++) out += char((n >> (8 * k)) & 0xFF);
  out += header;
  for (auto& c : data) out.append(static_cast<const char*>(c.data_ptr()), size_t(c.nbytes()));
  return out;
}

TensorDict from_safetensors(const void* data, size_t size, StringDict* metadata, const std::string& what) {
  check_little_endian();
  const auto* bytes = static_cast<const unsigned char*>(data);
  unsigned char prefix[8] = {0};
  if (size >= 8) std::memcpy(prefix, bytes, 8);
  uint64_t n = header_length(prefix, size, what);
  Header h = parse_header(reinterpret_cast<const char*>(bytes) + 8, n, size, what);
  TensorDict out;
  for (auto& e : h.entries) {
    Tensor t = empty_tensor(e.shape, e.dtype);
    if (e.end > e.begin) std::memcpy(t.data_ptr(), bytes + h.data_start + e.begin, e.end - e.begin);
    out.emplace(e.name, std::move(t));
  }
  if (metadata) *metadata = std::move(h.metadata);
  return out;
}

LoadResult load_parameters(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& params,
                           bool strict) {
  check_little_endian();
  File f(path, O_RDONLY | O_CLOEXEC);
  uint64_t size = f.size();
  Header h = read_header(f, size, path);
  std::map<std::string, const Entry*> by_name;
  for (auto& e : h.entries) by_name[e.name] = &e;
  LoadResult r;
  std::set<std::string> used;
  std::vector<std::pair<const Tensor*, const Entry*>> todo;
  for (auto& [name, p] : params) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      r.missing_keys.push_back(name);
      continue;
    }
    const Entry& e = *it->second;
    used.insert(name);
    EMBER_CHECK(p.defined(), "load_parameters: parameter '", name, "' is undefined");
    EMBER_CHECK(p.dtype() == e.dtype, "load_parameters: dtype mismatch for '", name, "': the file has ", e.dtype,
                ", the parameter is ", p.dtype());
    EMBER_CHECK(p.sizes() == IntArrayRef(e.shape), "load_parameters: size mismatch for '", name,
                "': copying a param with shape ", IntArrayRef(e.shape), " from ", path,
                ", the shape in the current model is ", p.sizes());
    todo.emplace_back(&p, &e);
  }
  for (auto& e : h.entries)
    if (!used.count(e.name)) r.unexpected_keys.push_back(e.name);
  if (strict && (!r.missing_keys.empty() || !r.unexpected_keys.empty())) {
    std::ostringstream os;
    os << "load_parameters: error loading " << path << ":";
    if (!r.missing_keys.empty()) {
      os << " Missing key(s):";
      for (auto& k : r.missing_keys) os << " \"" << k << "\"";
      os << ".";
    }
    if (!r.unexpected_keys.empty()) {
      os << " Unexpected key(s):";
      for (auto& k : r.unexpected_keys) os << " \"" << k << "\"";
      os << ".";
    }
    EMBER_FAIL(Runtime, os.str());
  }
  autograd::NoGradGuard no_grad;
  for (auto& [p, e] : todo) p->copy_(read_tensor(f, h, *e));
  return r;
}

}  // namespace serialize

void save(const TensorDict& tensors, const std::string& path, const StringDict& metadata) {
  std::string bytes = serialize::to_safetensors(tensors, metadata);
  static std::atomic<uint64_t> counter{0};
  size_t slash = path.find_last_of('/');
  std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = folder + "." + base + "." + std::to_string(::getpid()) + "." +
                    std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "." +
                    std::to_string(counter++) + ".tmp";
  try {
    File f(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    f.write_all(bytes.data(), bytes.size());
    f.sync();
    f.close();
    EMBER_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0, "cannot rename ", tmp, " to ", path, ": ",
                std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

void save(const Tensor& tensor, const std::string& path) { save(TensorDict{{"tensor", tensor}}, path); }

TensorDict load_file(const std::string& path, StringDict* metadata) {
  check_little_endian();
  File f(path, O_RDONLY | O_CLOEXEC);
  uint64_t size = f.size();
  Header h = read_header(f, size, path);
  TensorDict out;
  for (auto& e : h.entries) out.emplace(e.name, read_tensor(f, h, e));
  if (metadata) *metadata = std::move(h.metadata);
  return out;
}

void load(TensorDict& tensors, const std::string& path) { tensors = load_file(path); }

void load(Tensor& tensor, const std::string& path) {
  TensorDict all = load_file(path);
  EMBER_CHECK(all.size() == 1, path, ": expected a file holding one tensor, found ", all.size());
  tensor = all.begin()->second;
}

}  // namespace ember
