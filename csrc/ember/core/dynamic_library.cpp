#include "ember/core/dynamic_library.h"

#include <dlfcn.h>

namespace ember {

std::vector<std::string> library_candidates(const std::string& soname, const std::string& dir) {
  std::vector<std::string> c;
  if (!dir.empty()) c.push_back(dir + "/" + soname);
  c.push_back(soname);
  return c;
}

DynamicLibrary::DynamicLibrary(const std::vector<std::string>& candidates) {
  for (const std::string& path : candidates) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) return;
    const char* e = dlerror();
    error_ += (error_.empty() ? "" : "; ") + std::string(e ? e : path.c_str());
  }
}

void* DynamicLibrary::symbol(const char* name) {
  void* p = handle_ ? dlsym(handle_, name) : nullptr;
  if (!p && handle_ && error_.empty()) error_ = std::string("the library lacks ") + name;
  return p;
}

}  // namespace ember
