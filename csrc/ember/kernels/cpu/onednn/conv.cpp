#include "ember/kernels/cpu/onednn/conv.h"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/generated/ops.h"
#include "ember/iter/layout.h"

#ifdef EMBER_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ember/kernels/cpu/onednn/engine.h"
#endif

namespace ember::onednn {

#ifndef EMBER_HAVE_ONEDNN

bool usable(const Tensor&, const Tensor&, const ConvParams&) { return false; }
Tensor conv_forward(const Tensor&, const Tensor&, const Tensor&, const ConvParams&, IntArrayRef) {
  EMBER_FAIL(Runtime, "Ember was built without oneDNN");
}
std::tuple<Tensor, Tensor, Tensor> conv_backward(const Tensor&, const Tensor&, const Tensor&, bool,
                                                 const ConvParams&, std::array<bool, 3>) {
  EMBER_FAIL(Runtime, "Ember was built without oneDNN");
}

#else

namespace {

using dnnl::memory;
using Dims = memory::dims;

Dims contiguous_strides(const Dims& sizes) {
  Dims st(sizes.size());
  int64_t acc = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = acc;
    acc *= sizes[i];
  }
  return st;
}

// [N, C, *S] laid out channels-last: C fastest, then the spatial dims last to first, then N
Dims channels_last_strides(const Dims& sizes) {
  Dims st(sizes.size());
  int64_t acc = sizes[1];
  st[1] = 1;
  for (size_t i = sizes.size(); i-- > 2;) {
    st[i] = acc;
    acc *= sizes[i];
  }
  st[0] = acc;
  return st;
}

// 4-d or 5-d tensors laid out channels-last go to oneDNN as they are (its reorder reads those strides)
// instead of through a transposing copy each way
bool channels_last(const Tensor& t) {
  if (t.dim() != 4 && t.dim() != 5) return false;
  MemoryFormat f = t.dim() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d;
  return suggest_memory_format(t) == f && is_contiguous_in(t, f);
}

// The plain convolution C from the big space (src) to the small one (dst). When the last window
// stops short of the big space's end (right padding would be negative), src is a cropped view of
// the contiguous big tensor: same strides, smaller dims.
struct Problem {
  Dims src, src_full, wei, dst, strides, dil, pl, pr;
  bool bias = false;
  bool src_cl = false, dst_cl = false;  // the user's src / dst tensors laid out channels-last (else row-major)
  // every tensor's type: float32, or bfloat16 (autocast's convolutions; float32 accumulation inside)
  memory::data_type dt = memory::data_type::f32;

  memory::desc src_user() const {
    return memory::desc(src, dt, src_cl ? channels_last_strides(src_full) : contiguous_strides(src_full));
  }
  memory::desc dst_user() const { return memory::desc(dst, dt, dst_cl ? channels_last_strides(dst) : contiguous_strides(dst)); }
  memory::desc wei_user() const { return memory::desc(wei, dt, contiguous_strides(wei)); }
  memory::desc bias_user() const { return memory::desc({dst[1]}, dt, memory::format_tag::a); }
  memory::desc any(const Dims& d) const { return memory::desc(d, dt, memory::format_tag::any); }
  bool cropped() const { return src != src_full; }
  ScalarType dtype() const { return dt == memory::data_type::bf16 ? kBFloat16 : kFloat; }

