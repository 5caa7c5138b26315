// ember::save / ember::load (safetensors) and load_parameters: round trips of every dtype, the exact
// header bytes Python writes, in-place parameter loading with its checks, and corrupt-file rejection.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <unordered_map>

#include "temp_dir.h"
#include "ember/core/operators.h"
#include "ember/generated/ops.h"
#include "ember/serialize/safetensors.h"

using namespace ember;
namespace fs = std::filesystem;

namespace {

struct TempDir : test_util::TempDir {
  TempDir() : test_util::TempDir("ember_serialize_") {}
};

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() &&
         ember::eq(a.to(kDouble), b.to(kDouble)).all().item<bool>();
}

TensorDict every_dtype() {
  TensorDict d;
  Tensor base = ember::arange(12).reshape({3, 4});
  for (ScalarType t : {kDouble, kFloat, kHalf, kBFloat16, kLong, kInt, kShort, kChar, kByte})
    d[dtype_name(t)] = base.to(t);
  d["bool"] = ember::remainder(base, Scalar(2)).eq(Scalar(0));
  d["transposed"] = ember::randn({3, 5}).transpose(0, 1);
  d["empty"] = ember::zeros({0, 3});
  d["scalar"] = ember::full({}, Scalar(2.5));
  return d;
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(data.data(), std::streamsize(data.size()));
}

}  // namespace

TEST(Serialize, RoundTripEveryDtype) {
  TempDir dir;
  TensorDict d = every_dtype();
  save(d, dir.file("m.safetensors"), {{"format", "pt"}});
  StringDict meta;
  TensorDict back = load_file(dir.file("m.safetensors"), &meta);
  ASSERT_EQ(back.size(), d.size());
  for (auto& [k, t] : d) EXPECT_TRUE(same(back.at(k), t)) << k;
  EXPECT_EQ(meta.at("format"), "pt");
  TensorDict viaload;
  load(viaload, dir.file("m.safetensors"));
  EXPECT_TRUE(same(viaload.at("float32"), d.at("float32")));
  // the in-memory form is the same bytes as the file
  EXPECT_EQ(serialize::to_safetensors(d, {{"format", "pt"}}), read_bytes(dir.file("m.safetensors")));
  TensorDict mem = serialize::from_safetensors(read_bytes(dir.file("m.safetensors")).data(),
                                               fs::file_size(dir.file("m.safetensors")));
  EXPECT_TRUE(same(mem.at("bfloat16"), d.at("bfloat16")));
}

TEST(Serialize, SingleTensorAndHeaderBytes) {
  TempDir dir;
  Tensor x = ember::arange(6, std::nullopt, 1, TensorOptions(kFloat)).reshape({2, 3});
  save(x, dir.file("x.safetensors"));
  Tensor y;
  load(y, dir.file("x.safetensors"));
  EXPECT_TRUE(same(x, y));
  // byte for byte what ember.safetensors.save writes in Python (compact JSON, sorted names, space padding)
  TensorDict two_tensors = {{"b\"q", ember::ones({2})}, {"a", ember::zeros({1}, TensorOptions(kBool))}};
  std::string b = serialize::to_safetensors(two_tensors, {{"k", "v"}});
  std::string json = R"({"a":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]},)"
                     R"("b\"q":{"dtype":"F32","shape":[2],"data_offsets":[1,9]},"__metadata__":{"k":"v"}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  ASSERT_GE(b.size(), 8 + json.size());
  EXPECT_EQ(uint64_t(uint8_t(b[0])) | uint64_t(uint8_t(b[1])) << 8, json.size());
  EXPECT_EQ(b.substr(8, json.size()), json);
  EXPECT_EQ(b.size(), 8 + json.size() + 9);
  TensorDict two;
  save(two = {{"a", x}, {"b", x}}, dir.file("two.safetensors"));
  EXPECT_THROW(load(y, dir.file("two.safetensors")), Error);  // more than one tensor
}

TEST(Serialize, LoadParametersInPlace) {
  TempDir dir;
  std::map<std::string, Tensor> params = {{"weight", ember::zeros({3, 2})}, {"bias", ember::zeros({3})}};
  for (auto& kv : params) kv.second.requires_grad_(true);
  const void* wptr = params["weight"].data_ptr();
  Tensor w = ember::randn({3, 2}), b = ember::randn({3});
  save(TensorDict{{"weight", w}, {"bias", b}}, dir.file("p.safetensors"));
  serialize::LoadResult r = load_parameters(dir.file("p.safetensors"), params);
  EXPECT_TRUE(r.missing_keys.empty() && r.unexpected_keys.empty());
  EXPECT_EQ(params["weight"].data_ptr(), wptr);  // in place
  EXPECT_TRUE(same(params["weight"].detach(), w) && same(params["bias"].detach(), b));
  EXPECT_TRUE(params["weight"].is_leaf() && params["weight"].requires_grad() && !params["weight"].grad_fn());

  // an unordered_map and a vector of pairs work too; non-contiguous targets are written through
  Tensor t = ember::zeros({2, 3});
  std::unordered_map<std::string, Tensor> um = {{"weight", t.transpose(0, 1)}, {"bias", ember::zeros({3})}};
  load_parameters(dir.file("p.safetensors"), um);
  EXPECT_TRUE(same(t.transpose(0, 1), w));
  std::vector<std::pair<std::string, Tensor>> vec = {{"bias", ember::zeros({3})}};
  EXPECT_THROW(load_parameters(dir.file("p.safetensors"), vec), Error);  // strict: "weight" unexpected
  r = load_parameters(dir.file("p.safetensors"), vec, /*strict=*/false);
  EXPECT_EQ(r.unexpected_keys, std::vector<std::string>{"weight"});
  EXPECT_TRUE(same(vec[0].second, b));
  std::map<std::string, Tensor> extra = {{"weight", ember::zeros({3, 2})}, {"bias", ember::zeros({3})},
                                         {"scale", ember::zeros({1})}};
  try {
    load_parameters(dir.file("p.safetensors"), extra);
    FAIL() << "expected a missing-key error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Missing key(s): \"scale\""), std::string::npos) << e.what();
  }
  r = load_parameters(dir.file("p.safetensors"), extra, false);
  EXPECT_EQ(r.missing_keys, std::vector<std::string>{"scale"});

  // shape and dtype mismatches are errors, raised before anything is written
  std::map<std::string, Tensor> bad_shape = {{"weight", ember::zeros({2, 3})}, {"bias", ember::zeros({3})}};
  EXPECT_THROW(load_parameters(dir.file("p.safetensors"), bad_shape), Error);
  EXPECT_EQ(bad_shape["bias"].abs().sum().item<double>(), 0.0);
  std::map<std::string, Tensor> bad_dtype = {{"bias", ember::zeros({3})},
                                             {"weight", ember::zeros({3, 2}, TensorOptions(kDouble))}};
  EXPECT_THROW(load_parameters(dir.file("p.safetensors"), bad_dtype), Error);
  EXPECT_EQ(bad_dtype["bias"].abs().sum().item<double>(), 0.0);
}

