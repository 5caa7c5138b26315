// Archives (see archive.h for the file format): entries kept in sorted maps by dotted key, written
// and read through the safetensors container; scalars live in its string metadata with a type tag.
#include "ember/serialize/archive.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>

#include "ember/autograd/grad_mode.h"
#include "ember/generated/ops.h"

namespace ember::serialize {
namespace {

const char* const kFormatKey = "__format__";
const char* const kVersionKey = "__version__";
const char* const kBuffersKey = "__buffers__";
const char* const kFormat = "ember.archive";
const char* const kVersion = "1";

bool reserved(const std::string& key) {
  return key == kFormatKey || key == kVersionKey || key == kBuffersKey || key == "__metadata__";
}

std::string first_component(const std::string& key) { return key.substr(0, key.find('.')); }

// Entries of a sorted map whose key starts with prefix, with the prefix removed.
template <class Map>
Map with_prefix(const Map& all, const std::string& prefix) {
  Map out;
  for (auto it = all.lower_bound(prefix); it != all.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    out.emplace(it->first.substr(prefix.size()), it->second);
  return out;
}

// The safetensors metadata of an archive: its scalars plus the format marker and buffer list.
StringDict archive_metadata(const StringDict& values, const std::set<std::string>& buffer_keys) {
  StringDict metadata = values;
  metadata[kFormatKey] = kFormat;
  metadata[kVersionKey] = kVersion;
  std::string buffers;
  for (auto& k : buffer_keys) buffers += (buffers.empty() ? "" : "\n") + k;
  if (!buffers.empty()) metadata[kBuffersKey] = buffers;
  return metadata;
}

}  // namespace

// ---------------------------------------------------------------- OutputArchive

void OutputArchive::check_new(const std::string& key) const {
  EMBER_CHECK(!key.empty(), "archive keys must not be empty");
  EMBER_CHECK(key.find('\n') == std::string::npos, "archive keys must not contain a newline");
  EMBER_CHECK(!reserved(key), "archive key '", key, "' is reserved by the archive format");
  EMBER_CHECK(!tensors_.count(key) && !values_.count(key), "archive key '", key, "' was already written");
}

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool is_buffer) {
  EMBER_CHECK(tensor.defined(), "cannot write an undefined tensor to the archive under '", key, "'");
  check_new(key);
  tensors_.emplace(key, tensor.detach());
  if (is_buffer) buffers_.insert(key);
}

void OutputArchive::write(const std::string& key, const OutputArchive& nested) {
  std::string prefix = key + ".";
  for (auto& [k, t] : nested.tensors_) check_new(prefix + k);
  for (auto& [k, v] : nested.values_) check_new(prefix + k);
  for (auto& [k, t] : nested.tensors_) tensors_.emplace(prefix + k, t);
  for (auto& [k, v] : nested.values_) values_.emplace(prefix + k, v);
  for (auto& k : nested.buffers_) buffers_.insert(prefix + k);
}

void OutputArchive::write(const std::string& key, const std::string& value) { write_scalar(key, "s:" + value); }

void OutputArchive::write_scalar(const std::string& key, std::string tagged) {
  check_new(key);
  values_.emplace(key, std::move(tagged));
}

void OutputArchive::write_double(const std::string& key, double value) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "f:%.17g", value);  // 17 digits: reads back bit for bit
  write_scalar(key, buf);
}

std::string OutputArchive::bytes() const { return to_safetensors(tensors_, archive_metadata(values_, buffers_)); }

void OutputArchive::save_to(const std::string& path) const {
  ember::save(tensors_, path, archive_metadata(values_, buffers_));  // atomic: temporary file, then rename
}

void OutputArchive::save_to(std::ostream& stream) const {
  std::string all = bytes();
  stream.write(all.data(), static_cast<std::streamsize>(all.size()));
  stream.flush();
  EMBER_CHECK(stream.good(), "failed to write the archive to the stream");
}

std::vector<std::string> OutputArchive::keys() const {
  std::set<std::string> out;
  for (auto& kv : tensors_) out.insert(first_component(kv.first));
  for (auto& kv : values_) out.insert(first_component(kv.first));
  return {out.begin(), out.end()};
}

// ---------------------------------------------------------------- InputArchive

void InputArchive::load_from(const std::string& path, std::optional<Device> device) {
  StringDict metadata;
  TensorDict tensors = load_file(path, &metadata);
  source_ = path;
  adopt(std::move(tensors), std::move(metadata), device);
}