  std::vector<int64_t> key(int64_t kind) const {
    std::vector<int64_t> k = {kind, bias, int64_t(dt), int64_t(src.size()), src_cl, dst_cl};
    for (const Dims* v : {&src, &src_full, &wei, &dst, &strides, &dil, &pl, &pr}) k.insert(k.end(), v->begin(), v->end());
    return k;
  }
};

// big: [N, Cb, *B], small: [N, Cs, *S]; weight as the grouped C-weight [G, Cs/G, Cb/G, *K] (or
// [Cs, Cb, *K] when G == 1).
Problem make_problem(IntArrayRef big, IntArrayRef small, IntArrayRef kernel, const ConvParams& g, ScalarType dtype) {
  Problem P;
  P.dt = dtype == kBFloat16 ? memory::data_type::bf16 : memory::data_type::f32;
  P.src_full.assign(big.begin(), big.end());
  P.src = P.src_full;
  P.dst.assign(small.begin(), small.end());
  int64_t cs = small[1], cb = big[1];
  if (g.groups > 1) P.wei = {g.groups, cs / g.groups, cb / g.groups};
  else P.wei = {cs, cb};
  for (int64_t i = 0; i < g.ns; i++) {
    P.wei.push_back(kernel[i]);
    int64_t ext = (kernel[i] - 1) * g.d[i] + 1;
    int64_t pr = (small[2 + i] - 1) * g.s[i] + ext - big[2 + i] - g.p[i];
    if (pr < 0) {
      P.src[2 + i] += pr;
      pr = 0;
    }
    P.strides.push_back(g.s[i]);
    P.dil.push_back(g.d[i] - 1);
    P.pl.push_back(g.p[i]);
    P.pr.push_back(pr);
  }
  return P;
}

struct Fwd {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
};
struct BwdData {
  dnnl::convolution_backward_data::primitive_desc pd;
  dnnl::convolution_backward_data prim;
};
struct BwdWeights {
  dnnl::convolution_backward_weights::primitive_desc pd;
  dnnl::convolution_backward_weights prim;
};

// Primitive descriptors are costly to build (tens of us); training runs the same few shapes over
// and over, so keep them, bounded.
template <class E, class Make>
std::shared_ptr<E> cached(const std::vector<int64_t>& key, Make make) {
  static std::mutex mu;
  static std::map<std::vector<int64_t>, std::shared_ptr<E>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto e = std::make_shared<E>(make());
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(key, e);
  return e;
}

// the forward runs on channels-last src and dst as they are when both are (`user_layouts`); the backward
// primitives (and their forward hints) pick their own layouts: oneDNN's channels-last backward was
// measured over 100x slower than reordering into its blocked layouts
dnnl::convolution_forward::primitive_desc fwd_pd(const Problem& P, bool user_layouts) {
  auto bias_md = P.bias ? P.any({P.dst[1]}) : memory::desc();
  const bool cl = user_layouts && P.src_cl && P.dst_cl && !P.cropped();
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                    cl ? P.src_user() : P.any(P.src), P.any(P.wei), bias_md,
                                    cl ? P.dst_user() : P.any(P.dst), P.strides, P.dil, P.pl, P.pr);
  return dnnl::convolution_forward::primitive_desc(d, engine());
}

std::shared_ptr<Fwd> get_fwd(const Problem& P) {
  return cached<Fwd>(P.key(0), [&] {
    auto pd = fwd_pd(P, true);
    return Fwd{pd, dnnl::convolution_forward(pd)};
  });
}

std::shared_ptr<BwdData> get_bwd_data(const Problem& P) {
  return cached<BwdData>(P.key(1), [&] {
    Problem nb = P;
    nb.bias = false;
    dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, P.any(P.src), P.any(P.wei),
                                            P.any(P.dst), P.strides, P.dil, P.pl, P.pr);
    dnnl::convolution_backward_data::primitive_desc pd(d, engine(), fwd_pd(nb, false));
    return BwdData{pd, dnnl::convolution_backward_data(pd)};
  });
}

std::shared_ptr<BwdWeights> get_bwd_weights(const Problem& P) {
  return cached<BwdWeights>(P.key(2), [&] {
    auto bias_md = P.bias ? P.any({P.dst[1]}) : memory::desc();
    dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, P.any(P.src), P.any(P.wei),
                                               bias_md, P.any(P.dst), P.strides, P.dil, P.pl, P.pr);
    dnnl::convolution_backward_weights::primitive_desc pd(d, engine(), fwd_pd(P, false));
    return BwdWeights{pd, dnnl::convolution_backward_weights(pd)};
  });
}

// Runs primitives on one stream, moving data between the user's plain layout and the layouts the
// primitive picked; scratch buffers come from Ember's allocator (so memory stats see them).
struct Runner {
  dnnl::stream stream{engine()};
  std::vector<Tensor> keep;

  memory wrap(const memory::desc& md, const Tensor& t) { return memory(md, engine(), t.data_ptr()); }

  memory scratch(const memory::desc& md) {
    keep.push_back(empty_tensor({int64_t(md.get_size())}, kByte));
    return memory(md, engine(), keep.back().data_ptr());
  }

