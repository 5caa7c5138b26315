// The CPU's pooling entries: max pooling and its backward, adaptive max pooling, and adaptive
// average pooling's window matrix.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <type_traits>

#include "ember/kernels/pooling.h"
#include "ember/parallel/parallel.h"

namespace ember {

namespace {

// c ? a : b through a bit mask: compilers turn the ternary into a branch, which mispredicts half the
// time on random data (max pooling's running maximum)
template <class T>
inline T blend(bool c, T a, T b) {
  using U = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 2, uint16_t,
            std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const U m = U(0) - U(c);
  U r = U((ua & m) | (ub & U(~m)));
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

// The kernel offsets kk in [window_begin, window_end) are those with base + kk * dil in [0, in).
inline int64_t window_begin(int64_t base, int64_t dil) { return base >= 0 ? 0 : (-base + dil - 1) / dil; }
inline int64_t window_end(int64_t base, int64_t dil, int64_t in, int64_t k) {
  return base >= in ? 0 : std::min(k, (in - 1 - base) / dil + 1);
}

void max_pool_cpu(const Tensor& vals, const Tensor& idx, const Tensor& x, const WindowGeometry& g) {
  const ScalarType cd = x.dtype();
  const int64_t planes = x.sizes()[0] * x.sizes()[1], plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t L = g.out[0] * g.out[1] * g.out[2], window = g.k[0] * g.k[1] * g.k[2];
  int64_t* ip = static_cast<int64_t*>(idx.data_ptr());
  EMBER_DISPATCH_ALL(cd, "max_pool", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16> || std::is_same_v<T, bool>) {
      EMBER_FAIL(NotImplemented, "\"max_pool\" not implemented for '", cd, "'");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* vp = static_cast<T*>(vals.data_ptr());
      // Output rows are built in chunks of 64 by sweeping each window offset (kd, kh, kw) across the
      // chunk: the outputs are independent, so there is no dependency chain and no unpredictable
      // branch (the select is branch-free); each offset's valid output range is clipped once. The
      // offsets are visited in a window's scan order, so the first maximum and the first NaN win.
      constexpr int64_t kChunk = 64;
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L * window, 1)), [&](int64_t b, int64_t e) {
        T best[kChunk];
        int64_t bi[kChunk];
        for (int64_t pl = b; pl < e; pl++) {
          const T* src = xp + pl * plane;
          for (int64_t od = 0; od < g.out[0]; od++)
            for (int64_t oh = 0; oh < g.out[1]; oh++)
              for (int64_t c0 = 0; c0 < g.out[2]; c0 += kChunk) {
                const int64_t c1 = std::min(g.out[2], c0 + kChunk);
                for (int64_t j = 0; j < c1 - c0; j++) best[j] = T(0), bi[j] = -1;
                // only the kernel offsets that land in the input are visited: a window far larger
                // than the input (kernel 2**31 with padding) costs what the input holds, not what it spans
                const int64_t bd = od * g.s[0] - g.p[0], bh = oh * g.s[1] - g.p[1];
                const int64_t kd1 = window_end(bd, g.d[0], g.in[0], g.k[0]);
                const int64_t kh1 = window_end(bh, g.d[1], g.in[1], g.k[1]);
                const int64_t kw0 = window_begin((c1 - 1) * g.s[2] - g.p[2], g.d[2]);
                const int64_t kw1 = window_end(c0 * g.s[2] - g.p[2], g.d[2], g.in[2], g.k[2]);
                for (int64_t kd = window_begin(bd, g.d[0]); kd < kd1; kd++) {
                  const int64_t id = bd + kd * g.d[0];
                  for (int64_t kh = window_begin(bh, g.d[1]); kh < kh1; kh++) {
                    const int64_t ih = bh + kh * g.d[1];
                    const int64_t row = (id * g.in[1] + ih) * g.in[2];
                    const T* srow = src + row;
                    for (int64_t kw = kw0; kw < kw1; kw++) {
                      const int64_t off = kw * g.d[2] - g.p[2];  // iw = ow * s + off must lie in [0, in)
                      const int64_t lo = std::max(c0, off >= 0 ? int64_t(0) : (-off + g.s[2] - 1) / g.s[2]);
                      const int64_t hi = std::min(c1, off >= g.in[2] ? int64_t(0) : (g.in[2] - 1 - off) / g.s[2] + 1);
                      for (int64_t ow = lo; ow < hi; ow++) {
                        const int64_t iw = ow * g.s[2] + off, j = ow - c0;
                        const T v = srow[iw], cur = best[j];
                        const bool take = (bi[j] < 0) | ((cur == cur) & ((v > cur) | (v != v)));
                        best[j] = blend(take, v, cur);
                        bi[j] = blend(take, row + iw, bi[j]);
                      }
                    }
                  }
                }
                const int64_t o0 = pl * L + (od * g.out[1] + oh) * g.out[2] + c0;
                for (int64_t j = 0; j < c1 - c0; j++) vp[o0 + j] = best[j], ip[o0 + j] = bi[j];
              }
        }
      });
    }
  });
}

