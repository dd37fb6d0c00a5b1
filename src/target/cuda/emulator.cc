#include "target/cuda/emulator.h"

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <unordered_map>

#include "ir/error.h"
#include "ir/functor.h"

namespace tl {

namespace {

// ---- number formats ---------------------------------------------------------------------------
uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t f32_to_f16(float f) {
  uint32_t x = f32_bits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mag = x & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);
  if (mag >= 0x47800000u) {  // >= 65536: round may overflow; handle precisely below
    // values >= 65520 round to inf
    if (mag >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (mag < 0x33000001u) return static_cast<uint16_t>(sign);  // < 2^-25 (half of min subnormal, ties to 0)
  int exp = static_cast<int>(mag >> 23) - 127;
  uint32_t man = (mag & 0x7fffffu) | 0x800000u;
  uint32_t h;
  if (exp < -14) {  // subnormal
    int shift = -14 - exp + 13;
    uint32_t q = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    h = q;
  } else {
    uint32_t q = man >> 13, rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1))) ++q;
    if (q == 0x800u) {
      q = 0x400u;
      ++exp;
    }
    if (exp > 15) return static_cast<uint16_t>(sign | 0x7c00u);
    h = (static_cast<uint32_t>(exp + 15) << 10) | (q & 0x3ffu);
  }
  return static_cast<uint16_t>(sign | h);
}
float f16_to_f32(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return (sign ? -1.f : 1.f) * std::ldexp(static_cast<float>(m), -24);
  if (e == 31) return bits_f32(sign | 0x7f800000u | (m << 13));
  return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}
uint16_t f32_to_bf16(float f) {
  uint32_t x = f32_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}
float bf16_to_f32(uint16_t b) { return bits_f32(static_cast<uint32_t>(b) << 16); }

double round_to(DataType t, double v) {
  if (t == DataType::Float32()) return static_cast<float>(v);
  if (t == DataType::Float(16)) return f16_to_f32(f32_to_f16(static_cast<float>(v)));
  if (t == DataType::BFloat16()) return bf16_to_f32(f32_to_bf16(static_cast<float>(v)));
  return v;
}

int64_t wrap_int(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  if (t.bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << t.bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (t.bits - 1))) return static_cast<int64_t>(u | ~mask);
  return static_cast<int64_t>(u);
}

// ---- memory ---------------------------------------------------------------------------------------
enum class Space { kGlobal, kShared, kLocal };

struct Mem {
  uint8_t* base = nullptr;
  int64_t size = 0;
  Space space = Space::kGlobal;
  std::string name;
};

struct Val {
  double f = 0;
  int64_t i = 0;
  Mem mem;          // handles (addresses)
  int64_t off = 0;  // byte offset of a handle
};

struct ByteState {
  int32_t w_thread = -1;
  int64_t w_epoch = -1;
  bool pending_async = false;
  int32_t r_thread = -1;
  int64_t r_epoch = -1;
  bool r_multi = false;
};

Val decode(DataType t, const uint8_t* p) {
  Val v;
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) v.f = bits_f32(*reinterpret_cast<const uint32_t*>(p));
      else if (t.bits == 64) std::memcpy(&v.f, p, 8);
      else v.f = f16_to_f32(*reinterpret_cast<const uint16_t*>(p));
      break;
    case DataType::kBFloat: v.f = bf16_to_f32(*reinterpret_cast<const uint16_t*>(p)); break;
    case DataType::kBool: v.i = *p != 0; break;
    case DataType::kInt:
    case DataType::kUInt: {
      int64_t x = 0;
      std::memcpy(&x, p, static_cast<size_t>(t.bits / 8));
      v.i = wrap_int(t, x);
      break;
    }
    default: throw_error<NotImplemented>("not implemented: emulating ", t.str(), " memory");
  }
  return v;
}

void encode(DataType t, const Val& v, uint8_t* p) {
  switch (t.code) {
    case DataType::kFloat:
      if (t.bits == 32) {
        float f = static_cast<float>(v.f);
        std::memcpy(p, &f, 4);
      } else if (t.bits == 64) {
        std::memcpy(p, &v.f, 8);
      } else {
        uint16_t h = f32_to_f16(static_cast<float>(v.f));
        std::memcpy(p, &h, 2);
      }
      break;
    case DataType::kBFloat: {
      uint16_t h = f32_to_bf16(static_cast<float>(v.f));
      std::memcpy(p, &h, 2);
      break;
    }
    case DataType::kBool: *p = v.i != 0; break;
    case DataType::kInt:
    case DataType::kUInt: std::memcpy(p, &v.i, static_cast<size_t>(t.bits / 8)); break;
    default: throw_error<NotImplemented>("not implemented: emulating ", t.str(), " memory");
  }
}