void InputArchive::load_from(std::istream& stream, std::optional<Device> device) {
  std::string data((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  EMBER_CHECK(!stream.bad(), "failed to read the archive from the stream");
  load_from(data.data(), data.size(), device);
  source_ = "archive stream";
}

void InputArchive::load_from(const char* data, size_t size, std::optional<Device> device) {
  StringDict metadata;
  TensorDict tensors = from_safetensors(data, size, &metadata, "archive bytes");
  source_ = "archive bytes";
  adopt(std::move(tensors), std::move(metadata), device);
}

void InputArchive::adopt(TensorDict tensors, StringDict metadata, std::optional<Device> device) {
  TensorDict t;
  StringDict values;
  std::set<std::string> buffers;
  auto fmt = metadata.find(kFormatKey);
  if (fmt != metadata.end()) {  // an Ember archive; a plain safetensors file carries only tensors
    EMBER_CHECK(fmt->second == kFormat, source_, ": unknown archive format '", fmt->second, "'");
    auto ver = metadata.find(kVersionKey);
    EMBER_CHECK(ver != metadata.end() && ver->second == kVersion, source_, ": unsupported archive version '",
                ver == metadata.end() ? std::string("none") : ver->second, "' (this build reads ", kVersion, ")");
    for (auto& [k, v] : metadata) {
      if (k == kBuffersKey) {
        std::istringstream lines(v);
        for (std::string line; std::getline(lines, line);) buffers.insert(line);
      } else if (!reserved(k)) {
        EMBER_CHECK(v.size() >= 2 && v[1] == ':' && std::string("fibs").find(v[0]) != std::string::npos, source_,
                    ": corrupt archive: value '", k, "' has no type tag");
        values.emplace(k, v);
      }
    }
  }
  for (auto& [k, v] : tensors) t.emplace(k, device ? v.to(*device) : v);
  tensors_ = std::move(t);
  values_ = std::move(values);
  buffers_ = std::move(buffers);
  prefix_.clear();
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool is_buffer) {
  auto it = tensors_.find(key);
  if (it == tensors_.end()) return false;
  const Tensor& stored = it->second;
  if (tensor.defined()) {
    EMBER_CHECK(tensor.sizes() == stored.sizes(), where(key), ": shape mismatch: the archive holds ", stored.sizes(),
                ", the tensor to load into has ", tensor.sizes());
    autograd::NoGradGuard no_grad;
    ember::copy_(tensor, stored);
  } else {
    tensor = stored;
  }
  (void)is_buffer;  // parameters and buffers share one namespace of keys; the flag is kept for readers
  return true;
}

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  EMBER_CHECK(try_read(key, tensor, is_buffer), where(key), ": no such tensor in the archive");
}

bool InputArchive::try_read(const std::string& key, InputArchive& nested) {
  std::string prefix = key + ".";
  TensorDict t = with_prefix(tensors_, prefix);
  StringDict v = with_prefix(values_, prefix);
  if (t.empty() && v.empty()) return false;
  std::set<std::string> b;
  for (auto& k : buffers_)
    if (k.compare(0, prefix.size(), prefix) == 0) b.insert(k.substr(prefix.size()));
  nested.tensors_ = std::move(t);
  nested.values_ = std::move(v);
  nested.buffers_ = std::move(b);
  nested.source_ = source_;
  nested.prefix_ = prefix_ + prefix;
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& nested) {
  EMBER_CHECK(try_read(key, nested), where(key), ": no such nested archive");
}

const std::string& InputArchive::scalar(const std::string& key, char tag) const {
  auto it = values_.find(key);
  EMBER_CHECK(it != values_.end(), where(key), ": no such value in the archive");
  EMBER_CHECK(it->second[0] == tag || (tag == 'f' && it->second[0] == 'i'), where(key),
              ": holds a value of another type (tag '", it->second[0], "', expected '", tag, "')");
  return it->second;
}

void InputArchive::read(const std::string& key, double& value) {
  const std::string& s = scalar(key, 'f');
  char* end = nullptr;
  double v = std::strtod(s.c_str() + 2, &end);
  EMBER_CHECK(s.size() > 2 && *end == '\0', where(key), ": corrupt number '", s.substr(2), "'");
  value = v;
}

void InputArchive::read(const std::string& key, int64_t& value) {
  const std::string& s = scalar(key, 'i');
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str() + 2, &end, 10);
  EMBER_CHECK(s.size() > 2 && *end == '\0' && errno == 0, where(key), ": corrupt integer '", s.substr(2), "'");
  value = v;
}

void InputArchive::read(const std::string& key, bool& value) {
  const std::string& s = scalar(key, 'b');
  EMBER_CHECK(s == "b:true" || s == "b:false", where(key), ": corrupt bool '", s.substr(2), "'");
  value = s == "b:true";
}

void InputArchive::read(const std::string& key, std::string& value) { value = scalar(key, 's').substr(2); }

bool InputArchive::contains(const std::string& key) const {
  if (tensors_.count(key) || values_.count(key)) return true;
  std::string prefix = key + ".";
  auto t = tensors_.lower_bound(prefix);
  auto v = values_.lower_bound(prefix);
  return (t != tensors_.end() && t->first.compare(0, prefix.size(), prefix) == 0) ||
         (v != values_.end() && v->first.compare(0, prefix.size(), prefix) == 0);
}

std::vector<std::string> InputArchive::keys() const {
  std::set<std::string> out;
  for (auto& kv : tensors_) out.insert(first_component(kv.first));
  for (auto& kv : values_) out.insert(first_component(kv.first));
  return {out.begin(), out.end()};
}

// ---------------------------------------------------------------- tensors and tensor lists

OutputArchive& operator<<(OutputArchive& archive, const Tensor& tensor) {
  archive.write("tensor", tensor);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, Tensor& tensor) {
  Tensor loaded;  // torch::load replaces the tensor rather than copying into it
  archive.read("tensor", loaded);
  tensor = loaded;
  return archive;
}

OutputArchive& operator<<(OutputArchive& archive, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); i++) archive.write(std::to_string(i), tensors[i]);
  return archive;
}

InputArchive& operator>>(InputArchive& archive, std::vector<Tensor>& tensors) {
  std::vector<Tensor> out(archive.tensors().size());
  for (size_t i = 0; i < out.size(); i++) archive.read(std::to_string(i), out[i]);
  tensors = std::move(out);
  return archive;
}

}  // namespace ember::serialize
