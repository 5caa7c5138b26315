// Lowering a fusion subgraph to primitive instructions, and their symbolic derivative.
#include "ember/jit/fuser/program.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "ember/core/error.h"

namespace ember::jit::fuser {

const char* op_name(Op op) {
  switch (op) {
    case Op::Input: return "in";       case Op::Const: return "const";
    case Op::Neg: return "neg";        case Op::Exp: return "exp";          case Op::Log: return "log";
    case Op::Tanh: return "tanh";      case Op::Sigmoid: return "sigmoid";  case Op::Relu: return "relu";
    case Op::Erf: return "erf";        case Op::Sqrt: return "sqrt";        case Op::Rsqrt: return "rsqrt";
    case Op::Abs: return "abs";        case Op::Reciprocal: return "reciprocal";
    case Op::Sin: return "sin";        case Op::Cos: return "cos";          case Op::Log1p: return "log1p";
    case Op::Expm1: return "expm1";    case Op::Sign: return "sign";
    case Op::Add: return "add";        case Op::Sub: return "sub";          case Op::Mul: return "mul";
    case Op::Div: return "div";        case Op::Pow: return "pow";          case Op::Max: return "max";
    case Op::Min: return "min";        case Op::Lt: return "lt";            case Op::Le: return "le";
    case Op::Gt: return "gt";          case Op::Ge: return "ge";            case Op::Eq: return "eq";
    case Op::Ne: return "ne";          case Op::Where: return "where";
  }
  return "?";
}

int op_arity(Op op) {
  if (op == Op::Input || op == Op::Const) return 0;
  if (op == Op::Where) return 3;
  if (op >= Op::Add) return 2;
  return 1;
}

std::string Program::key() const {
  std::string s = dtype == kDouble ? "f64" : "f32";
  s += ";n" + std::to_string(num_inputs) + ";r" + std::to_string(int(reduce)) + "," + std::to_string(reduce_dim);
  char buf[64];
  for (const Instr& in : code) {
    s += ';';
    s += op_name(in.op);
    if (in.op == Op::Input) s += std::to_string(in.input);
    if (in.op == Op::Const) {
      std::snprintf(buf, sizeof buf, "%a", in.k);
      s += buf;
    }
    for (int32_t r : {in.a, in.b, in.c})
      if (r >= 0) s += ',' + std::to_string(r);
  }
  for (const Output& o : outputs)
    s += ";o" + std::to_string(o.reg) + (o.reduced ? (o.mean ? "m" : "s") : "") + (o.keepdim ? "k" : "") +
         (o.as_bool ? "b" : "");
  return s;
}

// ---- which graph ops lower

namespace {
const std::map<std::string, Op>& unary_ops() {
  static const std::map<std::string, Op> m = {
      {"neg", Op::Neg}, {"exp", Op::Exp}, {"log", Op::Log}, {"tanh", Op::Tanh}, {"sigmoid", Op::Sigmoid},
      {"relu", Op::Relu}, {"erf", Op::Erf}, {"sqrt", Op::Sqrt}, {"rsqrt", Op::Rsqrt}, {"abs", Op::Abs},
      {"reciprocal", Op::Reciprocal}, {"sin", Op::Sin}, {"cos", Op::Cos}, {"log1p", Op::Log1p},
      {"expm1", Op::Expm1}};
  return m;
}
const std::map<std::string, Op>& binary_ops() {
  static const std::map<std::string, Op> m = {
      {"mul", Op::Mul}, {"true_divide", Op::Div}, {"pow", Op::Pow}, {"maximum", Op::Max}, {"minimum", Op::Min},
      {"lt", Op::Lt}, {"le", Op::Le}, {"gt", Op::Gt}, {"ge", Op::Ge}, {"eq", Op::Eq}, {"ne", Op::Ne}};
  return m;
}
const char* const kOtherOps[] = {"add", "sub", "div", "square", "silu", "gelu", "leaky_relu", "clamp", "clamp_min",
                                 "clamp_max", "where", "where.ScalarSelf", "where.ScalarOther", "where.Scalar", "lerp"};
}  // namespace

bool is_reduction_op(const std::string& op) { return op == "sum" || op == "sum.dim_IntList" || op == "mean"; }

bool is_fusible_op(const Node& n) {
  if (n.variant != Variant::Functional || n.outputs.size() != 1) return false;
  const std::string& op = n.op;
  if (unary_ops().count(op) || binary_ops().count(op)) return true;
  if (op == "div") return n.args.size() > 2 && n.args[2].kind == Arg::Kind::None;  // true division only
  if (op == "gelu")
    return n.args.size() == 2 && n.args[1].kind == Arg::Kind::Str && (n.args[1].s == "none" || n.args[1].s == "tanh");
  if (is_reduction_op(op)) {
    // no dtype= (a different accumulation dtype): the last argument is the ScalarType?
    return n.args.size() == (op == "sum" ? 2u : 4u) && n.args.back().kind == Arg::Kind::None;
  }
  for (const char* o : kOtherOps)
    if (op == o) return true;
  return false;
}

// ---- lowering

namespace {
struct Lowering {
  const Graph& sub;
  Program p;
  std::unordered_map<int64_t, int32_t> reg_of;  // value id -> register
  std::map<double, int32_t> consts;

