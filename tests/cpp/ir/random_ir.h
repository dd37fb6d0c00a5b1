// Random IR for round-trip and equality tests. Nodes are mostly built directly (not through the
// folding make_* constructors), so trees such as `2 + 3`, `cast<int64>(5i64)` or `-(7)` occur,
// exactly as a pass that builds nodes by hand could produce them.
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace tl::testing {

class RandomIR {
 public:
  // `names` (when non-empty) is the pool every variable/buffer name is drawn from; repeated and
  // awkward names exercise the printer's renaming.
  explicit RandomIR(uint64_t seed, std::vector<std::string> names = {}, std::string prefix = "x")
      : rng_(seed), names_(std::move(names)), prefix_(std::move(prefix)) {}

  // Scalar variables and buffers in scope (also what parse_expr needs as its maps).
  std::vector<Var> vars;
  std::vector<Buffer> buffers;

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(double p = 0.5) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) { return v[uniform(0, static_cast<int>(v.size()) - 1)]; }

  std::string name() {
    if (!names_.empty() && coin(0.7)) return pick(names_);
    return prefix_ + std::to_string(counter_++);
  }

  DataType scalar_type() {
    static const std::vector<DataType> types = {
        DataType::Int32(),    DataType::Int32(),    DataType::Int64(),    DataType::Int(8),
        DataType::Int(16),    DataType::UInt(8),    DataType::UInt(32),   DataType::UInt(64),
        DataType::Bool(),     DataType::Float32(),  DataType::Float32(),  DataType::Float(16),
        DataType::Float(64),  DataType::BFloat16(), DataType::F8E4M3(),   DataType::F8E5M2()};
    return pick(types);
  }
  DataType index_type() { return coin(0.8) ? DataType::Int32() : DataType::Int64(); }

  void add_standard_vars() {
    for (DataType t : {DataType::Int32(), DataType::Int32(), DataType::Int64(), DataType::Bool(), DataType::Float32(),
                       DataType::Float(16), DataType::BFloat16(), DataType::UInt(8), DataType::F8E4M3()})
      vars.push_back(Var(name(), t));
  }
  void add_standard_buffers() {
    Var n = pick_var(DataType::Int32());
    buffers.push_back(Buffer(name(), DataType::Float32(), {make_int(16), n.defined() ? Expr(n) : make_int(8)},
                             MemScope::kGlobal));
    buffers.push_back(Buffer(name(), DataType::Float(16), {make_int(8)}, MemScope::kShared));
    buffers.push_back(Buffer(name(), DataType::Int32(), {make_int(4), make_int(4), make_int(4)}, MemScope::kFragment));
    buffers.push_back(Buffer(name(), DataType::BFloat16(), {make_int(4, DataType::Int64()), make_int(8, DataType::Int64())},
                             MemScope::kGlobal, {make_int(16, DataType::Int64()), make_int(1, DataType::Int64())}));
    buffers.push_back(Buffer(name(), DataType::Bool(), {make_int(2)}, MemScope::kLocal));
    buffers.push_back(Buffer(name(), DataType::F8E5M2(), {make_int(32)}, MemScope::kUB));
    buffers.push_back(Buffer(name(), DataType::Float32(), {}, MemScope::kLocalVar));  // rank 0
  }

  Var pick_var(DataType t) {
    std::vector<Var> c;
    for (auto& v : vars)
      if (v.dtype() == t) c.push_back(v);
    return c.empty() ? Var() : pick(c);
  }

  Expr constant(DataType t) {
    if (t.is_bool()) return make_bool(coin());
    if (t.is_float()) {
      static const std::vector<double> specials = {0.0,
                                                   -0.0,
                                                   1.0,
                                                   -2.5,
                                                   0.1,
                                                   1e300,
                                                   -1e-300,
                                                   5e-324,
                                                   65504.0,
                                                   std::numeric_limits<double>::infinity(),
                                                   -std::numeric_limits<double>::infinity(),
                                                   std::numeric_limits<double>::quiet_NaN()};
      double v = coin(0.4) ? pick(specials) : std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng_), uniform(-30, 30));
      return Expr(std::make_shared<FloatImmNode>(t, v));
    }
    static const std::vector<int64_t> specials = {0, 1, -1, 7, 255, 4096, std::numeric_limits<int64_t>::min(),
                                                  std::numeric_limits<int64_t>::max(), -2147483648LL, 2147483647LL};
    int64_t v = coin(0.3) ? pick(specials) : uniform(-1000, 1000);
    return Expr(std::make_shared<IntImmNode>(t, v));
  }

  Expr leaf(DataType t) {
    if (coin(0.5)) {
      Var v = pick_var(t);
      if (v.defined()) return v;
    }
    return constant(t);
  }

  Expr index(int depth) {
    DataType t = index_type();
    return depth > 0 && coin(0.4) ? expr(t, depth - 1) : leaf(t);
  }

  Expr expr(DataType t, int depth) {
    if (t.lanes > 1) return vector_expr(t, depth);
    if (depth <= 0 || coin(0.25)) return leaf(t);
    switch (uniform(0, 7)) {
      case 0:
      case 1: return binary(t, depth);
      case 2: {
        UnOp op = t.is_bool() ? UnOp::kNot : (t.is_integer() && coin()) ? UnOp::kBitNot : UnOp::kNeg;
        return Expr(std::make_shared<UnaryNode>(t, op, expr(t, depth - 1)));
      }
      case 3:
        return Expr(std::make_shared<SelectNode>(t, expr(DataType::Bool(), depth - 1), expr(t, depth - 1),
                                                 expr(t, depth - 1)));
      case 4: return Expr(std::make_shared<CastNode>(t, expr(scalar_type(), depth - 1)));
      case 5: return call(t, depth);
      case 6: {
        std::vector<Buffer> c;
        for (auto& b : buffers)
          if (b.dtype() == t) c.push_back(b);
        if (c.empty()) return leaf(t);
        const Buffer& b = pick(c);
        std::vector<Expr> idx;
        size_t n = coin(0.2) && b.ndim() > 1 ? 1 : b.ndim();
        for (size_t i = 0; i < n; ++i) idx.push_back(index(depth - 1));
        return make_load(b, idx);
      }
      default: {
        // Through the folding constructors: whatever they return, cast back to t.
        Expr e = make_binary(coin() ? BinOp::kAdd : BinOp::kMul, leaf(t.is_bool() ? DataType::Int32() : t),
                             leaf(t.is_bool() ? DataType::Int32() : t));
        return e.dtype() == t ? e : Expr(std::make_shared<CastNode>(t, e));
      }
    }
  }

  Expr binary(DataType t, int depth) {
    if (t.is_bool()) {
      if (coin()) {
        BinOp op = coin() ? BinOp::kAnd : BinOp::kOr;
        return Expr(std::make_shared<BinaryNode>(t, op, expr(t, depth - 1), expr(t, depth - 1)));
      }
      static const std::vector<BinOp> cmp = {BinOp::kEQ, BinOp::kNE, BinOp::kLT, BinOp::kLE, BinOp::kGT, BinOp::kGE};
      DataType u = scalar_type();
      return Expr(std::make_shared<BinaryNode>(t, pick(cmp), expr(u, depth - 1), expr(u, depth - 1)));
    }
    static const std::vector<BinOp> int_ops = {BinOp::kAdd,    BinOp::kSub,      BinOp::kMul,    BinOp::kDiv,
                                               BinOp::kMod,    BinOp::kFloorDiv, BinOp::kFloorMod, BinOp::kMin,
                                               BinOp::kMax,    BinOp::kBitAnd,   BinOp::kBitOr,  BinOp::kBitXor,
                                               BinOp::kShl,    BinOp::kShr};
    static const std::vector<BinOp> float_ops = {BinOp::kAdd, BinOp::kSub, BinOp::kMul, BinOp::kDiv,
                                                 BinOp::kMod, BinOp::kMin, BinOp::kMax};
    BinOp op = t.is_float() ? pick(float_ops) : pick(int_ops);
    return Expr(std::make_shared<BinaryNode>(t, op, expr(t, depth - 1), expr(t, depth - 1)));
  }

  Expr call(DataType t, int depth) {
    static const std::vector<std::string> ops = {"exp",       "tl.debug",  "ascend.set_flag", "min", "select",
                                                 "my op!",    "a..b",      "__exp",           "float32", "if"};
    std::vector<Expr> args;
    int n = uniform(0, 3);
    for (int i = 0; i < n; ++i) {
      if (coin(0.15)) args.push_back(string_imm());
      else args.push_back(expr(i == 0 && coin() && !t.is_void() ? t : scalar_type(), depth - 1));
    }
    return Expr(std::make_shared<CallNode>(t, pick(ops), args));
  }

  Expr string_imm() {
    std::string s;
    int n = uniform(0, 8);
    for (int i = 0; i < n; ++i) s += static_cast<char>(uniform(0, 255));
    if (coin(0.3)) s += "\"\\\n\t%d";
    return make_string(s);
  }

  Expr vector_expr(DataType t, int depth) {
    DataType elem = t.element_of();
    int lanes = t.lanes;
    switch (depth <= 0 ? 0 : uniform(0, 4)) {
      case 0:
        if (elem.is_float()) return Expr(std::make_shared<FloatImmNode>(t, coin() ? 1.5 : -INFINITY));
        return Expr(std::make_shared<IntImmNode>(t, elem.is_bool() ? 1 : -3));
      case 1: return Expr(std::make_shared<BroadcastNode>(expr(elem, depth - 1), lanes));
      case 2:
        if (elem.is_integer()) return Expr(std::make_shared<RampNode>(expr(elem, depth - 1), expr(elem, depth - 1), lanes));
        return Expr(std::make_shared<BroadcastNode>(leaf(elem), lanes));
      case 3:
        if (elem.is_bool()) return Expr(std::make_shared<BroadcastNode>(leaf(elem), lanes));
        return Expr(std::make_shared<BinaryNode>(t, elem.is_float() ? BinOp::kMul : BinOp::kAdd, vector_expr(t, depth - 1),
                                                 vector_expr(t, depth - 1)));
      default: {
        std::vector<Buffer> c;
        for (auto& b : buffers)
          if (b.dtype() == elem && b.ndim() >= 1) c.push_back(b);
        if (c.empty()) return Expr(std::make_shared<BroadcastNode>(leaf(elem), lanes));
        const Buffer& b = pick(c);
        std::vector<Expr> idx;
        for (size_t i = 0; i + 1 < b.ndim(); ++i) idx.push_back(index(0));
        DataType it = b.shape().back().dtype();
        idx.push_back(Expr(std::make_shared<RampNode>(leaf(it), make_int(1, it), lanes)));
        return make_load(b, idx);
      }
    }
  }

  // ---- attributes ----
  Attr attr(int depth) {
    switch (uniform(0, 9)) {
      case 0: return Attr();
      case 1: return Attr(coin());
      case 2: return Attr(static_cast<int64_t>(uniform(-100000, 100000) * (coin(0.1) ? int64_t{1000000000} : int64_t{1})));
      case 3: return Attr(coin(0.2) ? -INFINITY : std::ldexp(uniform(-1000, 1000), uniform(-10, 10)));
      case 4: return Attr(string_imm().as<StringImmNode>()->value);
      case 5: return Attr(expr(scalar_type(), depth));
      case 6:
        if (!buffers.empty()) return Attr(pick(buffers));
        return Attr();
      case 7: return Attr(std::vector<int64_t>{uniform(-5, 5), 7, -9});
      case 8: return Attr(std::vector<Expr>{expr(DataType::Int32(), depth), expr(DataType::Float32(), depth)});
      default: return Attr(std::vector<std::string>{"a", "b\"c", ""});
    }
  }
  AttrMap attrs(int depth) {
    static const std::vector<std::string> keys = {"num_stages", "order", "tl.key", "weird key", "dim", "clear"};
    AttrMap m;
    int n = uniform(0, 3);
    for (int i = 0; i < n; ++i) m[pick(keys)] = attr(depth);
    return m;
  }

  // ---- statements ----
  Stmt stmt(int depth) {
    if (depth <= 0 || coin(0.3)) return simple_stmt();
    switch (uniform(0, 8)) {
      case 0: {
        std::vector<Stmt> items;
        int n = uniform(0, 4);
        for (int i = 0; i < n; ++i) items.push_back(stmt(depth - 1));
        // Nested sequences built directly: equality and printing see them flattened.
        return Stmt(std::make_shared<SeqStmtNode>(items, Span{}));
      }
      case 1: {
        static const std::vector<ForKind> kinds = {ForKind::kSerial,   ForKind::kParallel,  ForKind::kVectorized,
                                                   ForKind::kUnrolled, ForKind::kPipelined, ForKind::kPersistent};
        DataType t = index_type();
        Var v(name(), t);
        Expr mn = leaf(t), ext = expr(t, 1);
        vars.push_back(v);
        AttrMap ann = attrs(1);
        Stmt body = stmt(depth - 1);
        vars.pop_back();
        return make_for(v, mn, ext, pick(kinds), body, ann);
      }
      case 2: {
        DataType t = scalar_type();
        Expr value = expr(t, 2);
        Var v(name(), t);
        vars.push_back(v);
        Stmt body = stmt(depth - 1);
        vars.pop_back();
        return wrap_in_seq(make_let(v, value, body));
      }
      case 3: {
        static const std::vector<MemScope> scopes = {MemScope::kShared, MemScope::kFragment, MemScope::kLocal,
                                                     MemScope::kL1,     MemScope::kL0C,      MemScope::kBarrier};
        std::vector<Expr> shape;
        int rank = uniform(0, 3);
        for (int i = 0; i < rank; ++i) {
          Var v = pick_var(DataType::Int32());
          shape.push_back(coin(0.8) || !v.defined() ? make_int(uniform(1, 64)) : Expr(v));
        }
        std::vector<Expr> strides;
        if (rank > 0 && coin(0.2))
          for (int i = 0; i < rank; ++i) strides.push_back(make_int(uniform(1, 128)));
        Buffer b(name(), scalar_type(), shape, pick(scopes), strides);
        buffers.push_back(b);
        Stmt body = stmt(depth - 1);
        buffers.pop_back();
        return wrap_in_seq(make_allocate(b, body));
      }
      case 4: {
        Expr cond = expr(DataType::Bool(), 2);
        Stmt then_case = stmt(depth - 1);
        Stmt else_case = coin() ? stmt(depth - 1) : Stmt();
        return Stmt(std::make_shared<IfThenElseNode>(cond, then_case, else_case, Span{}));
      }
      case 5: return make_attr(coin() ? "scope" : "odd \"key\"", attr(1), stmt(depth - 1));
      case 6: {
        std::vector<Expr> grid, threads;
        std::vector<Var> bv, tv;
        int g = uniform(1, 3), th = uniform(0, 2);
        for (int i = 0; i < g; ++i) {
          grid.push_back(expr(DataType::Int32(), 1));
          bv.push_back(Var(name()));
        }
        for (int i = 0; i < th; ++i) {
          threads.push_back(make_int(uniform(1, 256)));
          tv.push_back(Var(name()));
        }
        size_t n = vars.size();
        vars.insert(vars.end(), bv.begin(), bv.end());
        vars.insert(vars.end(), tv.begin(), tv.end());
        AttrMap a = attrs(1);
        Stmt body = stmt(depth - 1);
        vars.resize(n);
        return make_kernel(grid, bv, threads, tv, a, body);
      }
      default: {
        std::vector<Stmt> items = {stmt(depth - 1), stmt(depth - 1)};
        return make_seq(items);
      }
    }
  }

  // A let/alloc followed by more statements prints braced; alone it prints flat.
  Stmt wrap_in_seq(Stmt s) {
    if (coin()) return s;
    return make_seq({s, simple_stmt()});
  }

  Stmt simple_stmt() {
    switch (uniform(0, 4)) {
      case 0:
        if (!buffers.empty()) {
          const Buffer& b = pick(buffers);
          std::vector<Expr> idx;
          size_t n = b.ndim() > 1 && coin(0.2) ? 1 : b.ndim();
          for (size_t i = 0; i < n; ++i) idx.push_back(index(1));
          return make_store(b, idx, expr(b.dtype(), 2));
        }
        [[fallthrough]];
      case 1: return make_evaluate(call(DataType::Void(), 2));
      case 2: return make_loop_control(coin());
      default: {
        std::vector<TileArg> args;
        int n = uniform(0, 3);
        for (int i = 0; i < n; ++i) {
          if (!buffers.empty() && coin(0.7)) {
            const Buffer& b = pick(buffers);
            std::vector<Range> r;
            for (size_t d = 0; d < b.ndim(); ++d) r.emplace_back(index(1), expr(DataType::Int32(), 1));
            args.push_back(BufferRegion(b, r));
          } else {
            args.push_back(expr(scalar_type(), 2));
          }
        }
        static const std::vector<std::string> ops = {"copy", "gemm", "tile.exp", "for", "my-op", "annotate_layout"};
        return make_tile_op(pick(ops), args, attrs(1));
      }
    }
  }

  // A function over the standard variables (some as dynamic dims) and buffers.
  PrimFunc func(int depth) {
    vars.clear();
    buffers.clear();
    Var n(name()), m(name(), DataType::Int64());
    Var k(name(), DataType::Float32());
    vars = {n, m, k};
    Buffer a(name(), DataType::Float32(), {n, make_int(16)}, MemScope::kGlobal);
    Buffer b(name(), DataType::Float(16), {m, make_int(8, DataType::Int64())}, MemScope::kGlobal,
             {make_int(8, DataType::Int64()) * m, make_int(1, DataType::Int64())});
    Buffer c(name(), DataType::Int32(), {}, MemScope::kGlobal);
    buffers = {a, b, c};
    std::vector<Param> params = {{"p_a", Var(), a}, {"p_n", n, Buffer()}, {"p_b", Var(), b},
                                 {"p_k", k, Buffer()}, {"p_c", Var(), c}};
    AttrMap fattrs = {{"global_symbol", Attr("main")}, {"enable_auto_sync", Attr(coin())}};
    Stmt body = stmt(depth);
    return PrimFunc("main", params, body, fattrs);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<std::string> names_;
  std::string prefix_;
  int counter_ = 0;
};

}  // namespace tl::testing