  // user -> the primitive's layout (no copy when they agree)
  memory in(const memory& user, const memory::desc& want) {
    if (user.get_desc() == want) return user;
    memory m = scratch(want);
    dnnl::reorder(user, m).execute(stream, const_cast<memory&>(user), m);
    return m;
  }
  // an output buffer in the primitive's layout; `finish` copies it back to the user's memory
  memory out(const memory& user, const memory::desc& want) { return user.get_desc() == want ? user : scratch(want); }
  void finish(memory& produced, const memory& user) {
    if (produced.get_desc() == user.get_desc()) return;
    dnnl::reorder(produced, user).execute(stream, produced, const_cast<memory&>(user));
  }
};

DimVector to_dimvector(const Dims& d) { return DimVector(IntArrayRef(d.data(), d.size())); }

// C(src) -> dst, with optional bias
void run_forward(const Problem& P, const Tensor& src, const Tensor& wei, const Tensor& bias, const Tensor& dst) {
  auto f = get_fwd(P);
  Runner r;
  memory src_u = r.wrap(P.src_user(), src), wei_u = r.wrap(P.wei_user(), wei), dst_u = r.wrap(P.dst_user(), dst);
  memory s = r.in(src_u, f->pd.src_desc()), w = r.in(wei_u, f->pd.weights_desc()), o = r.out(dst_u, f->pd.dst_desc());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, o}};
  if (P.bias) args[DNNL_ARG_BIAS] = r.wrap(P.bias_user(), bias);
  f->prim.execute(r.stream, args);
  r.finish(o, dst_u);
  r.stream.wait();
}

// C^T(diff_dst) -> diff_src (src must be zero-filled beforehand when cropped)
void run_backward_data(const Problem& P, const Tensor& diff_dst, const Tensor& wei, const Tensor& diff_src) {
  auto b = get_bwd_data(P);
  Runner r;
  memory dd_u = r.wrap(P.dst_user(), diff_dst), wei_u = r.wrap(P.wei_user(), wei), ds_u = r.wrap(P.src_user(), diff_src);
  memory dd = r.in(dd_u, b->pd.diff_dst_desc()), w = r.in(wei_u, b->pd.weights_desc());
  memory ds = r.out(ds_u, b->pd.diff_src_desc());
  b->prim.execute(r.stream, {{DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, ds}});
  r.finish(ds, ds_u);
  r.stream.wait();
}

// dL/dW of C from its src and diff_dst (and dL/dbias when P.bias)
void run_backward_weights(const Problem& P, const Tensor& src, const Tensor& diff_dst, const Tensor& diff_wei,
                          const Tensor& diff_bias) {
  auto b = get_bwd_weights(P);
  Runner r;
  memory src_u = r.wrap(P.src_user(), src), dd_u = r.wrap(P.dst_user(), diff_dst);
  memory dw_u = r.wrap(P.wei_user(), diff_wei);
  memory s = r.in(src_u, b->pd.src_desc()), dd = r.in(dd_u, b->pd.diff_dst_desc());
  memory dw = r.out(dw_u, b->pd.diff_weights_desc());
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, s}, {DNNL_ARG_DIFF_DST, dd}, {DNNL_ARG_DIFF_WEIGHTS, dw}};
  memory db_u, db;
  if (P.bias) {
    db_u = r.wrap(P.bias_user(), diff_bias);
    db = r.out(db_u, b->pd.diff_bias_desc());
    args[DNNL_ARG_DIFF_BIAS] = db;
  }
  b->prim.execute(r.stream, args);
  r.finish(dw, dw_u);
  if (P.bias) r.finish(db, db_u);
  r.stream.wait();
}

// a tensor for the user's layout of dims d (channels-last or row-major)
Tensor new_user(const Dims& d, ScalarType dt, bool cl) {
  DimVector shape = to_dimvector(d);
  if (!cl) return empty_tensor(shape, dt);
  return empty_in_format(shape, dt, Device(), d.size() == 4 ? MemoryFormat::ChannelsLast : MemoryFormat::ChannelsLast3d);
}

Tensor new_big(const Problem& P) {
  Tensor t = new_user(P.src_full, P.dtype(), P.src_cl);
  return P.cropped() ? t.zero_() : t;
}

