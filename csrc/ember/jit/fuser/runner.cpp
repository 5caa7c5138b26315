// run_group: shapes, strides, threads and autograd around a backend's kernel.
//
// The iteration space is the broadcast of the inputs' actual shapes (recomputed every call: a
// replay may see other shapes than the trace). Dims are coalesced; the innermost one is walked by
// the kernel with each input's stride 0 or 1 (an input strided otherwise is copied contiguous),
// the outer ones by this file. When the actual shapes do not fit one loop (an output or a reduced
// operand smaller than the iteration space, a reduction dim that is no longer the last), the group
// runs op by op as eager code instead: never a wrong answer.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/core/error.h"
#include "ember/generated/ops.h"
#include "ember/jit/fuser/fuser.h"
#include "ember/jit/fuser/kernel.h"
#include "ember/parallel/parallel.h"

namespace ember::jit::fuser {

bool broadcast_into(std::vector<int64_t>& full, IntArrayRef s) {
  if (s.size() > full.size()) full.insert(full.begin(), s.size() - full.size(), 1);
  size_t off = full.size() - s.size();
  for (size_t d = 0; d < s.size(); d++) {
    int64_t& f = full[off + d];
    if (s[d] == f || s[d] == 1) continue;
    if (f != 1) return false;
    f = s[d];
  }
  return true;
}

namespace {

using Shape = std::vector<int64_t>;

std::optional<Backend> g_override;
std::atomic<uint64_t> g_fused{0}, g_eager{0};

Backend env_backend() {
  static const Backend b = [] {
    const char* e = std::getenv("EMBER_FUSER");
    std::string s = e ? e : "";
    if (s == "interp") return Backend::Interp;
    if (s == "codegen" || s.empty()) return codegen_available() ? Backend::Codegen : Backend::Interp;
    EMBER_FAIL(Value, "EMBER_FUSER must be 'codegen' or 'interp', got '", s, "'");
  }();
  return b;
}

// A program and its kernels, one per (backend, broadcast mask).
struct Compiled {
  Program prog;
  std::mutex mu;
  std::map<std::pair<int, uint64_t>, std::shared_ptr<const Kernel>> kernels;
  std::map<std::vector<int32_t>, std::shared_ptr<Compiled>> backward;  // by the inputs differentiated

