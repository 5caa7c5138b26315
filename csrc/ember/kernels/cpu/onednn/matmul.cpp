#include "ember/kernels/cpu/onednn/matmul.h"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#ifdef EMBER_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ember/kernels/cpu/onednn/engine.h"
#endif

namespace ember::onednn {

#ifndef EMBER_HAVE_ONEDNN

bool matmul_bf16(const Tensor&, const Tensor&, const Tensor&) { return false; }

#else

namespace {

using dnnl::memory;

memory::desc plain(const Tensor& t) {
  return memory::desc({t.sizes()[0], t.sizes()[1]}, memory::data_type::bf16, {t.strides()[0], t.strides()[1]});
}

struct Prim {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
};

// A primitive per shape and operand layout: building one costs tens of microseconds, and a model
// multiplies the same few shapes every step. Bounded, as the convolution cache. The scratchpad is
// ours (allocated per call): bmm runs several products at once on its threads, and oneDNN's own
// scratchpad is shared by every primitive.
std::shared_ptr<Prim> primitive(const Tensor& c, const Tensor& a, const Tensor& b) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<Prim>> cache;
  std::vector<int64_t> key = {a.sizes()[0], a.sizes()[1], b.sizes()[1], a.strides()[0], a.strides()[1],
                              b.strides()[0], b.strides()[1]};
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  dnnl::matmul::desc d(plain(a), plain(b), plain(c));
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pd(d, attr, engine());
  auto prim = std::make_shared<Prim>(Prim{pd, dnnl::matmul(pd)});
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(key, prim);
  return prim;
}

}  // namespace

bool matmul_bf16(const Tensor& c, const Tensor& a, const Tensor& b) {
  if (disabled()) return false;
  for (const Tensor* t : {&a, &b})
    if (t->strides()[0] <= 0 || t->strides()[1] <= 0) return false;  // broadcast operands: the float path
  std::shared_ptr<Prim> prim;
  try {
    prim = primitive(c, a, b);
  } catch (const dnnl::error&) {
    return false;  // no bfloat16 matmul for this CPU
  }
  dnnl::stream stream{engine()};
  memory ma(plain(a), engine(), a.data_ptr()), mb(plain(b), engine(), b.data_ptr()), mc(plain(c), engine(), c.data_ptr());
  memory::desc pad_md = prim->pd.scratchpad_desc();
  Tensor pad = empty_tensor({int64_t(pad_md.get_size())}, kByte);
  memory mpad(pad_md, engine(), pad.data_ptr());
  prim->prim.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}, {DNNL_ARG_SCRATCHPAD, mpad}});
  stream.wait();
  return true;
}

#endif

}  // namespace ember::onednn
