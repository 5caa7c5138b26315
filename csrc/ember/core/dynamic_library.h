#pragma once
// Loading a shared library at first use (dlopen), for the large optional ones the CUDA backend calls
// (cuBLAS ~600 MB, NCCL ~300 MB): linking them would map them into every process that imports Ember.
#include <string>
#include <vector>

#include "ember/core/macros.h"

// "13" from a version macro defined as 13: sonames built from a library header's major version
#define EMBER_STRINGIFY_(x) #x
#define EMBER_STRINGIFY(x) EMBER_STRINGIFY_(x)

namespace ember {

// Where to look for `soname`, first to last: `dir` (the wheel CMake found beside the headers; skipped
// when empty), then the loader's own search (LD_LIBRARY_PATH, its cache, or a copy already loaded,
// such as torch's).
EMBER_API std::vector<std::string> library_candidates(const std::string& soname, const std::string& dir);

class EMBER_API DynamicLibrary {
 public:
  // The first of `candidates` (paths or sonames) that loads; error() says why none did.
  explicit DynamicLibrary(const std::vector<std::string>& candidates);
  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  // fn = the symbol `name`; a missing one is recorded in error() (the first such), fn left null.
  template <class Fn>
  void resolve(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(symbol(name));
  }

 private:
  void* symbol(const char* name);
  void* handle_ = nullptr;  // never closed: the library stays for the process
  std::string error_;
};

}  // namespace ember