  const Kernel& kernel(Backend b, uint64_t mask) {
    if (b == Backend::Codegen && !codegen_available()) b = Backend::Interp;
    std::lock_guard<std::mutex> lock(mu);
    auto& k = kernels[{int(b), mask}];
    if (!k) k = b == Backend::Codegen ? make_codegen_kernel(prog, mask) : make_interp_kernel(prog, mask);
    return *k;
  }
  std::shared_ptr<Compiled> backward_for(const std::vector<int32_t>& wrt) {
    std::lock_guard<std::mutex> lock(mu);
    auto& c = backward[wrt];
    if (!c) {
      c = std::make_shared<Compiled>();
      c->prog = differentiate(prog, wrt);
    }
    return c;
  }
};

// Lowered programs by subgraph (a node's subgraph is shared and immutable once fused).
std::shared_ptr<Compiled> compiled_for(const std::shared_ptr<Graph>& sub) {
  static std::mutex mu;
  static std::unordered_map<const Graph*, std::pair<std::weak_ptr<Graph>, std::shared_ptr<Compiled>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 4096)  // forget graphs that are gone
    for (auto it = cache.begin(); it != cache.end();) it = it->second.first.expired() ? cache.erase(it) : std::next(it);
  auto& e = cache[sub.get()];
  if (!e.second || e.first.expired() || e.first.lock() != sub) {  // a new graph at a freed address
    auto c = std::make_shared<Compiled>();
    c->prog = lower(*sub);
    e = {sub, c};
  }
  return e.second;
}

// Per-register shapes at run time; false when a fused loop would not compute what eager does.
bool shapes_fit(const Program& p, const std::vector<Tensor>& in, const Shape& full, bool outputs_may_broadcast) {
  std::vector<Shape> shape(p.code.size());
  for (size_t i = 0; i < p.code.size(); i++) {
    const Instr& ins = p.code[i];
    if (ins.op == Op::Input) shape[i] = Shape(in[ins.input].sizes().begin(), in[ins.input].sizes().end());
    for (int32_t r : {ins.a, ins.b, ins.c})
      if (r >= 0 && !broadcast_into(shape[i], shape[r])) return false;
  }
  for (const Output& o : p.outputs)
    if (shape[o.reg] != full && (o.reduced || !outputs_may_broadcast)) return false;
  if (p.reduce == Reduce::LastDim) {
    int64_t nd = int64_t(full.size());
    if (nd == 0 || !(p.reduce_dim == -1 || p.reduce_dim == nd - 1)) return false;
  }
  return true;
}

struct RunResult {
  std::vector<Tensor> outputs;
  bool fused = false;
};

// Runs `c` over inputs already in its dtype. Returns fused=false (nothing run) when shapes do not fit.
RunResult run_compiled(Compiled& c, std::vector<Tensor> in, bool outputs_may_broadcast) {
  const Program& p = c.prog;
  RunResult res;
  if (in.size() > 64 || p.outputs.size() > 64) return res;  // the kernels' pointer tables
  Shape full;
  for (const Tensor& t : in)
    if (!broadcast_into(full, t.sizes())) return res;
  if (!shapes_fit(p, in, full, outputs_may_broadcast)) return res;
  const int64_t nd = int64_t(full.size());
  const size_t ni = in.size(), no = p.outputs.size();

  // Each input's strides over the full shape (0 where it broadcasts), then coalesced: size-1 dims
  // dropped (never the reduced last dim), d merged into d+1 when every input steps evenly across
  // both. The kernel walks the innermost coalesced dim with stride 0 or 1: an input strided
  // otherwise there is copied contiguous and the layout computed again.
  Shape sizes;
  std::vector<Shape> st(ni);
  auto layout = [&] {
    sizes.clear();
    for (size_t k = 0; k < ni; k++) {
      Shape strides(nd, 0);
      const Tensor& t = in[k];
      int64_t off = nd - t.dim();
      for (int64_t d = 0; d < t.dim(); d++) strides[off + d] = t.size(d) == 1 ? 0 : t.stride(d);
      st[k].clear();
      for (int64_t d = 0; d < nd; d++)
        if (full[d] != 1 || (d == nd - 1 && p.reduce == Reduce::LastDim)) st[k].push_back(strides[d]);
    }
    for (int64_t d = 0; d < nd; d++)
      if (full[d] != 1 || (d == nd - 1 && p.reduce == Reduce::LastDim)) sizes.push_back(full[d]);
    if (sizes.empty()) {
      sizes.push_back(1);
      for (size_t k = 0; k < ni; k++) st[k].push_back(0);
    }
    for (int64_t d = int64_t(sizes.size()) - 2; d >= 0; d--) {
      if (p.reduce == Reduce::LastDim && d + 1 == int64_t(sizes.size()) - 1) continue;
      bool ok = true;
      for (size_t k = 0; k < ni; k++) ok &= st[k][d] == st[k][d + 1] * sizes[d + 1];
      if (!ok) continue;
      sizes[d] *= sizes[d + 1];
      sizes.erase(sizes.begin() + d + 1);
      for (size_t k = 0; k < ni; k++) {
        st[k][d] = st[k][d + 1];
        st[k].erase(st[k].begin() + d + 1);
      }
    }
  };
  layout();
  bool copied = false;
  for (size_t k = 0; k < ni; k++)
    if (st[k].back() != 0 && st[k].back() != 1) {
      in[k] = in[k].contiguous();
      copied = true;
    }
  if (copied) layout();
  const int64_t cols = sizes.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < sizes.size(); d++) rows *= sizes[d];
  uint64_t mask = 0;
  for (size_t k = 0; k < ni; k++)
    if (st[k].back() == 0) mask |= uint64_t(1) << k;

  // Outputs.
  const ScalarType dt = p.dtype;
  const size_t esize = dt == kDouble ? 8 : 4;
  Shape reduced_shape;
  if (p.reduce == Reduce::LastDim) reduced_shape.assign(full.begin(), full.end() - 1);
  std::vector<Tensor> out(no);
  for (size_t j = 0; j < no; j++) {
    const Output& o = p.outputs[j];
    if (!o.reduced) {
      out[j] = empty_tensor(full, dt);
    } else {
      Shape s = reduced_shape;
      if (o.keepdim) s = p.reduce == Reduce::LastDim ? (s.push_back(1), s) : Shape(nd, 1);
      out[j] = empty_tensor(s, dt);
    }
  }
  const Kernel& kern = c.kernel(backend(), mask);
  std::vector<char*> base(ni);
  for (size_t k = 0; k < ni; k++) base[k] = static_cast<char*>(in[k].data_ptr());
  std::vector<char*> obase(no);
  for (size_t j = 0; j < no; j++) obase[j] = static_cast<char*>(out[j].data_ptr());