  int32_t constant(double k) {
    auto it = consts.find(k);
    if (it != consts.end() && !std::signbit(k) == !std::signbit(it->first)) return it->second;
    Instr in;
    in.op = Op::Const;
    in.k = k;
    return consts[k] = p.emit(in);
  }
  int32_t un(Op op, int32_t a) { Instr in; in.op = op; in.a = a; return p.emit(in); }
  int32_t bin(Op op, int32_t a, int32_t b) { Instr in; in.op = op; in.a = a; in.b = b; return p.emit(in); }
  int32_t where(int32_t c, int32_t a, int32_t b) { Instr in; in.op = Op::Where; in.a = c; in.b = a; in.c = b; return p.emit(in); }

  // A tensor or scalar argument as a register (-1 for an absent optional).
  int32_t arg(const Node& n, size_t i) {
    EMBER_CHECK(i < n.args.size(), "fuser: ", n.op, " is missing argument ", i);
    const Arg& a = n.args[i];
    switch (a.kind) {
      case Arg::Kind::Value: {
        auto it = reg_of.find(a.i);
        EMBER_CHECK(it != reg_of.end(), "fuser: value %", a.i, " read by ", n.op, " is not defined in the group");
        return it->second;
      }
      case Arg::Kind::Int: return constant(double(a.i));
      case Arg::Kind::Float: return constant(a.f);
      case Arg::Kind::Bool: return constant(a.b ? 1.0 : 0.0);
      case Arg::Kind::None: return -1;
      default: EMBER_FAIL(Type, "fuser: ", n.op, " argument ", i, " is not a tensor or a number");
    }
  }
  double number(const Node& n, size_t i) {
    const Arg& a = n.args.at(i);
    if (a.kind == Arg::Kind::Int) return double(a.i);
    if (a.kind == Arg::Kind::Float) return a.f;
    if (a.kind == Arg::Kind::Bool) return a.b;
    EMBER_FAIL(Type, "fuser: ", n.op, " argument ", i, " must be a number");
  }