struct Template {
  std::string name;
  std::vector<std::string> args;
};
Template parse_template(const std::string& callee) {
  Template t;
  auto lt = callee.find('<');
  t.name = callee.substr(0, lt);
  if (lt == std::string::npos) return t;
  std::string inner = callee.substr(lt + 1, callee.rfind('>') - lt - 1);
  std::string cur;
  for (char c : inner) {
    if (c == ',') {
      t.args.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) t.args.push_back(cur);
  return t;
}

DataType type_of_name(const std::string& n) {
  if (n == "tl::half_t") return DataType::Float(16);
  if (n == "tl::bfloat16_t") return DataType::BFloat16();
  if (n == "float") return DataType::Float32();
  if (n == "double") return DataType::Float(64);
  if (n == "tl::int8_t") return DataType::Int(8);
  if (n == "tl::uint8_t") return DataType::UInt(8);
  if (n == "int") return DataType::Int32();
  throw_error<NotImplemented>("not implemented: emulating mma on ", n);
}

struct Stop {};  // thrown to abandon a block after too many problems

class Emulator {
 public:
  Emulator(const PrimFunc& f, const std::vector<TLArg>& args) : f_(f), args_(args) {}

  EmulatorReport run() {
    const KernelLaunchNode* k = find_kernel(f_.body());
    // Scalars and dynamic dimensions.
    const auto& params = f_.params();
    std::vector<Var> dyn = f_.dynamic_vars();
    if (args_.size() < params.size() + dyn.size())
      throw_error<ArgumentError>("emulator: expected ", params.size() + dyn.size(), " argument slots");
    for (size_t i = 0; i < params.size(); ++i)
      if (!params[i].is_buffer()) {
        Val v;
        if (params[i].var.dtype().is_float()) v.f = args_[i].f64;
        else v.i = args_[i].i64;
        uniform_[params[i].var.get()] = v;
      }
    for (size_t i = 0; i < dyn.size(); ++i) {
      Val v;
      v.i = args_[params.size() + i].i64;
      uniform_[dyn[i].get()] = v;
    }
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i].is_buffer()) {
        const Buffer& b = params[i].buffer;
        int64_t n = 1;
        for (const Expr& e : b.shape()) n *= eval(e, 0).i;
        Mem m;
        m.base = static_cast<uint8_t*>(args_[i].ptr);
        m.size = n * b.dtype().element_bytes();
        m.space = Space::kGlobal;
        m.name = b.name();
        global_[b.get()] = m;
      }
    threads_ = 1;
    std::vector<int64_t> tdims;
    for (const Expr& t : k->threads) {
      tdims.push_back(eval(t, 0).i);
      threads_ *= tdims.back();
    }
    std::vector<int64_t> grid;
    for (const Expr& g : k->grid) grid.push_back(eval(g, 0).i);
    while (grid.size() < 3) grid.push_back(1);
    smem_bytes_ = attr_int(k->attrs, "dyn_smem_bytes", 0);
    int64_t panel = attr_int(k->attrs, "use_swizzle_panel", 0);
    bool row_order = attr_str(k->attrs, "use_swizzle_order", "row") == "row";
    for (int64_t z = 0; z < grid[2]; ++z)
      for (int64_t y = 0; y < grid[1]; ++y)
        for (int64_t x = 0; x < grid[0]; ++x) {
          int64_t bx = x, by = y;
          if (panel > 0 && k->block_vars.size() >= 2) rasterize(panel, row_order, grid, x, y, &bx, &by);
          int64_t ids[3] = {bx, by, z};
          for (size_t i = 0; i < k->block_vars.size(); ++i) {
            Val v;
            v.i = ids[i];
            uniform_[k->block_vars[i].get()] = v;
          }
          run_block(*k, tdims);
          ++report_.blocks_run;
        }
    return report_;
  }

 private:
  static void rasterize(int64_t panel, bool row, const std::vector<int64_t>& g, int64_t x, int64_t y, int64_t* bx,
                        int64_t* by) {
    int64_t gx = g[0], gy = g[1], pid = y * gx + x;
    if (row) {
      int64_t group = panel * gx, first = (pid / group) * panel, rows = std::min(gy - first, panel);
      *by = first + (pid % group) % rows;
      *bx = (pid % group) / rows;
    } else {
      int64_t group = panel * gy, first = (pid / group) * panel, cols = std::min(gx - first, panel);
      *bx = first + (pid % group) % cols;
      *by = (pid % group) / cols;
    }
  }

  static const KernelLaunchNode* find_kernel(const Stmt& s) {
    if (const auto* k = s.as<KernelLaunchNode>()) return k;
    if (const auto* seq = s.as<SeqStmtNode>())
      for (const Stmt& x : seq->seq)
        if (const KernelLaunchNode* k = find_kernel(x)) return k;
    if (const auto* l = s.as<LetStmtNode>()) return find_kernel(l->body);
    throw_error<NotImplemented>("emulator: no T.Kernel found");
  }

  void run_block(const KernelLaunchNode& k, const std::vector<int64_t>& tdims) {
    smem_.assign(static_cast<size_t>(smem_bytes_ + 1), 0xcd);
    bytes_.assign(static_cast<size_t>(smem_bytes_ + 1), ByteState());
    epoch_ = 0;
    groups_.assign(static_cast<size_t>(threads_), {});
    open_.assign(static_cast<size_t>(threads_), {});
    vars_.clear();
    for (size_t i = 0; i < k.thread_vars.size(); ++i) {
      std::vector<Val> vals(static_cast<size_t>(threads_));
      int64_t stride = 1;
      for (size_t j = 0; j < i; ++j) stride *= tdims[j];
      for (int64_t t = 0; t < threads_; ++t) vals[static_cast<size_t>(t)].i = (t / stride) % tdims[i];
      vars_[k.thread_vars[i].get()] = vals;
    }
    std::vector<char> all(static_cast<size_t>(threads_), 1);
    exec(k.body, all);
  }

  // ---- variables --------------------------------------------------------------------------
  Val var_value(const VarNode* v, int64_t t) {
    auto it = vars_.find(v);
    if (it != vars_.end()) return it->second[static_cast<size_t>(t)];
    auto u = uniform_.find(v);
    if (u != uniform_.end()) return u->second;
    throw_error<Error>("emulator: unbound variable '", v->name, "'");
  }

  // ---- memory -----------------------------------------------------------------------------
  Mem mem_of(const Buffer& b, int64_t t) {
    if (auto it = global_.find(b.get()); it != global_.end()) return it->second;
    if (auto it = shared_.find(b.get()); it != shared_.end()) return it->second;
    if (auto it = local_.find(b.get()); it != local_.end()) {
      Mem m;
      auto& store = it->second[static_cast<size_t>(t)];
      m.base = store.data();
      m.size = static_cast<int64_t>(store.size());
      m.space = Space::kLocal;
      m.name = b.name();
      return m;
    }
    throw_error<Error>("emulator: buffer '", b.name(), "' is not allocated");
  }

  int64_t flat_index(const Buffer& b, const std::vector<Expr>& idx, int64_t t) {
    if (idx.size() == 1) return eval(idx[0], t).i;
    std::vector<Expr> strides = b.effective_strides();
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += eval(idx[d], t).i * eval(strides[d], t).i;
    return off;
  }

  void check_range(const Mem& m, int64_t off, int64_t n, const char* what) {
    if (off < 0 || off + n > m.size)
      throw_error<RuntimeError>("emulator: out-of-bounds ", what, " of '", m.name, "' at byte ", off, " (+", n, ") of ",
                                m.size);
  }

  void race(const std::string& msg) {
    if (report_.races.size() < 20) report_.races.push_back(msg);
  }

  void shared_read(const Mem& m, int64_t off, int64_t n, int64_t t) {
    if (m.space != Space::kShared) return;
    int64_t base = m.base - smem_.data() + off;
    for (int64_t b = base; b < base + n; ++b) {
      ByteState& s = bytes_[static_cast<size_t>(b)];
      if (s.pending_async)
        race("thread " + std::to_string(t) + " reads '" + m.name + "' (shared byte " + std::to_string(b) +
             ") before the cp.async writing it was waited for");
      else if (s.w_epoch == epoch_ && s.w_thread != t)
        race("thread " + std::to_string(t) + " reads '" + m.name + "' (shared byte " + std::to_string(b) +
             ") written by thread " + std::to_string(s.w_thread) + " without a barrier in between");
      if (s.r_epoch == epoch_) {
        if (s.r_thread != t) s.r_multi = true;
      } else {
        s.r_epoch = epoch_;
        s.r_thread = static_cast<int32_t>(t);
        s.r_multi = t < 0;
      }
    }
  }

  void shared_write(const Mem& m, int64_t off, int64_t n, int64_t t, bool async) {
    if (m.space != Space::kShared) return;
    int64_t base = m.base - smem_.data() + off;
    for (const auto& [lo, hi] : wgmma_inflight_)
      if (base < hi && lo < base + n)
        race("thread " + std::to_string(t) + " writes '" + m.name + "' (shared bytes " + std::to_string(base) + "+" +
             std::to_string(n) + ") that an in-flight wgmma still reads");
    for (int64_t b = base; b < base + n; ++b) {
      ByteState& s = bytes_[static_cast<size_t>(b)];
      if (s.r_epoch == epoch_ && (s.r_multi || s.r_thread != t))
        race("thread " + std::to_string(t) + " writes '" + m.name + "' (shared byte " + std::to_string(b) +
             ") that other threads read without a barrier in between");
      else if (s.w_epoch == epoch_ && s.w_thread != t && !s.pending_async)
        race("threads " + std::to_string(t) + " and " + std::to_string(s.w_thread) + " write '" + m.name +
             "' (shared byte " + std::to_string(b) + ") without a barrier in between");
      s.w_thread = static_cast<int32_t>(t);
      s.w_epoch = epoch_;
      s.pending_async = async;
    }
  }

  Val load(const Buffer& b, const std::vector<Expr>& idx, int64_t t) {
    Mem m = mem_of(b, t);
    int64_t eb = b.dtype().element_bytes();
    int64_t off = flat_index(b, idx, t) * eb;
    check_range(m, off, eb, "read");
    shared_read(m, off, eb, t);
    return decode(b.dtype(), m.base + off);
  }

  void store(const Buffer& b, const std::vector<Expr>& idx, const Val& v, int64_t t) {
    Mem m = mem_of(b, t);
    int64_t eb = b.dtype().element_bytes();
    int64_t off = flat_index(b, idx, t) * eb;
    check_range(m, off, eb, "write");
    shared_write(m, off, eb, t, false);
    encode(b.dtype(), v, m.base + off);
  }

  Val address(const Expr& e, int64_t t) {
    const auto* c = e.as<CallNode>();
    TL_ICHECK(c && c->op == "cuda.address_of");
    const auto* l = c->args[0].as<BufferLoadNode>();
    Val v;
    v.mem = mem_of(l->buffer, t);
    v.off = flat_index(l->buffer, l->indices, t) * l->buffer.dtype().element_bytes();
    return v;
  }
  DataType address_type(const Expr& e) { return e.as<CallNode>()->args[0].as<BufferLoadNode>()->buffer.dtype(); }

  // ---- expressions ------------------------------------------------------------------------
  Val eval(const Expr& e, int64_t t) {
    DataType dt = e.dtype();
    switch (e.kind()) {
      case ExprKind::kIntImm: {
        Val v;
        v.i = e.as<IntImmNode>()->value;
        return v;
      }
      case ExprKind::kFloatImm: {
        Val v;
        v.f = round_to(dt, e.as<FloatImmNode>()->value);
        return v;
      }
      case ExprKind::kVar: return var_value(e.as<VarNode>(), t);
      case ExprKind::kBufferLoad: {
        const auto* l = e.as<BufferLoadNode>();
        return load(l->buffer, l->indices, t);
      }
      case ExprKind::kCast: {
        const auto* c = e.as<CastNode>();
        Val x = eval(c->value, t);
        DataType from = c->value.dtype();
        Val v;
        if (dt.is_float()) v.f = round_to(dt, from.is_float() ? x.f : static_cast<double>(x.i));
        else if (dt.is_bool()) v.i = from.is_float() ? (x.f != 0) : (x.i != 0);
        else v.i = wrap_int(dt, from.is_float() ? static_cast<int64_t>(std::trunc(x.f)) : x.i);
        return v;
      }
      case ExprKind::kSelect: {
        const auto* s = e.as<SelectNode>();
        return eval(s->cond, t).i ? eval(s->true_value, t) : eval(s->false_value, t);
      }
      case ExprKind::kUnary: {
        const auto* u = e.as<UnaryNode>();
        Val a = eval(u->a, t), v;
        if (u->op == UnOp::kNeg) {
          if (dt.is_float()) v.f = -a.f;
          else v.i = wrap_int(dt, -a.i);
        } else if (u->op == UnOp::kNot) {
          v.i = !a.i;
        } else {
          v.i = wrap_int(dt, ~a.i);
        }
        return v;
      }
      case ExprKind::kBinary: return binary(e.as<BinaryNode>(), t);
      case ExprKind::kCall: return call(e.as<CallNode>(), t);
      default: throw_error<NotImplemented>("emulator: expression ", to_string(e));
    }
  }

  Val binary(const BinaryNode* b, int64_t t) {
    DataType at = b->a.dtype();
    Val x = eval(b->a, t), y = eval(b->b, t), v;
    if (binop_is_logical(b->op)) {
      v.i = b->op == BinOp::kAnd ? (x.i && y.i) : (x.i || y.i);
      return v;
    }
    if (at.is_float()) {
      double a = x.f, c = y.f, r = 0;
      switch (b->op) {
        case BinOp::kAdd: r = a + c; break;
        case BinOp::kSub: r = a - c; break;
        case BinOp::kMul: r = a * c; break;
        case BinOp::kDiv: r = a / c; break;
        case BinOp::kMod: r = std::fmod(a, c); break;
        case BinOp::kFloorDiv: r = std::floor(a / c); break;
        case BinOp::kFloorMod: r = a - std::floor(a / c) * c; break;
        case BinOp::kMin: r = std::isnan(a) ? c : std::isnan(c) ? a : std::min(a, c); break;
        case BinOp::kMax: r = std::isnan(a) ? c : std::isnan(c) ? a : std::max(a, c); break;
        case BinOp::kEQ: v.i = a == c; return v;
        case BinOp::kNE: v.i = a != c; return v;
        case BinOp::kLT: v.i = a < c; return v;
        case BinOp::kLE: v.i = a <= c; return v;
        case BinOp::kGT: v.i = a > c; return v;
        case BinOp::kGE: v.i = a >= c; return v;
        default: throw_error<NotImplemented>("emulator: float ", binop_name(b->op));
      }
      v.f = round_to(at, r);
      return v;
    }
    int64_t a = x.i, c = y.i, r = 0;
    auto fdiv = [](int64_t p, int64_t q) {
      int64_t d = p / q;
      return (p % q != 0 && ((p < 0) != (q < 0))) ? d - 1 : d;
    };
    switch (b->op) {
      case BinOp::kAdd: r = a + c; break;
      case BinOp::kSub: r = a - c; break;
      case BinOp::kMul: r = a * c; break;
      case BinOp::kDiv:
        if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
        r = a / c;
        break;
      case BinOp::kMod:
        if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
        r = a % c;
        break;
      case BinOp::kFloorDiv:
        if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
        r = fdiv(a, c);
        break;
      case BinOp::kFloorMod:
        if (c == 0) throw_error<RuntimeError>("emulator: integer division by zero");
        r = a - fdiv(a, c) * c;
        break;
      case BinOp::kMin: r = std::min(a, c); break;
      case BinOp::kMax: r = std::max(a, c); break;
      case BinOp::kEQ: v.i = a == c; return v;
      case BinOp::kNE: v.i = a != c; return v;
      case BinOp::kLT: v.i = a < c; return v;
      case BinOp::kLE: v.i = a <= c; return v;
      case BinOp::kGT: v.i = a > c; return v;
      case BinOp::kGE: v.i = a >= c; return v;
      case BinOp::kBitAnd: r = a & c; break;
      case BinOp::kBitOr: r = a | c; break;
      case BinOp::kBitXor: r = a ^ c; break;
      case BinOp::kShl: r = a << c; break;
      case BinOp::kShr: r = a >> c; break;
      default: throw_error<NotImplemented>("emulator: integer ", binop_name(b->op));
    }
    v.i = wrap_int(b->dtype, r);
    return v;
  }

  Val call(const CallNode* c, int64_t t) {
    DataType dt = c->dtype;
    const std::string& op = c->op;
    auto f1 = [&](double (*fn)(double)) {
      Val v;
      Val a = eval(c->args[0], t);
      v.f = round_to(dt, fn(c->args[0].dtype().is_float() ? a.f : static_cast<double>(a.i)));
      return v;
    };
    if (op == "exp" || op == "__exp") return f1([](double x) { return std::exp(x); });
    if (op == "exp2") return f1([](double x) { return std::exp2(x); });
    if (op == "log" || op == "__log") return f1([](double x) { return std::log(x); });
    if (op == "log2") return f1([](double x) { return std::log2(x); });
    if (op == "sqrt") return f1([](double x) { return std::sqrt(x); });
    if (op == "rsqrt") return f1([](double x) { return 1.0 / std::sqrt(x); });
    if (op == "tanh") return f1([](double x) { return std::tanh(x); });
    if (op == "sigmoid") return f1([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
    if (op == "sin" || op == "__sin") return f1([](double x) { return std::sin(x); });
    if (op == "cos" || op == "__cos") return f1([](double x) { return std::cos(x); });
    if (op == "floor") return f1([](double x) { return std::floor(x); });
    if (op == "ceil") return f1([](double x) { return std::ceil(x); });
    if (op == "round") return f1([](double x) { return std::nearbyint(x); });
    if (op == "trunc") return f1([](double x) { return std::trunc(x); });
    if (op == "abs") {
      Val a = eval(c->args[0], t), v;
      if (dt.is_float()) v.f = std::fabs(a.f);
      else v.i = a.i < 0 ? -a.i : a.i;
      return v;
    }
    if (op == "pow") {
      Val v;
      v.f = round_to(dt, std::pow(eval(c->args[0], t).f, eval(c->args[1], t).f));
      return v;
    }
    if (op == "cuda.address_of") return address(make_call(dt, op, c->args), t);
    throw_error<NotImplemented>("emulator: call '", op, "'");
  }

  // ---- statements -------------------------------------------------------------------------
  void exec(const Stmt& s, const std::vector<char>& act) {
    if (!s.defined()) return;
    switch (s.kind()) {
      case StmtKind::kSeq:
        for (const Stmt& x : s.as<SeqStmtNode>()->seq) exec(x, act);
        return;
      case StmtKind::kAttr: {
        const auto* a = s.as<AttrStmtNode>();
        if (a->key == "smem_offset") smem_offset_[a->body.as<AllocateNode>()->buffer.get()] = a->value.as_int();
        exec(a->body, act);
        return;
      }
      case StmtKind::kAllocate: {
        const auto* a = s.as<AllocateNode>();
        const Buffer& b = a->buffer;
        int64_t n = b.dtype().element_bytes();
        for (const Expr& e : b.shape()) n *= get_const_int(e, "buffer size");
        if (b.scope() == MemScope::kShared) {
          int64_t off = smem_offset_.at(b.get());
          if (off + n > smem_bytes_)
            throw_error<RuntimeError>("emulator: shared buffer '", b.name(), "' exceeds the planned block");
          Mem m;
          m.base = smem_.data() + off;
          m.size = n;
          m.space = Space::kShared;
          m.name = b.name();
          shared_[b.get()] = m;
          exec(a->body, act);
          shared_.erase(b.get());
        } else {
          local_[b.get()] = std::vector<std::vector<uint8_t>>(static_cast<size_t>(threads_),
                                                              std::vector<uint8_t>(static_cast<size_t>(n), 0xcd));
          exec(a->body, act);
          local_.erase(b.get());
        }
        return;
      }
      case StmtKind::kLet: {
        const auto* l = s.as<LetStmtNode>();
        std::vector<Val> vals(static_cast<size_t>(threads_));
        for (int64_t t = 0; t < threads_; ++t)
          if (act[static_cast<size_t>(t)]) vals[static_cast<size_t>(t)] = eval(l->value, t);
        auto saved = vars_.find(l->var.get()) != vars_.end() ? vars_[l->var.get()] : std::vector<Val>();
        vars_[l->var.get()] = vals;
        exec(l->body, act);
        if (saved.empty()) vars_.erase(l->var.get());
        else vars_[l->var.get()] = saved;
        return;
      }
      case StmtKind::kFor: {
        const auto* f = s.as<ForNode>();
        int64_t first = -1;
        for (int64_t t = 0; t < threads_; ++t)
          if (act[static_cast<size_t>(t)]) {
            first = t;
            break;
          }
        if (first < 0) return;
        int64_t mn = eval(f->min, first).i, ext = eval(f->extent, first).i;
        for (int64_t t = 0; t < threads_; ++t)
          if (act[static_cast<size_t>(t)] && (eval(f->min, t).i != mn || eval(f->extent, t).i != ext))
            throw_error<NotImplemented>("emulator: a loop whose bounds differ between threads");
        std::vector<Val> vals(static_cast<size_t>(threads_));
        for (int64_t i = mn; i < mn + ext; ++i) {
          for (Val& v : vals) v.i = i;
          vars_[f->var.get()] = vals;
          exec(f->body, act);
        }
        vars_.erase(f->var.get());
        return;
      }
      case StmtKind::kIf: {
        const auto* i = s.as<IfThenElseNode>();
        std::vector<char> yes(act.size(), 0), no(act.size(), 0);
        bool any_yes = false, any_no = false;
        for (int64_t t = 0; t < threads_; ++t) {
          if (!act[static_cast<size_t>(t)]) continue;
          bool c = eval(i->cond, t).i != 0;
          (c ? yes : no)[static_cast<size_t>(t)] = 1;
          (c ? any_yes : any_no) = true;
        }
        if (any_yes) exec(i->then_case, yes);
        if (any_no && i->else_case.defined()) exec(i->else_case, no);
        return;
      }
      case StmtKind::kStore: {
        const auto* st = s.as<BufferStoreNode>();
        if (const auto* c = st->value.as<CallNode>(); c && (c->op == "cuda.call" || c->op == "cuda.call_sync")) {
          collective_store(st, c, act);
          return;
        }
        for (int64_t t = 0; t < threads_; ++t)
          if (act[static_cast<size_t>(t)]) store(st->buffer, st->indices, eval(st->value, t), t);
        return;
      }
      case StmtKind::kEvaluate: {
        const auto* c = s.as<EvaluateNode>()->value.as<CallNode>();
        if (!c) return;
        evaluate(c, act, s->span);
        return;
      }
      case StmtKind::kLoopControl: throw_error<NotImplemented>("emulator: break / continue");
      default: throw_error<NotImplemented>("emulator: statement ", to_string(s));
    }
  }

  void barrier(const std::vector<char>& act, const char* what) {
    for (char a : act)
      if (!a) throw_error<RuntimeError>("emulator: ", what, " reached by only some threads of the block (a hang on the GPU)");
    ++epoch_;
  }

  void evaluate(const CallNode* c, const std::vector<char>& act, const Span& span) {
    const std::string& op = c->op;
    if (op == "tl.sync_threads") return barrier(act, "__syncthreads()");
    if (op == "cuda.cp_async_commit") {
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)]) {
          groups_[static_cast<size_t>(t)].push_back(open_[static_cast<size_t>(t)]);
          open_[static_cast<size_t>(t)].clear();
        }
      return;
    }
    if (op == "cuda.cp_async_wait") {
      int64_t keep = get_const_int(c->args[0], "wait count");
      for (int64_t t = 0; t < threads_; ++t) {
        if (!act[static_cast<size_t>(t)]) continue;
        auto& gs = groups_[static_cast<size_t>(t)];
        while (static_cast<int64_t>(gs.size()) > keep) {
          for (auto& [b, n] : gs.front())
            for (int64_t x = b; x < b + n; ++x) {
              bytes_[static_cast<size_t>(x)].pending_async = false;
              bytes_[static_cast<size_t>(x)].w_epoch = epoch_;
            }
          gs.erase(gs.begin());
        }
      }
      return;
    }
    if (op == "cuda.copy_vec" || op == "cuda.copy_vec_zfill" || op == "cuda.cp_async") {
      bool async = op == "cuda.cp_async";
      for (int64_t t = 0; t < threads_; ++t) {
        if (!act[static_cast<size_t>(t)]) continue;
        Val dst = address(c->args[0], t), src = address(c->args[1], t);
        int64_t n = get_const_int(c->args[2], "copy size");
        bool valid = c->args.size() < 4 || eval(c->args[3], t).i != 0;
        if (dst.off % n || (valid && src.off % n && src.mem.space != Space::kGlobal))
          throw_error<RuntimeError>("emulator: misaligned ", n, "-byte copy ('", src.mem.name, "' -> '", dst.mem.name,
                                    "')");
        if (valid && src.mem.space == Space::kGlobal &&
            (reinterpret_cast<uintptr_t>(src.mem.base) + static_cast<uintptr_t>(src.off)) % static_cast<uintptr_t>(n))
          throw_error<RuntimeError>("emulator: misaligned ", n, "-byte read of '", src.mem.name, "'");
        check_range(dst.mem, dst.off, n, "vector write");
        if (valid) {
          check_range(src.mem, src.off, n, "vector read");
          shared_read(src.mem, src.off, n, t);
          std::memmove(dst.mem.base + dst.off, src.mem.base + src.off, static_cast<size_t>(n));
        } else {
          std::memset(dst.mem.base + dst.off, 0, static_cast<size_t>(n));
        }
        shared_write(dst.mem, dst.off, n, t, async);
        if (async && dst.mem.space == Space::kShared)
          open_[static_cast<size_t>(t)].push_back({dst.mem.base - smem_.data() + dst.off, n});
      }
      return;
    }
    if (op == "cuda.copy_cast") {
      DataType dt = address_type(c->args[0]), st = address_type(c->args[1]);
      int64_t n = get_const_int(c->args[2], "copy length");
      for (int64_t t = 0; t < threads_; ++t) {
        if (!act[static_cast<size_t>(t)]) continue;
        Val dst = address(c->args[0], t), src = address(c->args[1], t);
        int64_t ds = n * dt.element_bytes(), ss = n * st.element_bytes();
        check_range(dst.mem, dst.off, ds, "vector write");
        check_range(src.mem, src.off, ss, "vector read");
        shared_read(src.mem, src.off, ss, t);
        shared_write(dst.mem, dst.off, ds, t, false);
        for (int64_t k = 0; k < n; ++k) {
          Val v = decode(st, src.mem.base + src.off + k * st.element_bytes());
          Val o;
          if (dt.is_float()) o.f = round_to(dt, st.is_float() ? v.f : static_cast<double>(v.i));
          else o.i = wrap_int(dt, st.is_float() ? static_cast<int64_t>(std::trunc(v.f)) : v.i);
          encode(dt, o, dst.mem.base + dst.off + k * dt.element_bytes());
        }
      }
      return;
    }
    if (op == "tl.device_assert") {
      for (int64_t t = 0; t < threads_; ++t)
        if (act[static_cast<size_t>(t)] && eval(c->args[0], t).i == 0 && report_.device_assert.empty()) {
          const auto* m = c->args.size() > 1 ? c->args[1].as<StringImmNode>() : nullptr;
          report_.device_assert = std::string("device_assert failed at ") + span.str() + " (thread " +
                                  std::to_string(t) + ")" + (m ? ": " + m->value : "");
        }
      return;
    }
    if (op == "tl.printf" || op == "tl.print_scalar") return;
    if (op == "cuda.call" || op == "cuda.call_sync") {
      const std::string callee = c->args[0].as<StringImmNode>()->value;
      Template tp = parse_template(callee);
      if (tp.name.rfind("tl::gemm_", 0) == 0) return gemm(c, tp, act);
      if (tp.name.rfind("tl::wgmma_gemm_", 0) == 0) return wgmma_gemm(c, tp, act);
      if (tp.name == "tl::wgmma_drain") {
        wgmma_inflight_.clear();
        return;
      }
      if (tp.name == "tl::atomic_add") {
        for (int64_t t = 0; t < threads_; ++t) {
          if (!act[static_cast<size_t>(t)]) continue;
          Val p = address(c->args[1], t);
          DataType at = address_type(c->args[1]);
          check_range(p.mem, p.off, at.element_bytes(), "atomic");
          Val old = decode(at, p.mem.base + p.off), add = eval(c->args[2], t), out;
          if (at.is_float()) out.f = round_to(at, old.f + add.f);
          else out.i = wrap_int(at, old.i + add.i);
          encode(at, out, p.mem.base + p.off);
        }
        return;
      }
      if (tp.name == "tl::print_element" || tp.name == "tl::print_value") return;
      throw_error<NotImplemented>("emulator: device function ", tp.name);
    }
    throw_error<NotImplemented>("emulator: builtin ", op);
  }

  void collective_store(const BufferStoreNode* st, const CallNode* c, const std::vector<char>& act) {
    const std::string callee = c->args[0].as<StringImmNode>()->value;
    Template tp = parse_template(callee);
    if (tp.name != "tl::allreduce") throw_error<NotImplemented>("emulator: value-returning call ", tp.name);
    const DataType t = c->dtype;
    const std::string& opname = tp.args[0];
    int64_t extent = std::stoll(tp.args[1]), stride = std::stoll(tp.args[2]);
    std::vector<Val> in(static_cast<size_t>(threads_));
    for (int64_t x = 0; x < threads_; ++x)
      if (act[static_cast<size_t>(x)]) in[static_cast<size_t>(x)] = eval(c->args[1], x);
    if (c->op == "cuda.call_sync") {
      for (char a : act)
        if (!a) throw_error<RuntimeError>("emulator: a block-wide reduction reached by only some threads");
      // ws[tid] = v; __syncthreads(); ... read ...; __syncthreads()
      if (c->args.size() > 3)
        for (int64_t x = 0; x < threads_; ++x) {
          Val ws = address(c->args[3], x);
          shared_write(ws.mem, ws.off + x * t.element_bytes(), t.element_bytes(), x, false);
        }
      ++epoch_;
    }
    for (int64_t x = 0; x < threads_; ++x) {
      if (!act[static_cast<size_t>(x)]) continue;
      int64_t base = x - ((x / stride) % extent) * stride;
      Val r = in[static_cast<size_t>(base)];
      for (int64_t i = 1; i < extent; ++i) {
        const Val& o = in[static_cast<size_t>(base + i * stride)];
        if (opname == "tl::SumOp") {
          if (t.is_float()) r.f = round_to(t, r.f + o.f);
          else r.i = wrap_int(t, r.i + o.i);
        } else if (opname == "tl::MaxOp") {
          if (t.is_float()) r.f = std::isnan(r.f) ? o.f : std::isnan(o.f) ? r.f : std::max(r.f, o.f);
          else r.i = std::max(r.i, o.i);
        } else {
          if (t.is_float()) r.f = std::isnan(r.f) ? o.f : std::isnan(o.f) ? r.f : std::min(r.f, o.f);
          else r.i = std::min(r.i, o.i);
        }
      }
      store(st->buffer, st->indices, r, x);
    }
    if (c->op == "cuda.call_sync") ++epoch_;
  }

  // C += op(A) op(B) for every thread's accumulators, through the contract of include/tl/cuda/gemm.h.
  void gemm(const CallNode* c, const Template& tp, const std::vector<char>& act) {
    auto I = [&](size_t i) { return std::stoll(tp.args[i]); };
    auto B_ = [&](size_t i) { return tp.args[i] == "true"; };
    const std::string kind = tp.name.substr(std::string("tl::gemm_").size());
    int64_t M = I(0), N = I(1), K = I(2), WM = I(3), WN = I(4);
    bool ta = false, tb = false, sa = false, sb = false;
    int64_t lda = 0, ldb = 0;
    size_t ti = 0;
    if (kind == "ss") {
      ta = B_(5), tb = B_(6), sa = B_(7), sb = B_(8), lda = I(9), ldb = I(10);
      ti = 11;
    } else if (kind == "rs") {
      tb = B_(5), sb = B_(6), ldb = I(7);
      ti = 8;
    } else {
      ta = B_(5), sa = B_(6), lda = I(7);
      ti = 8;
    }
    DataType at = type_of_name(tp.args[ti]), bt = type_of_name(tp.args[ti + 1]), ct = type_of_name(tp.args[ti + 2]);
    const int64_t kk = at.element_bytes() == 2 ? 16 : at.element_bytes() == 4 ? 8 : 32;
    const int64_t kp = 4 / at.element_bytes();
    const int64_t MT = M / WM / 16, NT = N / WN / 8, KT = K / kk;
    int64_t first = -1;
    for (int64_t t = 0; t < threads_; ++t)
      if (act[static_cast<size_t>(t)]) {
        first = t;
        break;
      }
    if (first < 0) return;
    for (char a : act)
      if (!a) throw_error<RuntimeError>("emulator: T.gemm executed by only some threads (mma.sync needs whole warps)");
    // Operand matrices, A[m][k] and B[k][n].
    std::vector<double> A(static_cast<size_t>(M * K), 0.0), Bm(static_cast<size_t>(K * N), 0.0);
    auto tile_off = [](int64_t row, int64_t col, int64_t cols, bool swz, int64_t eb) {
      if (!swz) return row * cols + col;
      int64_t chunk = 16 / eb;
      if ((cols * eb) % 128 == 0) return row * cols + (col ^ ((row & 7) * chunk));
      int64_t flat = row * cols + col, phase = 128 / eb;
      return flat ^ (((flat / phase) & 7) * chunk);
    };
    auto read_shared = [&](const Expr& ptr, DataType t, int64_t row, int64_t col, int64_t cols, bool swz) {
      Val p = address(ptr, first);
      int64_t off = p.off + tile_off(row, col, cols, swz, t.element_bytes()) * t.element_bytes();
      check_range(p.mem, off, t.element_bytes(), "gemm operand read");
      shared_read(p.mem, off, t.element_bytes(), -2);
      Val v = decode(t, p.mem.base + off);
      return t.is_float() ? v.f : static_cast<double>(v.i);
    };
    // float operands: gemm.h splits each into two tf32 parts (3xTF32), about fp32-accurate.
    auto tf32 = [&](DataType, double v) { return v; };
    if (kind == "rs") {
      for (int64_t t = 0; t < threads_; ++t) {
        int64_t warp = t / 32, lane = t % 32, g = lane / 4, tg = lane % 4;
        if (warp >= WM * WN) continue;
        int64_t wm = warp / WN;
        Val p = address(c->args[1], t);
        for (int64_t ri = 0; ri < MT * KT * (kk / 2); ++ri) {
          int64_t tile = ri / (kk / 2), within = ri % (kk / 2), kt = tile % KT, mt = tile / KT;
          int64_t pr = within / kp, e = within % kp, rh = pr % 2, kh = pr / 2;
          int64_t row = wm * (M / WM) + mt * 16 + g + 8 * rh, col = kt * kk + tg * kp + e + 4 * kp * kh;
          Val v = decode(at, p.mem.base + p.off + ri * at.element_bytes());
          A[static_cast<size_t>(row * K + col)] = tf32(at, at.is_float() ? v.f : static_cast<double>(v.i));
        }
      }
    } else {
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k)
          A[static_cast<size_t>(m * K + k)] =
              tf32(at, ta ? read_shared(c->args[1], at, k, m, lda, sa) : read_shared(c->args[1], at, m, k, lda, sa));
    }
    if (kind == "sr") {
      for (int64_t t = 0; t < threads_; ++t) {
        int64_t warp = t / 32, lane = t % 32, g = lane / 4, tg = lane % 4;
        if (warp >= WM * WN) continue;
        int64_t wn = warp % WN;
        Val p = address(c->args[2], t);
        for (int64_t ri = 0; ri < NT * KT * (kk / 4); ++ri) {
          int64_t tile = ri / (kk / 4), within = ri % (kk / 4), kt = tile % KT, nt = tile / KT;
          int64_t pr = within / kp, e = within % kp;
          int64_t k = kt * kk + tg * kp + e + 4 * kp * pr, n = wn * (N / WN) + nt * 8 + g;
          Val v = decode(bt, p.mem.base + p.off + ri * bt.element_bytes());
          Bm[static_cast<size_t>(k * N + n)] = tf32(bt, bt.is_float() ? v.f : static_cast<double>(v.i));
        }
      }
    } else {
      for (int64_t k = 0; k < K; ++k)
        for (int64_t n = 0; n < N; ++n)
          Bm[static_cast<size_t>(k * N + n)] =
              tf32(bt, tb ? read_shared(c->args[2], bt, n, k, ldb, sb) : read_shared(c->args[2], bt, k, n, ldb, sb));
    }
    for (int64_t t = 0; t < threads_; ++t) {
      int64_t warp = t / 32, lane = t % 32, g = lane / 4, tg = lane % 4;
      if (warp >= WM * WN) continue;
      int64_t wm = warp / WN, wn = warp % WN;
      Val p = address(c->args[3], t);
      for (int64_t mt = 0; mt < MT; ++mt)
        for (int64_t nt = 0; nt < NT; ++nt)
          for (int64_t i = 0; i < 4; ++i) {
            int64_t row = wm * (M / WM) + mt * 16 + g + 8 * (i / 2), col = wn * (N / WN) + nt * 8 + 2 * tg + i % 2;
            int64_t r = 4 * (nt + NT * mt) + i;
            uint8_t* cp = p.mem.base + p.off + r * ct.element_bytes();
            check_range(p.mem, p.off + r * ct.element_bytes(), ct.element_bytes(), "accumulator");
            Val cv = decode(ct, cp);
            double acc = ct.is_float() ? cv.f : static_cast<double>(cv.i);
            for (int64_t k = 0; k < K; ++k)
              acc += A[static_cast<size_t>(row * K + k)] * Bm[static_cast<size_t>(k * N + col)];
            Val out;
            if (ct.is_float()) out.f = round_to(ct, acc);
            else out.i = wrap_int(ct, static_cast<int64_t>(acc));
            encode(ct, out, cp);
          }
    }
  }

  // C += op(A) op(B) through the contract of include/tl/cuda/wgmma.h: warpgroup partition, the
  // wgmma accumulator / register-A orders, and the gmma shared layouts (src/layout/swizzle.h),
  // re-derived here. Also checks that every shared operand starts at a multiple of 8 swizzled rows
  // of the block (the hardware swizzle works on absolute addresses).
  void wgmma_gemm(const CallNode* c, const Template& tp, const std::vector<char>& act) {
    auto I = [&](size_t i) { return std::stoll(tp.args[i]); };
    auto B_ = [&](size_t i) { return tp.args[i] == "true"; };
    const bool rs = tp.name == "tl::wgmma_gemm_rs";
    const int64_t M = I(0), N = I(1), K = I(2), WM = I(3), WN = I(4);
    bool ta = false, tb = false;
    int64_t swa = 0, swb = 0;
    size_t ti = 0;
    if (rs) {
      tb = B_(5), swb = I(6), ti = 7;
    } else {
      ta = B_(5), tb = B_(6), swa = I(7), swb = I(8), ti = 9;
    }
    // kPending = 1: this call's operand reads stay in flight until the next wgmma call (which
    // waits for them) or tl::wgmma_drain; the previous call's end here.
    const bool pending = tp.args.size() > ti + 1 && I(ti + 1) != 0;
    std::vector<std::pair<int64_t, int64_t>> reads;
    const DataType t = type_of_name(tp.args[ti]);
    const int64_t eb = t.element_bytes(), Mw = M / WM, Nw = N / WN, MI = Mw / 64, KS = K / 16;
    for (char a : act)
      if (!a) throw_error<RuntimeError>("emulator: T.gemm (wgmma) executed by only some threads");
    // Element (row, col) of a stored tile with `rows` rows in a gmma layout of width `sw` bytes.
    auto gmma_off = [&](int64_t row, int64_t col, int64_t rows, int64_t sw) {
      int64_t panel = sw / eb, chunk = 16 / eb;
      int64_t phase = (row / (128 / sw)) % (sw / 16);
      return (col / panel) * rows * panel + row * panel + ((col % panel) ^ (phase * chunk));
    };
    auto operand = [&](const Expr& ptr, int64_t sw, const char* what) {
      Val p = address(ptr, 0);
      if (p.mem.space != Space::kShared) throw_error<RuntimeError>("emulator: wgmma operand ", what, " not in shared memory");
      int64_t abs = (p.mem.base - smem_.data()) + p.off;
      if (abs % (8 * sw) != 0)
        throw_error<RuntimeError>("emulator: wgmma operand ", what, " ('", p.mem.name, "') starts at shared byte ", abs,
                                  ", not a multiple of ", 8 * sw, " (its ", sw, "-byte swizzle)");
      return p;
    };
    auto read = [&](const Val& p, int64_t off) {
      int64_t b = p.off + off * eb;
      check_range(p.mem, b, eb, "wgmma operand read");
      shared_read(p.mem, b, eb, -2);
      int64_t abs = (p.mem.base - smem_.data()) + b;
      if (!reads.empty() && reads.back().second == abs) reads.back().second += eb;
      else reads.push_back({abs, abs + eb});
      return decode(t, p.mem.base + b).f;
    };
    std::vector<double> A(static_cast<size_t>(M * K), 0.0), Bm(static_cast<size_t>(K * N), 0.0);
    if (rs) {
      for (int64_t th = 0; th < threads_; ++th) {
        int64_t wg = th / 128, w = (th % 128) / 32, lane = th % 32, g = lane / 4, tg = lane % 4;
        if (wg >= WM * WN) continue;
        Val p = address(c->args[1], th);
        for (int64_t ri = 0; ri < MI * KS * 8; ++ri) {
          int64_t tile = ri / 8, within = ri % 8, kt = tile % KS, mi = tile / KS;
          int64_t e = within % 2, rh = (within / 2) % 2, kh = within / 4;
          int64_t row = (wg / WN) * Mw + 64 * mi + 16 * w + g + 8 * rh, col = 16 * kt + 2 * tg + e + 8 * kh;
          check_range(p.mem, p.off + ri * eb, eb, "wgmma register operand");
          A[static_cast<size_t>(row * K + col)] = decode(t, p.mem.base + p.off + ri * eb).f;
        }
      }
    } else {
      Val p = operand(c->args[1], swa, "A");
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k)
          A[static_cast<size_t>(m * K + k)] = ta ? read(p, gmma_off(k, m, K, swa)) : read(p, gmma_off(m, k, M, swa));
    }
    Val pb = operand(c->args[2], swb, "B");
    for (int64_t k = 0; k < K; ++k)
      for (int64_t n = 0; n < N; ++n)
        Bm[static_cast<size_t>(k * N + n)] = tb ? read(pb, gmma_off(n, k, N, swb)) : read(pb, gmma_off(k, n, K, swb));
    for (int64_t th = 0; th < threads_; ++th) {
      int64_t wg = th / 128, w = (th % 128) / 32, lane = th % 32, g = lane / 4, tg = lane % 4;
      if (wg >= WM * WN) continue;
      Val p = address(c->args[3], th);
      for (int64_t mi = 0; mi < MI; ++mi)
        for (int64_t nt = 0; nt < Nw / 8; ++nt)
          for (int64_t i = 0; i < 4; ++i) {
            int64_t row = (wg / WN) * Mw + 64 * mi + 16 * w + g + 8 * (i / 2);
            int64_t col = (wg % WN) * Nw + 8 * nt + 2 * tg + i % 2;
            int64_t r = mi * (Nw / 2) + 4 * nt + i;
            check_range(p.mem, p.off + r * 4, 4, "accumulator");
            uint8_t* cp = p.mem.base + p.off + r * 4;
            double acc = decode(DataType::Float32(), cp).f;
            for (int64_t k = 0; k < K; ++k)
              acc += A[static_cast<size_t>(row * K + k)] * Bm[static_cast<size_t>(k * N + col)];
            Val out;
            out.f = round_to(DataType::Float32(), acc);
            encode(DataType::Float32(), out, cp);
          }
    }
    wgmma_inflight_.clear();
    if (pending) wgmma_inflight_ = std::move(reads);
  }

  const PrimFunc& f_;
  const std::vector<TLArg>& args_;
  EmulatorReport report_;
  int64_t threads_ = 1;
  int64_t smem_bytes_ = 0;
  std::vector<uint8_t> smem_;
  std::vector<ByteState> bytes_;
  int64_t epoch_ = 0;
  std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> groups_;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> open_;
  std::unordered_map<const VarNode*, std::vector<Val>> vars_;
  std::unordered_map<const VarNode*, Val> uniform_;
  std::unordered_map<const BufferNode*, Mem> global_, shared_;
  std::unordered_map<const BufferNode*, std::vector<std::vector<uint8_t>>> local_;
  std::unordered_map<const BufferNode*, int64_t> smem_offset_;
  std::vector<std::pair<int64_t, int64_t>> wgmma_inflight_;  // shared byte ranges an in-flight wgmma reads
};

}  // namespace

EmulatorReport emulate_cuda(const PrimFunc& lowered, const std::vector<TLArg>& args) {
  Emulator e(lowered, args);
  return e.run();
}

}  // namespace tl