  // Runs elements [col0, col0 + n) of row `row`; acc gets the reduced sums.
  auto segment = [&](int64_t row, int64_t col0, int64_t n, double* acc) {
    const void* ip[64];
    void* op[64];
    for (size_t k = 0; k < ni; k++) {
      int64_t off = 0, r = row;
      for (int64_t d = int64_t(sizes.size()) - 2; d >= 0; d--) {
        off += (r % sizes[d]) * st[k][d];
        r /= sizes[d];
      }
      off += col0 * st[k].back();
      ip[k] = base[k] + off * int64_t(esize);
    }
    for (size_t j = 0; j < no; j++) op[j] = obase[j] + (row * cols + col0) * int64_t(esize);
    kern.run(n, ip, op, acc);
  };
  // Reduced sums are carried in double every kPiece elements, so long rows stay accurate.
  constexpr int64_t kPiece = 4096;
  auto store_reduced = [&](size_t j, int64_t idx, double v, int64_t count) {
    if (p.outputs[j].mean) v = count ? v / double(count) : std::numeric_limits<double>::quiet_NaN();
    if (dt == kDouble) static_cast<double*>(out[j].data_ptr())[idx] = v;
    else static_cast<float*>(out[j].data_ptr())[idx] = float(v);
  };

  const int64_t total = rows * cols;
  if (p.reduce == Reduce::None) {
    parallel_for(0, total, kGrainSize, [&](int64_t b, int64_t e) {
      double acc[64];
      for (int64_t pos = b; pos < e;) {
        int64_t row = pos / cols, col = pos % cols, n = std::min(cols - col, e - pos);
        segment(row, col, n, acc);
        pos += n;
      }
    });
  } else if (p.reduce == Reduce::LastDim) {
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cols, 1)), [&](int64_t b, int64_t e) {
      std::vector<double> acc(no), part(no);
      for (int64_t row = b; row < e; row++) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t col = 0; col < cols; col += kPiece) {
          std::fill(part.begin(), part.end(), 0.0);
          segment(row, col, std::min(kPiece, cols - col), part.data());
          for (size_t j = 0; j < no; j++) acc[j] += part[j];
        }
        for (size_t j = 0; j < no; j++)
          if (p.outputs[j].reduced) store_reduced(j, row, acc[j], cols);
      }
    });
  } else {
    // fixed chunks summed in order: the result does not depend on the thread count
    const int64_t chunk = kGrainSize, nchunks = (total + chunk - 1) / chunk;
    std::vector<double> partial(std::max<int64_t>(nchunks, 1) * no, 0.0);
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      std::vector<double> part(no);
      for (int64_t ch = b; ch < e; ch++) {
        int64_t end = std::min(total, (ch + 1) * chunk);
        for (int64_t pos = ch * chunk; pos < end;) {
          int64_t row = pos / cols, col = pos % cols, n = std::min({cols - col, end - pos, kPiece});
          std::fill(part.begin(), part.end(), 0.0);
          segment(row, col, n, part.data());
          for (size_t j = 0; j < no; j++) partial[ch * no + j] += part[j];
          pos += n;
        }
      }
    });
    for (size_t j = 0; j < no; j++) {
      if (!p.outputs[j].reduced) continue;
      double s = 0;
      for (int64_t ch = 0; ch < nchunks; ch++) s += partial[ch * no + j];
      store_reduced(j, 0, s, total);
    }
  }
  for (size_t j = 0; j < no; j++)
    if (p.outputs[j].as_bool) out[j] = out[j].to(kBool);
  res.outputs = std::move(out);
  res.fused = true;
  return res;
}

// Inputs as the kernels read them: the program's dtype (0-d scalars and bool conditions converted).
std::vector<Tensor> prepare(const Program& p, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> in(inputs.size());
  for (size_t k = 0; k < inputs.size(); k++) {
    const Tensor& t = inputs[k];
    EMBER_CHECK_KIND(t.defined(), Value, "fusion group: input ", k, " is undefined");
    EMBER_CHECK_KIND(t.device().is_cpu(), Runtime, "fusion group: fused kernels run on the CPU; input ", k, " is on ",
                     t.device().str());
    in[k] = t.dtype() == p.dtype ? t : t.to(p.dtype);
  }
  return in;
}

// The backward of a fused group: the derivative program run as one fused kernel over the saved
// inputs and the incoming gradients, then each gradient summed to its input's shape.
struct FusedBackward : autograd::Node {
  std::shared_ptr<Compiled> fwd;
  std::vector<autograd::SavedVariable> saved;
  std::vector<int32_t> wrt;  // inputs that get a gradient
  int64_t reduced_count = 1;  // elements per reduced value (mean's divisor)