  int32_t node(const Node& n) {
    const std::string& op = n.op;
    if (auto it = unary_ops().find(op); it != unary_ops().end()) return un(it->second, arg(n, 0));
    if (auto it = binary_ops().find(op); it != binary_ops().end()) {
      int32_t a = arg(n, 0), b = arg(n, 1);
      if (op == "pow" && p.code[b].op == Op::Const && p.code[b].k == 2.0) return bin(Op::Mul, a, a);
      return bin(it->second, a, b);
    }
    if (op == "add" || op == "sub") {
      int32_t a = arg(n, 0), b = arg(n, 1);
      double alpha = n.args.size() > 2 ? number(n, 2) : 1.0;
      if (alpha != 1.0) b = bin(Op::Mul, b, constant(alpha));
      return bin(op == "add" ? Op::Add : Op::Sub, a, b);
    }
    if (op == "div") return bin(Op::Div, arg(n, 0), arg(n, 1));
    if (op == "square") { int32_t a = arg(n, 0); return bin(Op::Mul, a, a); }
    if (op == "silu") { int32_t a = arg(n, 0); return bin(Op::Mul, a, un(Op::Sigmoid, a)); }
    if (op == "gelu") {  // eager's own composition, so results agree to the rounding
      int32_t x = arg(n, 0);
      int32_t half_x = bin(Op::Mul, x, constant(0.5));
      int32_t inner;
      if (n.args[1].s == "tanh") {
        int32_t cube = bin(Op::Mul, bin(Op::Mul, x, x), x);
        int32_t poly = bin(Op::Add, x, bin(Op::Mul, cube, constant(0.044715)));
        inner = un(Op::Tanh, bin(Op::Mul, poly, constant(std::sqrt(2.0 / M_PI))));
      } else {
        inner = un(Op::Erf, bin(Op::Mul, x, constant(M_SQRT1_2)));
      }
      return bin(Op::Mul, half_x, bin(Op::Add, inner, constant(1.0)));
    }
    if (op == "leaky_relu") {
      int32_t x = arg(n, 0);
      double slope = n.args.size() > 1 ? number(n, 1) : 0.01;
      return where(bin(Op::Gt, x, constant(0.0)), x, bin(Op::Mul, x, constant(slope)));
    }
    if (op == "clamp" || op == "clamp_min" || op == "clamp_max") {
      // where-based, so NaN passes through and the gradient matches eager's at the bounds
      int32_t x = arg(n, 0);
      int32_t lo = op == "clamp_max" ? -1 : arg(n, 1);
      int32_t hi = op == "clamp" ? arg(n, 2) : op == "clamp_max" ? arg(n, 1) : -1;
      if (lo >= 0) x = where(bin(Op::Lt, x, lo), lo, x);
      if (hi >= 0) x = where(bin(Op::Gt, x, hi), hi, x);
      return x;
    }
    if (op.rfind("where", 0) == 0) return where(arg(n, 0), arg(n, 1), arg(n, 2));
    if (op == "lerp") {
      int32_t a = arg(n, 0), b = arg(n, 1), w = arg(n, 2);
      return bin(Op::Add, a, bin(Op::Mul, w, bin(Op::Sub, b, a)));
    }
    EMBER_FAIL(NotImplemented, "fuser: no fused form of op '", op, "'");
  }

