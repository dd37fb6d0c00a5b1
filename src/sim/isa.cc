#include "sim/isa.h"

#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"

namespace tl::sim {

bool mem_of_scope(MemScope s, Mem* out) {
  switch (s) {
    case MemScope::kGlobal: *out = Mem::kGM; return true;
    case MemScope::kL1: *out = Mem::kL1; return true;
    case MemScope::kUB: *out = Mem::kUB; return true;
    case MemScope::kL0A: *out = Mem::kL0A; return true;
    case MemScope::kL0B: *out = Mem::kL0B; return true;
    case MemScope::kL0C: *out = Mem::kL0C; return true;
    default: return false;
  }
}

CopyRoute copy_route(Mem src, Mem dst) {
  auto r = [](Pipe p, CopyPath c) { return CopyRoute{true, p, c}; };
  if (src == Mem::kGM && dst == Mem::kL1) return r(Pipe::kMTE2, CopyPath::kGmToL1);
  if (src == Mem::kGM && dst == Mem::kUB) return r(Pipe::kMTE2, CopyPath::kGmToUb);
  if (src == Mem::kUB && dst == Mem::kGM) return r(Pipe::kMTE3, CopyPath::kUbToGm);
  if (src == Mem::kL0C && dst == Mem::kGM) return r(Pipe::kFIX, CopyPath::kL0cToGm);
  if (src == Mem::kL1 && dst == Mem::kL0A) return r(Pipe::kMTE1, CopyPath::kL1ToL0A);
  if (src == Mem::kL1 && dst == Mem::kL0B) return r(Pipe::kMTE1, CopyPath::kL1ToL0B);
  if (src == Mem::kUB && dst == Mem::kUB) return r(Pipe::kV, CopyPath::kUbToUb);
  return {};
}

std::string legal_copy_list() {
  return "GM->L1 (MTE2), GM->UB (MTE2), UB->GM (MTE3), L0C->GM (FIX), L1->L0A (MTE1), L1->L0B (MTE1), "
         "UB->UB (V)";
}

std::string copy_alternative(Mem src, Mem dst) {
  if (src == Mem::kL0C && dst == Mem::kUB)
    return "L0C and UB are on different cores: copy L0C->GM (FIX) into a GM workspace, signal with "
           "T.set_cross_flag(\"fix\", id) / T.wait_cross_flag(id), then copy GM->UB (MTE2); Developer mode "
           "(TL_ASCEND_AUTO_CV_COMBINE) does this rewrite for you";
  if (src == Mem::kUB && dst == Mem::kL1)
    return "UB and L1 are on different cores: copy UB->GM (MTE3) into a GM workspace, signal with "
           "T.set_cross_flag(\"mte3\", id) / T.wait_cross_flag(id), then copy GM->L1 (MTE2)";
  if (src == Mem::kGM && (dst == Mem::kL0A || dst == Mem::kL0B))
    return "stage the tile through L1: GM->L1 (MTE2) then L1->L0A/L0B (MTE1)";
  if (src == Mem::kL1 && dst == Mem::kGM) return "L1 has no path to GM; write results from L0C (FIX) or UB (MTE3)";
  if (dst == Mem::kL0C) return "L0C is only written by the cube (T.mma / T.gemm_v0)";
  if (src == Mem::kL0C && dst != Mem::kGM) return "L0C is only read by the FIX pipe into GM";
  if (src == Mem::kGM && dst == Mem::kGM) return "GM->GM copies have no pipe: stage through UB (GM->UB, UB->GM)";
  return "use one of the legal pairs";
}

Mem region_mem(const TileOpNode& op, const BufferRegion& r) {
  Mem m;
  if (!mem_of_scope(r.buffer.scope(), &m))
    throw_error<SyntaxError>(op_error_prefix(op), "buffer '", r.buffer.name(), "' is in scope '",
                             scope_name(r.buffer.scope()),
                             "', which is not an Ascend memory; allocate it with T.alloc_L1 / T.alloc_L0A / "
                             "T.alloc_L0B / T.alloc_L0C / T.alloc_ub (or let scope inference place it)");
  return m;
}

static const std::set<std::string>& unary_ops() {
  static const std::set<std::string> s = {"exp",  "ln",   "log",  "abs",  "reciprocal", "sqrt", "rsqrt", "relu",
                                          "sigmoid", "silu", "sin", "cos", "neg", "exp2", "tanh"};
  return s;
}
static const std::set<std::string>& binary_ops() {
  static const std::set<std::string> s = {"add", "sub", "mul", "div", "max", "min", "pow",
                                          "bitwise_and", "bitwise_or", "bitwise_xor"};
  return s;
}

// The tile.<fn> operators that are one vector instruction.
static bool is_vector_fn(const std::string& fn) {
  static const std::set<std::string> other = {"axpy",       "cast",       "compare",    "select",   "transpose",
                                              "reduce_sum", "reduce_max", "reduce_min", "broadcast",
                                              "createvecindex", "gather"};
  return unary_ops().count(fn) || binary_ops().count(fn) || other.count(fn);
}

static bool is_vector_op(const TileOpNode& op) {
  const TileOp* def = find_tile_op(op);
  if (!def) return false;
  switch (def->kind()) {
    case TileOpKind::kFill:
    case TileOpKind::kReduce:
    case TileOpKind::kCumsum: return true;
    case TileOpKind::kElementwise: {
      const auto* e = dynamic_cast<const ElementwiseOp*>(def);
      return e && is_vector_fn(e->fn());
    }
    default: return false;
  }
}

std::string vector_op_name(const TileOpNode& op) {
  const TileOp* def = find_tile_op(op);
  const TileOpKind kind = def ? def->kind() : TileOpKind::kElementwise;
  if (kind == TileOpKind::kReduce) return "reduce_" + attr_str(op.attrs, "type", "sum");
  if (kind == TileOpKind::kFill) return "fill";
  if (kind == TileOpKind::kCumsum) return "cumsum";
  const auto* e = dynamic_cast<const ElementwiseOp*>(def);
  std::string n = e ? e->fn() : op.op;
  // A scalar second operand selects the cheaper tensor-scalar instruction (vadds, vmuls, ...).
  if (binary_ops().count(n) && op.args.size() >= 3 && op.args[2].is_expr()) return n + "s";
  if (n == "log") return "ln";
  return n;
}

OpClass classify_tile_op(const TileOpNode& op) {
  OpClass c;
  const std::string& name = op.op;
  const TileOp* def = find_tile_op(op);
  if (!def) throw_error<NotImplemented>(op_error_prefix(op), "not implemented: tile op '", name, "' on target ascend");
  const TileOpKind kind = def->kind();
  auto regions_on = [&](Mem want, const char* what) {
    for (auto& a : op.args)
      if (a.is_region() && region_mem(op, a.region) != want)
        throw_error<SyntaxError>(op_error_prefix(op), what, " operates on ", mem_name(want), " buffers, but '",
                                 a.region.buffer.name(), "' is in ", mem_name(region_mem(op, a.region)),
                                 want == Mem::kUB ? "; copy it into a T.alloc_ub buffer first" : "");
  };
  if (const auto* e = dynamic_cast<const ElementwiseOp*>(def); e && e->fn() == "reinterpretcast") {
    // No instruction: dst is given src's address by ascend_plan_memory (an alias of another dtype).
    if (op.args.size() != 2 || !op.args[0].is_region() || !op.args[1].is_region())
      throw_error<SyntaxError>(op_error_prefix(op), "expects (dst, src)");
    Mem d = region_mem(op, op.args[0].region), s = region_mem(op, op.args[1].region);
    if (d == Mem::kGM || s == Mem::kGM || d != s)
      throw_error<SyntaxError>(op_error_prefix(op), "T.reinterpretcast views an on-chip buffer as another dtype in the "
                               "same memory; '", op.args[0].region.buffer.name(), "' is in ", mem_name(d), " and '",
                               op.args[1].region.buffer.name(), "' in ", mem_name(s));
    c.cls = InstrClass::kMeta;
    c.core = mem_owner(d);
    return c;
  }
  if (is_annotation(kind)) {
    c.cls = InstrClass::kMeta;
    c.core_neutral = true;
    return c;
  }
  if (kind == TileOpKind::kPrint) {
    c.cls = InstrClass::kDebug;
    c.core_neutral = true;
    c.pipe = Pipe::kS;
    if (!op.args.empty() && op.args[0].is_region()) {
      Mem m = region_mem(op, op.args[0].region);
      if (m != Mem::kGM) {
        c.core = mem_owner(m);
        c.core_neutral = false;
      }
    }
    return c;
  }
  if (kind == TileOpKind::kCopy) {
    if (op.args.size() < 2 || !op.args[0].is_region() || !op.args[1].is_region())
      throw_error<SyntaxError>(op_error_prefix(op), "expects a source and a destination region");
    Mem s = region_mem(op, op.args[0].region), d = region_mem(op, op.args[1].region);
    CopyRoute r = copy_route(s, d);
    if (!r.legal)
      throw_error<SyntaxError>(op_error_prefix(op), "there is no copy from ", mem_name(s), " ('",
                               op.args[0].region.buffer.name(), "') to ", mem_name(d), " ('",
                               op.args[1].region.buffer.name(), "') on the Ascend NPU. Legal copies: ",
                               legal_copy_list(), ". ", copy_alternative(s, d), ".");
    c.cls = InstrClass::kCopy;
    c.pipe = r.pipe;
    c.path = r.path;
    c.core = (s == Mem::kUB || d == Mem::kUB) ? CoreKind::kAIV : CoreKind::kAIC;
    return c;
  }
  if (is_gemm_form(op, GemmForm::kMma)) {
    static const Mem want[3] = {Mem::kL0A, Mem::kL0B, Mem::kL0C};
    static const char* pos[3] = {"A", "B", "C"};
    if (op.args.size() != 3) throw_error<SyntaxError>(op_error_prefix(op), "expects (A_L0A, B_L0B, C_L0C)");
    for (int i = 0; i < 3; ++i) {
      if (!op.args[i].is_region()) throw_error<SyntaxError>(op_error_prefix(op), "operand ", pos[i], " must be a buffer");
      Mem m = region_mem(op, op.args[i].region);
      if (m != want[i])
        throw_error<SyntaxError>(op_error_prefix(op), "operand ", pos[i], " ('", op.args[i].region.buffer.name(),
                                 "') must be in ", mem_name(want[i]), ", found ", mem_name(m));
    }
    c.cls = InstrClass::kMma;
    c.pipe = Pipe::kM;
    c.core = CoreKind::kAIC;
    return c;
  }
  if (const auto* at = dynamic_cast<const AtomicOp*>(def); at && at->combine() == "add") {
    if (op.args.size() != 2 || !op.args[0].is_region())
      throw_error<SyntaxError>(op_error_prefix(op), "expects (dst, src)");
    if (!op.args[1].is_region())
      throw_error<NotImplemented>(op_error_prefix(op), "not implemented: scalar atomic_add on target ascend "
                                  "(accumulate a UB or L0C tile into GM instead)");
    Mem d = region_mem(op, op.args[0].region), s = region_mem(op, op.args[1].region);
    if (d != Mem::kGM || (s != Mem::kUB && s != Mem::kL0C))
      throw_error<SyntaxError>(op_error_prefix(op), "atomic add accumulates a UB tile (MTE3) or an L0C tile (FIX) "
                               "into GM; got ", mem_name(s), " -> ", mem_name(d));
    c.cls = InstrClass::kAtomicAdd;
    c.pipe = s == Mem::kUB ? Pipe::kMTE3 : Pipe::kFIX;
    c.path = s == Mem::kUB ? CopyPath::kUbToGm : CopyPath::kL0cToGm;
    c.core = s == Mem::kUB ? CoreKind::kAIV : CoreKind::kAIC;
    return c;
  }
  if (kind == TileOpKind::kFill) {
    if (op.args.empty() || !op.args[0].is_region()) throw_error<SyntaxError>(op_error_prefix(op), "expects a buffer");
    Mem m = region_mem(op, op.args[0].region);
    switch (m) {
      case Mem::kUB: c.cls = InstrClass::kVector; c.pipe = Pipe::kV; c.core = CoreKind::kAIV; return c;
      case Mem::kL1: c.cls = InstrClass::kFill; c.pipe = Pipe::kMTE2; c.core = CoreKind::kAIC; return c;
      case Mem::kL0A:
      case Mem::kL0B: c.cls = InstrClass::kFill; c.pipe = Pipe::kMTE1; c.core = CoreKind::kAIC; return c;
      case Mem::kL0C: c.cls = InstrClass::kFill; c.pipe = Pipe::kM; c.core = CoreKind::kAIC; return c;
      default:
        throw_error<SyntaxError>(op_error_prefix(op), "cannot fill a GM tensor ('", op.args[0].region.buffer.name(),
                                 "') directly: fill a UB tile and copy it out");
    }
  }
  if (is_vector_op(op)) {
    regions_on(Mem::kUB, ("T." + name).c_str());
    c.cls = InstrClass::kVector;
    c.pipe = Pipe::kV;
    c.core = CoreKind::kAIV;
    return c;
  }
  if (kind == TileOpKind::kGemm)  // gemm / gemm_v0: ascend_expand_gemm expands them
    throw_error<Error>(op_error_prefix(op), "internal error: T.", name, " reached the simulator unexpanded");
  throw_error<NotImplemented>(op_error_prefix(op), "not implemented: tile op '", name, "' on target ascend");
}

OpAccess tile_op_access(const TileOpNode& op) {
  OpAccess a;
  if (const TileOp* def = find_tile_op(op)) {
    AccessRegions e = def->effects(op);
    a.reads = std::move(e.reads);
    a.writes = std::move(e.writes);
    return a;
  }
  // Unknown op: destination first, sources after.
  bool first = true;
  for (const TileArg& arg : op.args) {
    if (!arg.is_region()) continue;
    (first ? a.writes : a.reads).push_back(arg.region);
    first = false;
  }
  return a;
}

bool is_ascend_sync_call(const std::string& op) {
  return op == "ascend.set_flag" || op == "ascend.wait_flag" || op == "ascend.pipe_barrier" ||
         op == "ascend.barrier_all" || op == "ascend.sync_all" || op == "ascend.set_cross_flag" ||
         op == "ascend.wait_cross_flag";
}

std::string describe_tile_op(const TileOpNode& op) {
  std::ostringstream os;
  os << "T." << op.op << "(";
  bool first = true;
  for (auto& a : op.args) {
    if (!first) os << ", ";
    first = false;
    if (a.is_region()) os << a.region.buffer.name();
    else os << to_string(a.expr);
  }
  os << ")";
  return os.str();
}

}  // namespace tl::sim