// Each gradient goes to the input position its window picked; planes run in parallel.
void max_pool_backward_cpu(const Tensor& gi, const Tensor& g, const Tensor& idx) {
  const ScalarType cd = gi.dtype();
  const int64_t planes = gi.sizes()[0] * gi.sizes()[1];
  const int64_t in_plane = gi.numel() / planes, out_plane = g.numel() / planes;
  std::atomic<bool> bad{false};
  EMBER_DISPATCH_ALL(cd, "max_pool_with_indices_backward", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
      const T* gp = static_cast<const T*>(g.data_ptr());
      const int64_t* ip = static_cast<const int64_t*>(idx.data_ptr());
      T* op = static_cast<T*>(gi.data_ptr());
      parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(out_plane, 1)), [&](int64_t b, int64_t e) {
        for (int64_t pl = b; pl < e; pl++) {
          const T* gq = gp + pl * out_plane;
          const int64_t* iq = ip + pl * out_plane;
          T* oq = op + pl * in_plane;
          for (int64_t j = 0; j < out_plane; j++) {
            int64_t k = iq[j];
            if (k < 0 || k >= in_plane) {
              bad.store(true, std::memory_order_relaxed);
              continue;
            }
            oq[k] += gq[j];
          }
        }
      });
    }
  });
  EMBER_CHECK_KIND(!bad.load(), Index, "max_pool_with_indices_backward: an index is out of bounds for a plane of ",
                   in_plane, " elements");
  EMBER_CHECK_KIND(!bad.load(), Index, "max_pool_with_indices_backward: an index is out of bounds for a plane of ",
                   in_plane, " elements");
}

void adaptive_max_pool_cpu(const Tensor& vals, const Tensor& idx, const Tensor& x) {
  const int64_t ns = x.dim() - 2;
  DimVector o3(3, 1), i3(3, 1);  // padded to 3 dims with leading ones
  for (int64_t i = 0; i < ns; i++) {
    o3[3 - ns + i] = vals.sizes()[2 + i];
    i3[3 - ns + i] = x.sizes()[2 + i];
  }
  const int64_t planes = x.sizes()[0] * x.sizes()[1], plane = prod(i3), L = prod(o3);
  int64_t* ip = static_cast<int64_t*>(idx.data_ptr());
  EMBER_DISPATCH_ALL(x.dtype(), "adaptive_max_pool", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_floating_point_v<T>) {
      EMBER_FAIL(NotImplemented, "\"adaptive_max_pool\" not implemented for '", x.dtype(), "'");
    } else {
      const T* xp = static_cast<const T*>(x.data_ptr());
      T* vp = static_cast<T*>(vals.data_ptr());
      auto lo = [](int64_t r, int64_t in, int64_t o) { return (r * in) / o; };
      auto hi = [](int64_t r, int64_t in, int64_t o) { return ((r + 1) * in + o - 1) / o; };
      parallel_for(0, planes, 1, [&](int64_t b, int64_t e) {
        for (int64_t pl = b; pl < e; pl++) {
          const T* src = xp + pl * plane;
          for (int64_t a = 0; a < o3[0]; a++)
            for (int64_t bb = 0; bb < o3[1]; bb++)
              for (int64_t c = 0; c < o3[2]; c++) {
                T best = 0;
                int64_t bi = -1;
                for (int64_t i0 = lo(a, i3[0], o3[0]); i0 < hi(a, i3[0], o3[0]); i0++)
                  for (int64_t i1 = lo(bb, i3[1], o3[1]); i1 < hi(bb, i3[1], o3[1]); i1++)
                    for (int64_t i2 = lo(c, i3[2], o3[2]); i2 < hi(c, i3[2], o3[2]); i2++) {
                      int64_t pos = (i0 * i3[1] + i1) * i3[2] + i2;
                      T v = src[pos];
                      if (bi < 0 || v > best || (v != v && best == best)) { best = v; bi = pos; }
                    }
                int64_t o = pl * L + (a * o3[1] + bb) * o3[2] + c;
                vp[o] = best;
                ip[o] = bi;
              }
        }
      });
    }
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(max_pool_stub, CPU, &max_pool_cpu);
EMBER_REGISTER_KERNEL(max_pool_backward_stub, CPU, &max_pool_backward_cpu);
EMBER_REGISTER_KERNEL(adaptive_max_pool_stub, CPU, &adaptive_max_pool_cpu);

}  // namespace ember