  // A reduction: records the mode and returns the operand register.
  int32_t reduction(const Node& n, Output& o) {
    int32_t x = arg(n, 0);
    o.reduced = true;
    o.mean = n.op == "mean";
    std::vector<int64_t> dims;
    if (n.op != "sum") {
      if (n.args.at(1).kind == Arg::Kind::Ints) dims = n.args[1].ints;
      o.keepdim = n.args.at(2).kind == Arg::Kind::Bool && n.args[2].b;
    }
    Reduce mode = dims.empty() ? Reduce::All : Reduce::LastDim;
    EMBER_CHECK(dims.size() <= 1, "fuser: ", n.op, " over several dims does not fuse");
    EMBER_CHECK(p.reduce == Reduce::None || p.reduce == mode, "fuser: one group reduces over one set of dims");
    if (mode == Reduce::LastDim) {
      // -1 and ndim-1 both name the last dim; a non-negative one also pins the rank at replay
      int64_t d = dims[0];
      EMBER_CHECK(p.reduce == Reduce::None || d == -1 || p.reduce_dim == -1 || d == p.reduce_dim,
                  "fuser: one group reduces over one dim");
      if (p.reduce == Reduce::None || d != -1) p.reduce_dim = d;
    }
    p.reduce = mode;
    return x;
  }
};
}  // namespace

Program lower(const Graph& sub) {
  Lowering L{sub, {}, {}, {}};
  L.p.num_inputs = int32_t(sub.inputs.size());
  bool dtype_set = false;
  for (size_t k = 0; k < sub.inputs.size(); k++) {
    Instr in;
    in.op = Op::Input;
    in.input = int32_t(k);
    L.reg_of[sub.inputs[k].value] = L.p.emit(in);
  }
  // reductions: their outputs are program outputs, never operands
  std::unordered_map<int64_t, Output> reduced;
  for (const Node& n : sub.nodes) {
    EMBER_CHECK(is_fusible_op(n), "fuser: op '", n.op, "' cannot be fused");
    int64_t out = n.outputs[0];
    ScalarType dt = sub.values.at(out).dtype;
    if (dt == kFloat || dt == kDouble) {
      EMBER_CHECK(!dtype_set || L.p.dtype == dt, "fuser: one group computes in one dtype");
      L.p.dtype = dt;
      dtype_set = true;
    }
    if (is_reduction_op(n.op)) {
      Output o;
      o.reg = L.reduction(n, o);
      reduced[out] = o;
    } else {
      L.reg_of[out] = L.node(n);
    }
  }
  std::vector<int64_t> outs;
  if (sub.output.kind == OutputSpec::Kind::Value) outs.push_back(sub.output.value);
  else
    for (const OutputSpec& o : sub.output.items) outs.push_back(o.value);
  for (int64_t v : outs) {
    if (auto it = reduced.find(v); it != reduced.end()) {
      L.p.outputs.push_back(it->second);
      continue;
    }
    auto it = L.reg_of.find(v);
    EMBER_CHECK(it != L.reg_of.end(), "fuser: group output %", v, " is not computed in the group");
    Output o;
    o.reg = it->second;
    o.as_bool = sub.values.at(v).dtype == kBool;
    L.p.outputs.push_back(o);
  }
  for (const auto& [v, o] : reduced) {
    (void)o;
    bool listed = false;
    for (int64_t w : outs) listed |= w == v;
    EMBER_CHECK(listed, "fuser: a reduction inside a group must be one of its outputs");
  }
  return L.p;
}

// ---- reverse mode

Program differentiate(const Program& fwd, const std::vector<int32_t>& wrt) {
  Program bp;
  bp.dtype = fwd.dtype;
  bp.code = fwd.code;  // the backward recomputes the forward from the saved inputs
  std::map<double, int32_t> consts;
  auto C = [&](double k) {
    auto it = consts.find(k);
    if (it != consts.end()) return it->second;
    Instr in;
    in.op = Op::Const;
    in.k = k;
    return consts[k] = bp.emit(in);
  };
  auto E = [&](Op op, int32_t a, int32_t b = -1, int32_t c = -1) {
    Instr in;
    in.op = op;
    in.a = a;
    in.b = b;
    in.c = c;
    return bp.emit(in);
  };
  std::vector<int32_t> adj(fwd.code.size(), -1);
  auto acc = [&](int32_t reg, int32_t g) { adj[reg] = adj[reg] < 0 ? g : E(Op::Add, adj[reg], g); };

  int32_t next_input = fwd.num_inputs;
  for (const Output& o : fwd.outputs) {
    if (o.as_bool) continue;  // comparisons carry no gradient
    Instr in;
    in.op = Op::Input;
    in.input = next_input++;
    acc(o.reg, bp.emit(in));
  }
  bp.num_inputs = next_input;

  for (int32_t i = int32_t(fwd.code.size()) - 1; i >= 0; i--) {
    int32_t g = adj[i];
    if (g < 0) continue;
    const Instr& in = fwd.code[i];
    int32_t a = in.a, b = in.b, r = i;
    switch (in.op) {
      case Op::Input: case Op::Const: case Op::Sign:
      case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne: break;
      case Op::Neg: acc(a, E(Op::Neg, g)); break;
      case Op::Exp: acc(a, E(Op::Mul, g, r)); break;
      case Op::Log: acc(a, E(Op::Div, g, a)); break;
      case Op::Tanh: acc(a, E(Op::Mul, g, E(Op::Sub, C(1), E(Op::Mul, r, r)))); break;
      case Op::Sigmoid: acc(a, E(Op::Mul, E(Op::Mul, g, r), E(Op::Sub, C(1), r))); break;
      case Op::Relu: acc(a, E(Op::Where, E(Op::Gt, r, C(0)), g, C(0))); break;
      case Op::Erf:
        acc(a, E(Op::Mul, E(Op::Mul, g, E(Op::Exp, E(Op::Neg, E(Op::Mul, a, a)))), C(1.1283791670955126)));
        break;
      case Op::Sqrt: acc(a, E(Op::Div, g, E(Op::Mul, r, C(2)))); break;
      case Op::Rsqrt: acc(a, E(Op::Mul, E(Op::Mul, g, E(Op::Mul, E(Op::Mul, r, r), r)), C(-0.5))); break;
      case Op::Abs: acc(a, E(Op::Mul, g, E(Op::Sign, a))); break;
      case Op::Reciprocal: acc(a, E(Op::Mul, g, E(Op::Neg, E(Op::Mul, r, r)))); break;
      case Op::Sin: acc(a, E(Op::Mul, g, E(Op::Cos, a))); break;
      case Op::Cos: acc(a, E(Op::Mul, g, E(Op::Neg, E(Op::Sin, a)))); break;
      case Op::Log1p: acc(a, E(Op::Div, g, E(Op::Add, a, C(1)))); break;
      case Op::Expm1: acc(a, E(Op::Mul, g, E(Op::Add, r, C(1)))); break;
      case Op::Add: acc(a, g); acc(b, g); break;
      case Op::Sub: acc(a, g); acc(b, E(Op::Neg, g)); break;
      case Op::Mul:
        if (a == b) {
          acc(a, E(Op::Mul, E(Op::Mul, g, a), C(2)));
        } else {
          acc(a, E(Op::Mul, g, b));
          acc(b, E(Op::Mul, g, a));
        }
        break;
      case Op::Div:
        acc(a, E(Op::Div, g, b));
        acc(b, E(Op::Div, E(Op::Neg, E(Op::Mul, g, a)), E(Op::Mul, b, b)));
        break;
      case Op::Pow: {
        // d/da = b * a^(b-1) (0 where b == 0); d/db = r * log(a) (0 where a == 0 and b >= 0)
        int32_t da = E(Op::Mul, E(Op::Mul, g, b), E(Op::Pow, a, E(Op::Sub, b, C(1))));
        acc(a, E(Op::Where, E(Op::Eq, b, C(0)), C(0), da));
        if (fwd.code[b].op != Op::Const) {
          int32_t db = E(Op::Mul, E(Op::Mul, g, r), E(Op::Log, a));
          int32_t zero_base = E(Op::Mul, E(Op::Eq, a, C(0)), E(Op::Ge, b, C(0)));
          acc(b, E(Op::Where, zero_base, C(0), db));
        }
        break;
      }
      case Op::Max: case Op::Min: {
        // ties split the gradient in half, as eager's maximum/minimum backward
        int32_t half = E(Op::Where, E(Op::Eq, a, b), E(Op::Mul, g, C(0.5)), g);
        Op loses = in.op == Op::Max ? Op::Lt : Op::Gt;
        acc(a, E(Op::Where, E(loses, a, b), C(0), half));
        acc(b, E(Op::Where, E(loses, b, a), C(0), half));
        break;
      }
      case Op::Where:
        acc(in.b, E(Op::Where, a, g, C(0)));
        acc(in.c, E(Op::Where, a, C(0), g));
        break;
    }
  }
  for (int32_t k : wrt) {
    int32_t grad = -1;
    for (size_t i = 0; i < fwd.code.size(); i++)
      if (fwd.code[i].op == Op::Input && fwd.code[i].input == k && adj[i] >= 0) grad = adj[i];
    Output o;
    o.reg = grad >= 0 ? grad : C(0);
    bp.outputs.push_back(o);
  }
  return prune(bp);
}

Program prune(const Program& p) {
  std::vector<char> live(p.code.size(), 0);
  for (const Output& o : p.outputs) live[o.reg] = 1;
  for (int32_t i = int32_t(p.code.size()) - 1; i >= 0; i--) {
    if (!live[i]) continue;
    for (int32_t r : {p.code[i].a, p.code[i].b, p.code[i].c})
      if (r >= 0) live[r] = 1;
  }
  Program q;
  q.dtype = p.dtype;
  q.num_inputs = p.num_inputs;
  q.reduce = p.reduce;
  q.reduce_dim = p.reduce_dim;
  std::vector<int32_t> renum(p.code.size(), -1);
  for (size_t i = 0; i < p.code.size(); i++) {
    if (!live[i]) continue;
    Instr in = p.code[i];
    for (int32_t* r : {&in.a, &in.b, &in.c})
      if (*r >= 0) *r = renum[*r];
    renum[i] = q.emit(in);
  }
  q.outputs = p.outputs;
  for (Output& o : q.outputs) o.reg = renum[o.reg];
  return q;
}

}  // namespace ember::jit::fuser