// Whether this CPU's oneDNN runs bfloat16 convolutions (it needs AVX-512): asked once, on a tiny
// problem, in each direction.
bool bf16_supported() {
  static const bool ok = [] {
    try {
      ConvParams g{2, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1, false};
      DimVector x = {1, 1, 2, 2}, k = {1, 1};
      Problem P = make_problem(x, x, k, g, kBFloat16);
      P.bias = true;
      get_fwd(P);
      get_bwd_data(P);
      get_bwd_weights(P);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return ok;
}

}  // namespace

bool usable(const Tensor& input, const Tensor& weight, const ConvParams& g) {
  if (disabled() || input.dtype() != weight.dtype()) return false;
  if (input.dtype() != kFloat && !(input.dtype() == kBFloat16 && bf16_supported())) return false;
  if (input.numel() == 0 || weight.numel() == 0) return false;
  return g.ns >= 1 && g.ns <= 3;
}

Tensor conv_forward(const Tensor& input_in, const Tensor& weight_in, const Tensor& bias_in, const ConvParams& g,
                    IntArrayRef out_spatial) {
  const bool cl = !g.transposed && channels_last(input_in);
  Tensor input = cl ? input_in : input_in.contiguous(), weight = weight_in.contiguous();
  Tensor bias = bias_in.defined() ? bias_in.contiguous() : Tensor();
  int64_t n = input.sizes()[0];
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(g.ns)));
  DimVector out_shape = {n, g.transposed ? weight.sizes()[1] * g.groups : weight.sizes()[0]};
  for (int64_t v : out_spatial) out_shape.push_back(v);
  if (!g.transposed) {
    Problem P = make_problem(input.sizes(), out_shape, ksz, g, input.dtype());
    P.bias = bias.defined();
    P.src_cl = P.dst_cl = cl;  // a channels-last input gets a channels-last output, as PyTorch's
    Tensor out = new_user(P.dst, input.dtype(), cl);
    run_forward(P, input, weight, bias, out);
    return out;
  }
  Problem P = make_problem(out_shape, input.sizes(), ksz, g, input.dtype());
  Tensor out = new_big(P);
  run_backward_data(P, input, weight, out);
  if (bias.defined()) {
    DimVector bshape(out_shape.size(), 1);
    bshape[1] = bias.numel();
    out.add_(bias.reshape(bshape));
  }
  return out;
}

std::tuple<Tensor, Tensor, Tensor> conv_backward(const Tensor& grad_in, const Tensor& input_in, const Tensor& weight_in,
                                                 bool has_bias, const ConvParams& g, std::array<bool, 3> mask) {
  const bool input_cl = !g.transposed && channels_last(input_in), grad_cl = !g.transposed && channels_last(grad_in);
  Tensor grad = grad_cl ? grad_in : grad_in.contiguous(), input = input_cl ? input_in : input_in.contiguous();
  Tensor weight = weight_in.contiguous();
  DimVector ksz(IntArrayRef(weight.sizes().data() + 2, size_t(g.ns)));
  Tensor gi, gw, gb;
  bool want_bias = mask[2] && has_bias;
  if (!g.transposed) {
    Problem P = make_problem(input.sizes(), grad.sizes(), ksz, g, input.dtype());
    P.src_cl = input_cl;  // grad_input in the input's layout
    P.dst_cl = grad_cl;
    if (mask[0]) {
      gi = new_big(P);
      run_backward_data(P, grad, weight, gi);
    }
    if (mask[1] || want_bias) {
      P.bias = want_bias;
      gw = empty_tensor(weight.sizes(), P.dtype());
      if (want_bias) gb = empty_tensor({grad.sizes()[1]}, P.dtype());
      run_backward_weights(P, input, grad, gw, gb);
      if (!mask[1]) gw = Tensor();
    }
    return {gi, gw, gb};
  }
  // transposed: grad lives in C's big space, input in its small one
  Problem P = make_problem(grad.sizes(), input.sizes(), ksz, g, input.dtype());
  if (mask[0]) {
    gi = empty_tensor(input.sizes(), P.dtype());
    run_forward(P, grad, weight, Tensor(), gi);
  }
  if (mask[1]) {
    gw = empty_tensor(weight.sizes(), P.dtype());
    run_backward_weights(P, grad, input, gw, Tensor());
  }
  if (want_bias) {
    std::vector<int64_t> red = {0};
    for (int64_t i = 2; i < grad.dim(); i++) red.push_back(i);
    gb = ember::sum(grad, IntArrayRef(red), false);
  }
  return {gi, gw, gb};
}

#endif

}  // namespace ember::onednn
