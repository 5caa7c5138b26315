// A strict JSON reader (see json.h).
#include "ember/serialize/json.h"

#include <cstdlib>
#include <cstring>

#include "ember/core/error.h"

namespace ember::json {
namespace {

class JsonReader {
 public:
  JsonReader(const char* p, size_t n, const std::string& what) : p_(p), end_(p + n), what_(what) {}

  Json document() {
    Json v = value(0);
    ws();
    if (p_ != end_) fail("trailing characters after the JSON header");
    return v;
  }

 private:
  [[noreturn]] void fail(const char* msg) { EMBER_FAIL(Runtime, what_, ": ", msg); }
  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\n' || *p_ == '\r')) ++p_;
  }
  bool eat(char c) {
    ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail("malformed JSON");
  }
  bool literal(const char* word) {
    size_t n = std::strlen(word);
    if (size_t(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) fail("JSON nested too deeply");
    ws();
    if (p_ >= end_) fail("unexpected end of JSON");
    Json v;
    char c = *p_;
    if (c == '{') {
      ++p_;
      v.kind = Json::Obj;
      if (eat('}')) return v;
      do {
        ws();
        if (p_ >= end_ || *p_ != '"') fail("expected a string key");
        std::string key = string();
        expect(':');
        v.obj.emplace_back(std::move(key), value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++p_;
      v.kind = Json::Arr;
      if (eat(']')) return v;
      do v.arr.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = Json::Str;
      v.s = string();
    } else if (literal("true")) {
      v.kind = Json::Bool;
      v.b = true;
    } else if (literal("false")) {
      v.kind = Json::Bool;
    } else if (literal("null")) {
      v.kind = Json::Null;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else {
      fail("unexpected character");
    }
    return v;
  }

  void number(Json& v) {
    const char* start = p_;
    bool neg = *p_ == '-';
    if (neg) ++p_;
    if (p_ >= end_ || *p_ < '0' || *p_ > '9') fail("malformed number");
    uint64_t mag = 0;
    bool overflow = false;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      uint64_t d = uint64_t(*p_++ - '0');
      if (mag > (UINT64_MAX - d) / 10) overflow = true;
      mag = mag * 10 + d;
    }
    v.kind = Json::Int;
    if (p_ < end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) {  // a float
      v.kind = Json::Float;
      const char* begin = start;
      while (p_ < end_ && (std::strchr("0123456789.eE+-", *p_) != nullptr)) ++p_;
      v.f = std::strtod(std::string(begin, p_).c_str(), nullptr);
      return;
    }
    if (overflow || mag > uint64_t(INT64_MAX)) fail("integer out of range");
    v.i = neg ? -int64_t(mag) : int64_t(mag);
  }

  void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  uint32_t hex4() {
    if (end_ - p_ < 4) fail("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
      char h = *p_++;
      v <<= 4;
      if (h >= '0' && h <= '9') v |= uint32_t(h - '0');
      else if (h >= 'a' && h <= 'f') v |= uint32_t(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= uint32_t(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return v;
  }
  std::string string() {
    ++p_;  // opening quote
    std::string out;
    while (true) {
      if (p_ >= end_) fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(*p_++);
      if (c == '"') return out;
      if (c < 0x20) fail("control character in string");
      if (c != '\\') {
        out += char(c);
        continue;
      }
      if (p_ >= end_) fail("unterminated string");
      char e = *p_++;
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && end_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
            p_ += 2;
            uint32_t lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          utf8(out, cp);
          break;
        }
        default: fail("bad escape");
      }
    }
  }

  const char* p_;
  const char* end_;
  const std::string& what_;
};

}  // namespace

Json parse(const char* text, size_t n, const std::string& what) { return JsonReader(text, n, what).document(); }

void write_string(std::ostringstream& os, const std::string& s) {
  os << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      os << '\\' << char(c);
    } else if (c < 0x20) {
      const char* hex = "0123456789abcdef";
      os << "\\u00" << hex[c >> 4] << hex[c & 15];
    } else {
      os << char(c);
    }
  }
  os << '"';
}

}  // namespace ember::json