TEST(Serialize, AtomicSave) {
  TempDir dir;
  std::string path = dir.file("a.safetensors");
  save(ember::ones({4}), path);
  EXPECT_THROW(save(TensorDict{{"x", Tensor()}}, path), Error);  // fails before touching the file
  EXPECT_THROW(save(ember::ones({2}), dir.file("missing/dir/x.safetensors")), Error);
  Tensor back;
  load(back, path);
  EXPECT_TRUE(same(back, ember::ones({4})));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);  // no temporaries left
  EXPECT_THROW(load_file(dir.file("nope.safetensors")), Error);
}

TEST(Serialize, MalformedHeadersRejected) {
  auto file = [](const std::string& json, size_t data_len) {
    std::string out(8, '\0');
    for (int k = 0; k < 8; k++) out[k] = char((uint64_t(json.size()) >> (8 * k)) & 0xFF);
    return out + json + std::string(data_len, '\x01');
  };
  auto parses = [](const std::string& b) {
    try {
      serialize::from_safetensors(b.data(), b.size());
      return true;
    } catch (const Error&) {
      return false;
    }
  };
  EXPECT_TRUE(parses(file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8)));
  EXPECT_TRUE(parses(file(R"({"__metadata__":{"k":"v"}})", 0)));
  const char* bad[] = {
      R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})",                 // size mismatch
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})",                // past the end
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})",                 // reversed
      R"({"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}})",                 // unknown dtype
      R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})",                // negative dim
      R"({"a":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})",               // float dim
      R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",  // overflowing size
      R"({"a":{"dtype":"U8","shape":[99999999999999999999],"data_offsets":[0,8]}})",
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",                 // hole at the start
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      R"({"a":{"dtype":"F32","shape":[2]}})",
      R"({"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      R"([1,2])", R"({"a":)", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)", R"({"a\q":1})",
  };
  for (const char* j : bad) EXPECT_FALSE(parses(file(j, 8))) << j;
  EXPECT_FALSE(parses(file(std::string(200, '[') + std::string(200, ']'), 0)));  // nesting limit
  std::string huge(8, '\xff');
  EXPECT_FALSE(parses(huge + "{}"));  // absurd header length
  EXPECT_FALSE(parses(""));
}

TEST(Serialize, TruncatedAndFuzzedFiles) {
  TempDir dir;
  std::string good = serialize::to_safetensors(
      {{"w", ember::randn({4, 3})}, {"b", ember::arange(5)}, {"h", ember::ones({2}, TensorOptions(kHalf))}},
      {{"note", "\xc3\xa9t\xc3\xa9"}});
  for (size_t n = 0; n < good.size(); n++) {  // every truncation fails cleanly, from bytes and from a file
    EXPECT_THROW(serialize::from_safetensors(good.data(), n), Error) << n;
    if (n % 16 == 0) {
      write_bytes(dir.file("t.safetensors"), good.substr(0, n));
      EXPECT_THROW(load_file(dir.file("t.safetensors")), Error) << n;
    }
  }
  std::mt19937 rng(7);
  int loaded = 0;
  for (int it = 0; it < 5000; it++) {
    std::string b = good;
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; e++) {
      size_t i = rng() % (rng() % 2 ? b.size() : std::min<size_t>(b.size(), 200));  // mostly the header
      switch (rng() % 3) {
        case 0: b[i] = char(uint8_t(b[i]) ^ (1u << (rng() % 8))); break;
        case 1: b[i] = "0123456789[]{}\",:-e \xff"[rng() % 21]; break;
        default: b.resize(i); break;
      }
      if (b.empty()) break;
    }
    try {
      TensorDict d = serialize::from_safetensors(b.data(), b.size());
      loaded++;
    } catch (const Error&) {
    }
  }
  EXPECT_LT(loaded, 5000);
}

TEST(Serialize, UnsupportedInputs) {
  EXPECT_THROW(serialize::to_safetensors({{"__metadata__", ember::ones({1})}}), Error);
  // autograd: saving a tensor that requires grad records nothing and keeps its values
  Tensor x = ember::randn({3});
  x.requires_grad_(true);
  std::string b = serialize::to_safetensors({{"x", x * 2}});
  EXPECT_TRUE(same(serialize::from_safetensors(b.data(), b.size()).at("x"), (x * 2).detach()));
}
