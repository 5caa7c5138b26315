#pragma once
// The JSON subset Ember's file formats need (safetensors headers, jit graphs): a strict reader
// with a nesting limit that names the file in its errors, and string escaping for writers.
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/macros.h"

namespace ember::json {

constexpr int kMaxDepth = 64;

struct Json {
  enum Kind { Null, Bool, Int, Float, Str, Arr, Obj } kind = Null;
  int64_t i = 0;
  double f = 0;  // Float (also set for Int)
  bool b = false;
  std::string s;
  std::vector<Json> arr;
  std::vector<std::pair<std::string, Json>> obj;
  // obj's entry for key, or nullptr
  const Json* find(const std::string& key) const {
    for (const auto& kv : obj)
      if (kv.first == key) return &kv.second;
    return nullptr;
  }
};

// Parses a whole document; errors are RuntimeErrors starting with `what`.
EMBER_API Json parse(const char* text, size_t n, const std::string& what);
// Writes s as a JSON string literal (quotes and escapes).
EMBER_API void write_string(std::ostringstream& os, const std::string& s);

}  // namespace ember::json
