// The vectorizing interpreter: the program runs over blocks of kBlock elements, each instruction
// one tight loop over its block, so intermediates live in L1-sized scratch instead of memory.
// Transcendentals call SLEEF's u10 vector functions (eager's accuracy class); the loops are compiled
// for the baseline, AVX2 and AVX-512, picked at run time by the CPU (as eager's kernels are).
#pragma GCC optimize("no-math-errno")  // lets sqrt vectorize; errno is never read
#include <cmath>
#include <cstring>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/jit/fuser/kernel.h"

#if __has_include(<sleef.h>) && defined(__x86_64__)
#include <immintrin.h>
#include <sleef.h>
#define EMBER_FUSER_SLEEF 1
#endif

namespace ember::jit::fuser {
namespace {

constexpr int64_t kBlock = 1024;

// y[i] = f(a[i] (, b[i])) for one instruction. Comparisons give 1/0; Max/Min propagate NaN.
#define EMBER_FUSER_OP_LOOPS                                                                          \
  template <class T>                                                                                  \
  void run_op(Op op, int64_t m, const T* a, const T* b, const T* c, T* y) {                          \
    switch (op) {                                                                                     \
      case Op::Neg: for (int64_t i = 0; i < m; i++) y[i] = -a[i]; break;                              \
      case Op::Relu: for (int64_t i = 0; i < m; i++) y[i] = a[i] != a[i] ? a[i] : a[i] > 0 ? a[i] : T(0); break; \
      case Op::Abs: for (int64_t i = 0; i < m; i++) y[i] = std::fabs(a[i]); break;                   \
      case Op::Reciprocal: for (int64_t i = 0; i < m; i++) y[i] = T(1) / a[i]; break;                \
      case Op::Sign: for (int64_t i = 0; i < m; i++) y[i] = T(a[i] > 0) - T(a[i] < 0); break;        \
      case Op::Add: for (int64_t i = 0; i < m; i++) y[i] = a[i] + b[i]; break;                        \
      case Op::Sub: for (int64_t i = 0; i < m; i++) y[i] = a[i] - b[i]; break;                        \
      case Op::Mul: for (int64_t i = 0; i < m; i++) y[i] = a[i] * b[i]; break;                        \
      case Op::Div: for (int64_t i = 0; i < m; i++) y[i] = a[i] / b[i]; break;                        \
      case Op::Max: for (int64_t i = 0; i < m; i++) y[i] = a[i] != a[i] ? a[i] : b[i] != b[i] ? b[i] : a[i] > b[i] ? a[i] : b[i]; break; \
      case Op::Min: for (int64_t i = 0; i < m; i++) y[i] = a[i] != a[i] ? a[i] : b[i] != b[i] ? b[i] : a[i] < b[i] ? a[i] : b[i]; break; \
      case Op::Lt: for (int64_t i = 0; i < m; i++) y[i] = a[i] < b[i] ? T(1) : T(0); break;           \
      case Op::Le: for (int64_t i = 0; i < m; i++) y[i] = a[i] <= b[i] ? T(1) : T(0); break;          \
      case Op::Gt: for (int64_t i = 0; i < m; i++) y[i] = a[i] > b[i] ? T(1) : T(0); break;           \
      case Op::Ge: for (int64_t i = 0; i < m; i++) y[i] = a[i] >= b[i] ? T(1) : T(0); break;          \
      case Op::Eq: for (int64_t i = 0; i < m; i++) y[i] = a[i] == b[i] ? T(1) : T(0); break;          \
      case Op::Ne: for (int64_t i = 0; i < m; i++) y[i] = a[i] != b[i] ? T(1) : T(0); break;          \
      case Op::Where: for (int64_t i = 0; i < m; i++) y[i] = a[i] != T(0) ? b[i] : c[i]; break;       \
      default: run_transcendental(op, m, a, b, y);                                                    \
    }                                                                                                 \
  }

// Baseline: libm one element at a time.
namespace generic {
template <class T>
void run_transcendental(Op op, int64_t m, const T* a, const T* b, T* y) {
  for (int64_t i = 0; i < m; i++) {
    T x = a[i];
    switch (op) {
      case Op::Exp: y[i] = std::exp(x); break;
      case Op::Log: y[i] = std::log(x); break;
      case Op::Tanh: y[i] = std::tanh(x); break;
      case Op::Sigmoid: y[i] = T(1) / (T(1) + std::exp(-x)); break;
      case Op::Erf: y[i] = std::erf(x); break;
      case Op::Sin: y[i] = std::sin(x); break;
      case Op::Cos: y[i] = std::cos(x); break;
      case Op::Log1p: y[i] = std::log1p(x); break;
      case Op::Expm1: y[i] = std::expm1(x); break;
      case Op::Pow: y[i] = std::pow(x, b[i]); break;
      case Op::Sqrt: y[i] = std::sqrt(x); break;
      case Op::Rsqrt: y[i] = T(1) / std::sqrt(x); break;
      default: break;
    }
  }
}
EMBER_FUSER_OP_LOOPS
}  // namespace generic

#ifdef EMBER_FUSER_SLEEF
// SLEEF over full vectors; the tail goes through a padded copy so every element takes the same
// path (results do not depend on where a block ends).
#define EMBER_FUSER_VEC1(F, VT, W, LOAD, STORE, SL)                          \
  inline void F(int64_t m, const VT* a, VT* y) {                             \
    int64_t i = 0;                                                           \
    for (; i + W <= m; i += W) STORE(y + i, SL(LOAD(a + i)));                \
    if (i < m) {                                                             \
      VT t[W] = {}, r[W];                                                    \
      std::memcpy(t, a + i, (m - i) * sizeof(VT));                           \
      STORE(r, SL(LOAD(t)));                                                 \
      std::memcpy(y + i, r, (m - i) * sizeof(VT));                           \
    }                                                                        \
  }
#define EMBER_FUSER_VEC2(F, VT, W, LOAD, STORE, SL)                          \
  inline void F(int64_t m, const VT* a, const VT* b, VT* y) {                \
    int64_t i = 0;                                                           \
    for (; i + W <= m; i += W) STORE(y + i, SL(LOAD(a + i), LOAD(b + i)));   \
    if (i < m) {                                                             \
      VT t[W] = {}, u[W] = {}, r[W];                                         \
      std::memcpy(t, a + i, (m - i) * sizeof(VT));                           \
      std::memcpy(u, b + i, (m - i) * sizeof(VT));                           \
      STORE(r, SL(LOAD(t), LOAD(u)));                                        \
      std::memcpy(y + i, r, (m - i) * sizeof(VT));                           \
    }                                                                        \
  }
// one dtype's vector functions; SQRT is the ISA's sqrt instruction (correctly rounded, as
// eager's), not libm's errno-setting call
#define EMBER_FUSER_FNS(VT, W, LOAD, STORE, SUF, ISA, SQRT)                                       \
  EMBER_FUSER_VEC1(v_exp, VT, W, LOAD, STORE, Sleef_exp##SUF##_u10##ISA)                         \
  EMBER_FUSER_VEC1(v_log, VT, W, LOAD, STORE, Sleef_log##SUF##_u10##ISA)                         \
  EMBER_FUSER_VEC1(v_tanh, VT, W, LOAD, STORE, Sleef_tanh##SUF##_u10##ISA)                       \
  EMBER_FUSER_VEC1(v_erf, VT, W, LOAD, STORE, Sleef_erf##SUF##_u10##ISA)                         \
  EMBER_FUSER_VEC1(v_sin, VT, W, LOAD, STORE, Sleef_sin##SUF##_u10##ISA)                         \
  EMBER_FUSER_VEC1(v_cos, VT, W, LOAD, STORE, Sleef_cos##SUF##_u10##ISA)                         \
  EMBER_FUSER_VEC1(v_log1p, VT, W, LOAD, STORE, Sleef_log1p##SUF##_u10##ISA)                     \
  EMBER_FUSER_VEC1(v_expm1, VT, W, LOAD, STORE, Sleef_expm1##SUF##_u10##ISA)                     \
  EMBER_FUSER_VEC2(v_pow, VT, W, LOAD, STORE, Sleef_pow##SUF##_u10##ISA)                         \
  EMBER_FUSER_VEC1(v_sqrt, VT, W, LOAD, STORE, SQRT)
#define EMBER_FUSER_TRANSCENDENTALS                                           \
  template <class T>                                                          \
  void run_transcendental(Op op, int64_t m, const T* a, const T* b, T* y) {   \
    switch (op) {                                                             \
      case Op::Exp: v_exp(m, a, y); break;                                    \
      case Op::Log: v_log(m, a, y); break;                                    \
      case Op::Tanh: v_tanh(m, a, y); break;                                  \
      case Op::Sigmoid:                                                       \
        for (int64_t i = 0; i < m; i++) y[i] = -a[i];                         \
        v_exp(m, y, y);                                                       \
        for (int64_t i = 0; i < m; i++) y[i] = T(1) / (T(1) + y[i]);          \
        break;                                                                \
      case Op::Erf: v_erf(m, a, y); break;                                    \
      case Op::Sin: v_sin(m, a, y); break;                                    \
      case Op::Cos: v_cos(m, a, y); break;                                    \
      case Op::Log1p: v_log1p(m, a, y); break;                                \
      case Op::Expm1: v_expm1(m, a, y); break;                                \
      case Op::Pow: v_pow(m, a, b, y); break;                                 \
      case Op::Sqrt: v_sqrt(m, a, y); break;                                  \
      case Op::Rsqrt:                                                         \
        v_sqrt(m, a, y);                                                      \
        for (int64_t i = 0; i < m; i++) y[i] = T(1) / y[i];                   \
        break;                                                                \
      default: break;                                                         \
    }                                                                         \
  }
}  // namespace
}  // namespace ember::jit::fuser

// sleef.h declares its AVX2 / AVX-512 entry points only when the includer is built for them
#define EMBER_FUSER_DECL(V, VD, F, D, ISA)                                                         \
  V Sleef_exp##F##_u10##ISA(V); V Sleef_log##F##_u10##ISA(V); V Sleef_tanh##F##_u10##ISA(V);       \
  V Sleef_erf##F##_u10##ISA(V); V Sleef_sin##F##_u10##ISA(V); V Sleef_cos##F##_u10##ISA(V);        \
  V Sleef_log1p##F##_u10##ISA(V); V Sleef_expm1##F##_u10##ISA(V); V Sleef_pow##F##_u10##ISA(V, V); \
  VD Sleef_exp##D##_u10##ISA(VD); VD Sleef_log##D##_u10##ISA(VD); VD Sleef_tanh##D##_u10##ISA(VD); \
  VD Sleef_erf##D##_u10##ISA(VD); VD Sleef_sin##D##_u10##ISA(VD); VD Sleef_cos##D##_u10##ISA(VD);  \
  VD Sleef_log1p##D##_u10##ISA(VD); VD Sleef_expm1##D##_u10##ISA(VD); VD Sleef_pow##D##_u10##ISA(VD, VD);

#pragma GCC push_options
#pragma GCC target("avx2,fma")
extern "C" {
EMBER_FUSER_DECL(__m256, __m256d, f8, d4, avx2)
}
namespace ember::jit::fuser {
namespace {
namespace avx2 {
EMBER_FUSER_FNS(float, 8, _mm256_loadu_ps, _mm256_storeu_ps, f8, avx2, _mm256_sqrt_ps)
EMBER_FUSER_FNS(double, 4, _mm256_loadu_pd, _mm256_storeu_pd, d4, avx2, _mm256_sqrt_pd)
EMBER_FUSER_TRANSCENDENTALS
EMBER_FUSER_OP_LOOPS
}  // namespace avx2
}  // namespace
}  // namespace ember::jit::fuser
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma,prefer-vector-width=512")
extern "C" {
EMBER_FUSER_DECL(__m512, __m512d, f16, d8, avx512f)
__m512 Sleef_sqrtf16_u05avx512f(__m512);
__m512d Sleef_sqrtd8_u05avx512f(__m512d);
}
namespace ember::jit::fuser {
namespace {
namespace avx512 {
// SLEEF's correctly rounded sqrt: GCC 12's _mm512_sqrt_ps trips -Wmaybe-uninitialized here
EMBER_FUSER_FNS(float, 16, _mm512_loadu_ps, _mm512_storeu_ps, f16, avx512f, Sleef_sqrtf16_u05avx512f)
EMBER_FUSER_FNS(double, 8, _mm512_loadu_pd, _mm512_storeu_pd, d8, avx512f, Sleef_sqrtd8_u05avx512f)
EMBER_FUSER_TRANSCENDENTALS
EMBER_FUSER_OP_LOOPS
}  // namespace avx512
#pragma GCC pop_options
#endif

// 2: AVX-512 (as eager's widest kernels), 1: AVX2 + FMA, 0: baseline loops and libm
int isa_level() {
#ifdef EMBER_FUSER_SLEEF
  static const int level = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw")
                               ? 2
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1
                                                                                             : 0;
  return level;
#else
  return 0;
#endif
}

template <class T>
class InterpKernel final : public Kernel {
 public:
  InterpKernel(const Program& p, uint64_t mask) : p_(p), mask_(mask) {
    // Scratch slots by liveness: a register's slot is free again after its last reader, so a long
    // program needs only as many blocks as it has values alive at once.
    size_t n = p.code.size();
    std::vector<size_t> last_use(n, 0);
    for (size_t i = 0; i < n; i++)
      for (int32_t r : {p.code[i].a, p.code[i].b, p.code[i].c})
        if (r >= 0) last_use[r] = i;
    for (const Output& o : p.outputs) last_use[o.reg] = n;
    slot_.assign(n, -1);
    out_of_.assign(n, -1);
    std::vector<int32_t> free_slots;
    int32_t num_slots = 0;
    // an output register computed here is written straight into the output (no copy), when no
    // other output names it
    for (size_t j = 0; j < p.outputs.size(); j++) {
      const Output& o = p.outputs[j];
      const Op op = p.code[o.reg].op;
      if (o.reduced || op == Op::Input || op == Op::Const) continue;
      int uses = 0;
      for (const Output& o2 : p.outputs) uses += o2.reg == o.reg;
      if (uses == 1) out_of_[o.reg] = int32_t(j);
    }
    for (size_t i = 0; i < n; i++) {
      const Instr& in = p.code[i];
      // constants and broadcast inputs: own slots, filled once per run() and never reused
      if (in.op == Op::Const || (in.op == Op::Input && ((mask >> in.input) & 1))) {
        slot_[i] = num_slots++;
        leaves_.push_back(int32_t(i));
      }
    }
    for (size_t i = 0; i < n; i++) {
      const Instr& in = p.code[i];
      bool fixed = in.op == Op::Input || in.op == Op::Const;
      if (!fixed && out_of_[i] < 0) {
        if (free_slots.empty()) free_slots.push_back(num_slots++);
        slot_[i] = free_slots.back();
        free_slots.pop_back();
      }
      for (int32_t r : {in.a, in.b, in.c})
        if (r >= 0 && last_use[r] == i && slot_[r] >= 0 && p.code[r].op != Op::Input && p.code[r].op != Op::Const) {
          bool dup = false;  // an operand read twice (x * x) is freed once
          for (int32_t f : free_slots) dup |= f == slot_[r];
          if (!dup) free_slots.push_back(slot_[r]);
        }
    }
    num_slots_ = num_slots;
    isa_ = isa_level();
  }

  void run(int64_t n, const void* const* in, void* const* out, double* acc) const override {
    thread_local std::vector<T> scratch;
    if (scratch.size() < size_t(num_slots_ * kBlock)) scratch.resize(num_slots_ * kBlock);
    thread_local std::vector<const T*> ptr;
    ptr.resize(p_.code.size());
    const int64_t first = std::min(kBlock, n);
    for (int32_t i : leaves_) {
      const Instr& ins = p_.code[i];
      T* y = scratch.data() + slot_[i] * kBlock;
      T v = ins.op == Op::Const ? T(ins.k) : static_cast<const T*>(in[ins.input])[0];
      std::fill(y, y + first, v);
      ptr[i] = y;
    }
    for (int64_t off = 0; off < n; off += kBlock) {
      int64_t m = std::min(kBlock, n - off);
      for (size_t i = 0; i < p_.code.size(); i++) {
        const Instr& ins = p_.code[i];
        if (ins.op == Op::Const) continue;
        if (ins.op == Op::Input) {
          if (slot_[i] < 0) ptr[i] = static_cast<const T*>(in[ins.input]) + off;
          continue;
        }
        T* y = out_of_[i] >= 0 ? static_cast<T*>(out[out_of_[i]]) + off : scratch.data() + slot_[i] * kBlock;
        {
          const T* a = ptr[ins.a];
          const T* b = ins.b >= 0 ? ptr[ins.b] : nullptr;
          const T* c = ins.c >= 0 ? ptr[ins.c] : nullptr;
#ifdef EMBER_FUSER_SLEEF
          if (isa_ == 2) avx512::run_op<T>(ins.op, m, a, b, c, y);
          else if (isa_ == 1) avx2::run_op<T>(ins.op, m, a, b, c, y);
          else
#endif
            generic::run_op<T>(ins.op, m, a, b, c, y);
        }
        ptr[i] = y;
      }
      for (size_t j = 0; j < p_.outputs.size(); j++) {
        const Output& o = p_.outputs[j];
        const T* v = ptr[o.reg];
        if (o.reduced) {
          // eight lanes of partial sums in T (as eager's vector reductions), carried in double
          T lanes[8] = {};
          int64_t i = 0;
          for (; i + 8 <= m; i += 8)
            for (int l = 0; l < 8; l++) lanes[l] += v[i + l];
          for (; i < m; i++) lanes[0] += v[i];
          double s = 0;
          for (int l = 0; l < 8; l++) s += lanes[l];
          acc[j] += s;
        } else if (out_of_[o.reg] != int32_t(j)) {
          std::memcpy(static_cast<T*>(out[j]) + off, v, m * sizeof(T));
        }
      }
    }
  }

 private:
  Program p_;
  uint64_t mask_;
  std::vector<int32_t> slot_;    // scratch block of each register (-1: read in place / written to an output)
  std::vector<int32_t> out_of_;  // the output a register is written into directly, or -1
  std::vector<int32_t> leaves_;  // constants and broadcast inputs, filled once per run()
  int32_t num_slots_ = 0;
  int isa_ = 0;
};

}  // namespace

std::shared_ptr<const Kernel> make_interp_kernel(const Program& p, uint64_t bcast_mask) {
  if (p.dtype == kDouble) return std::make_shared<InterpKernel<double>>(p, bcast_mask);
  return std::make_shared<InterpKernel<float>>(p, bcast_mask);
}

}  // namespace ember::jit::fuser