  std::string name() const override { return "FusionGroupBackward"; }
  void release_variables() override {
    for (auto& s : saved) s.reset();
  }
  autograd::variable_list apply(autograd::variable_list&& grads) override {
    EMBER_CHECK_KIND(!autograd::grad_enabled(), NotImplemented,
                     "a fused group's backward is not differentiable again (create_graph=True): run "
                     "without fusion to take higher-order gradients");
    auto self = shared_from_this();
    const Program& p = fwd->prog;
    std::vector<Tensor> in;
    for (auto& s : saved) in.push_back(s.unpack(self));
    std::vector<Tensor> orig = in;
    in = prepare(p, in);
    size_t gi = 0;
    for (size_t j = 0; j < p.outputs.size(); j++) {
      const Output& o = p.outputs[j];
      if (o.as_bool) continue;
      Tensor g = j < grads.size() ? grads[j] : Tensor();
      if (!g.defined()) g = scalar_to_tensor(Scalar(0.0)).to(p.dtype);  // broadcasts: no zeros tensor
      else if (g.dtype() != p.dtype) g = g.to(p.dtype);
      if (o.reduced) {
        // a last-dim reduction without keepdim lost the reduced dim: put it back to broadcast
        if (p.reduce == Reduce::LastDim && !o.keepdim) g = g.unsqueeze(-1);
        if (o.mean) g = ember::div(g, scalar_to_tensor(Scalar(double(reduced_count))));
      }
      in.push_back(g);
      gi++;
    }
    auto bwd = fwd->backward_for(wrt);
    RunResult r = run_compiled(*bwd, in, /*outputs_may_broadcast=*/true);
    EMBER_CHECK(r.fused, "fusion group backward: the gradients do not broadcast to the forward's shape");
    autograd::variable_list out(next_edges.size());
    for (size_t w = 0; w < wrt.size(); w++) {
      int32_t k = wrt[w];
      Tensor g = autograd::sum_to(r.outputs[w], orig[k].sizes());
      out[k] = g.dtype() == orig[k].dtype() ? g : g.to(orig[k].dtype());
    }
    return out;
  }
};

}  // namespace

Backend backend() { return g_override ? *g_override : env_backend(); }
void set_backend(std::optional<Backend> b) { g_override = b; }
Stats stats() { return {g_fused.load(), g_eager.load()}; }

std::vector<Tensor> run_group(const Node& n, const std::vector<Tensor>& inputs) {
  EMBER_CHECK_KIND(n.op == "prim::FusionGroup" && n.subgraph, Value, "run_group: node '", n.op,
                   "' is not a prim::FusionGroup with a subgraph");
  const Graph& sub = *n.subgraph;
  EMBER_CHECK_KIND(inputs.size() == sub.inputs.size(), Value, "fusion group: expected ", sub.inputs.size(),
                   " inputs, got ", inputs.size());
  EMBER_CHECK_KIND(inputs.size() <= 64, Value, "fusion group: at most 64 inputs");
  std::shared_ptr<Compiled> c = compiled_for(n.subgraph);
  const Program& p = c->prog;
  for (const Tensor& t : inputs) {
    if (!t.defined()) EMBER_FAIL(Value, "fusion group: an input is undefined");
    ScalarType d = t.dtype();
    // dtypes are part of a graph's signature; anything else means a hand-made graph: run it eagerly
    if (!(d == kFloat || d == kDouble || d == kBool) || !t.device().is_cpu() || (d != p.dtype && d != kBool && t.dim() != 0)) {
      g_eager++;
      return run_subgraph_eager(sub, inputs);
    }
  }
  // forward-mode tangents need each op's jvp: eager code has them
  if (autograd::fw_grad_active())
    for (const Tensor& t : inputs)
      if (autograd::fw_grad(t).defined()) {
        g_eager++;
        return run_subgraph_eager(sub, inputs);
      }
  std::vector<int32_t> wrt;
  if (autograd::grad_enabled())
    for (size_t k = 0; k < inputs.size(); k++)
      if (is_floating(inputs[k].dtype()) && autograd::requires_grad(inputs[k])) wrt.push_back(int32_t(k));
  RunResult r;
  {
    autograd::AutoGradMode no_grad(false);
    r = run_compiled(*c, prepare(p, inputs), false);
  }
  if (!r.fused) {
    g_eager++;
    return run_subgraph_eager(sub, inputs);
  }
  g_fused++;
  if (!wrt.empty()) {
    auto node = std::make_shared<FusedBackward>();
    node->fwd = c;
    node->wrt = wrt;
    for (const Tensor& t : inputs) node->saved.emplace_back(t, false);
    Shape full;
    for (const Tensor& t : inputs) broadcast_into(full, t.sizes());
    if (p.reduce == Reduce::LastDim) {
      node->reduced_count = full.back();
    } else if (p.reduce == Reduce::All) {
      for (int64_t s : full) node->reduced_count *= s;
    }
    autograd::collect_next_edges_list(*node, inputs);
    for (size_t j = 0; j < r.outputs.size(); j++) autograd::set_history(r.outputs[j], node, uint32_t(j));
  }
  return r.outputs;
}

}  // namespace ember::jit::fuser
