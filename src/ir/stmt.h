// Statements of the tile IR, the kernel launch, tile operators and functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/buffer.h"

namespace tl {

enum class StmtKind : uint8_t {
  kSeq,
  kEvaluate,
  kLet,
  kStore,
  kFor,
  kIf,
  kAllocate,
  kAttr,
  kKernel,
  kTileOp,
  kLoopControl,
};

struct StmtNode {
  const StmtKind kind;
  Span span;
  explicit StmtNode(StmtKind k, Span s = {}) : kind(k), span(std::move(s)) {}
  virtual ~StmtNode() = default;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  const StmtNode* operator->() const { return node_.get(); }
  StmtKind kind() const { return node_->kind; }
  const Span& span() const { return node_->span; }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const StmtNode> node_;
};

struct SeqStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kSeq;
  const std::vector<Stmt> seq;
  SeqStmtNode(std::vector<Stmt> s, Span sp) : StmtNode(kKind, std::move(sp)), seq(std::move(s)) {}
};

// An expression evaluated for its effect (a call to a builtin such as "tl.printf").
struct EvaluateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  const Expr value;
  EvaluateNode(Expr v, Span sp) : StmtNode(kKind, std::move(sp)), value(std::move(v)) {}
};

struct LetStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLet;
  const Var var;
  const Expr value;
  const Stmt body;
  LetStmtNode(Var v, Expr val, Stmt b, Span sp)
      : StmtNode(kKind, std::move(sp)), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
};

struct BufferStoreNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kStore;
  const Buffer buffer;
  const std::vector<Expr> indices;
  const Expr value;
  BufferStoreNode(Buffer b, std::vector<Expr> i, Expr v, Span sp)
      : StmtNode(kKind, std::move(sp)), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
};

enum class ForKind : uint8_t {
  kSerial,
  kParallel,    // T.Parallel: element-wise over a tile, distributed over threads / SIMD lanes
  kVectorized,  // T.vectorized
  kUnrolled,    // T.unroll
  kPipelined,   // T.Pipelined: annotations num_stages, order, stage, cross_interval
  kPersistent,  // T.Persistent wave loop: annotations wave_size, domain
};
const char* for_kind_name(ForKind k);
ForKind parse_for_kind(const std::string& s);

struct ForNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kFor;
  const Var var;
  const Expr min, extent;
  const ForKind for_kind;
  const AttrMap annotations;
  const Stmt body;
  ForNode(Var v, Expr mn, Expr ext, ForKind k, AttrMap ann, Stmt b, Span sp)
      : StmtNode(kKind, std::move(sp)), var(std::move(v)), min(std::move(mn)), extent(std::move(ext)),
        for_kind(k), annotations(std::move(ann)), body(std::move(b)) {}
};

struct IfThenElseNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kIf;
  const Expr cond;
  const Stmt then_case;
  const Stmt else_case;  // may be undefined
  IfThenElseNode(Expr c, Stmt t, Stmt e, Span sp)
      : StmtNode(kKind, std::move(sp)), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
};

// Declares `buffer` for the extent of `body`.
struct AllocateNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  const Buffer buffer;
  const Stmt body;
  AllocateNode(Buffer b, Stmt body_, Span sp)
      : StmtNode(kKind, std::move(sp)), buffer(std::move(b)), body(std::move(body_)) {}
};

// A keyed annotation over a region of code: ascend core scope ("scope" = "C"/"V"),
// rasterization ("use_swizzle"), layout maps ("layout_map"), pass-inserted markers.
struct AttrStmtNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kAttr;
  const std::string key;
  const Attr value;
  const Stmt body;
  AttrStmtNode(std::string k, Attr v, Stmt b, Span sp)
      : StmtNode(kKind, std::move(sp)), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
};

// T.Kernel(...): a grid of blocks. `block_vars[i]` ranges over [0, grid[i]).
// `threads` holds the thread extents (empty on ascend); `thread_vars` are the thread indices
// (T.get_thread_binding). Ascend: attrs "is_npu" = true; Expert form gives a second block var
// `vid` in [0, 2) as block_vars[1] with attrs "npu_vid" = true; Developer form sets
// "npu_threads" = 1|2.
struct KernelLaunchNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kKernel;
  const std::vector<Expr> grid;
  const std::vector<Var> block_vars;
  const std::vector<Expr> threads;
  const std::vector<Var> thread_vars;
  const AttrMap attrs;
  const Stmt body;
  KernelLaunchNode(std::vector<Expr> g, std::vector<Var> bv, std::vector<Expr> t, std::vector<Var> tv,
                   AttrMap a, Stmt b, Span sp)
      : StmtNode(kKind, std::move(sp)), grid(std::move(g)), block_vars(std::move(bv)),
        threads(std::move(t)), thread_vars(std::move(tv)), attrs(std::move(a)), body(std::move(b)) {}
};

// One argument of a tile op: a buffer region or a scalar expression.
struct TileArg {
  BufferRegion region;
  Expr expr;
  TileArg() = default;
  TileArg(BufferRegion r) : region(std::move(r)) {}  // NOLINT
  TileArg(Expr e) : expr(std::move(e)) {}            // NOLINT
  bool is_region() const { return region.defined(); }
  bool is_expr() const { return expr.defined(); }
};

// A tile operator (copy, gemm, fill, reduce, cumsum, atomic_add, tile.* element-wise, ascend
// ops...). Its meaning, access regions and lowerings are defined in src/op/, looked up by `op`.
struct TileOpNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kTileOp;
  const std::string op;
  const std::vector<TileArg> args;
  const AttrMap attrs;
  TileOpNode(std::string o, std::vector<TileArg> a, AttrMap at, Span sp)
      : StmtNode(kKind, std::move(sp)), op(std::move(o)), args(std::move(a)), attrs(std::move(at)) {}
};

// `break` / `continue` of the innermost serial loop.
struct LoopControlNode : StmtNode {
  static constexpr StmtKind kKind = StmtKind::kLoopControl;
  const bool is_break;
  LoopControlNode(bool brk, Span sp) : StmtNode(kKind, std::move(sp)), is_break(brk) {}
};

// Constructors with invariant checks. make_seq flattens nested sequences and drops undefined
// entries; a one-element sequence is returned as that element.
Stmt make_seq(std::vector<Stmt> stmts, Span span = {});
Stmt make_evaluate(Expr value, Span span = {});
Stmt make_let(Var var, Expr value, Stmt body, Span span = {});
Stmt make_store(Buffer buffer, std::vector<Expr> indices, Expr value, Span span = {});
Stmt make_for(Var var, Expr min, Expr extent, ForKind kind, Stmt body, AttrMap annotations = {},
              Span span = {});
Stmt make_if(Expr cond, Stmt then_case, Stmt else_case = {}, Span span = {});
Stmt make_allocate(Buffer buffer, Stmt body, Span span = {});
Stmt make_attr(std::string key, Attr value, Stmt body, Span span = {});
Stmt make_kernel(std::vector<Expr> grid, std::vector<Var> block_vars, std::vector<Expr> threads,
                 std::vector<Var> thread_vars, AttrMap attrs, Stmt body, Span span = {});
Stmt make_tile_op(std::string op, std::vector<TileArg> args, AttrMap attrs = {}, Span span = {});
Stmt make_loop_control(bool is_break, Span span = {});
// A no-op statement (an empty sequence).
Stmt make_nop();
bool is_nop(const Stmt& s);

// A kernel parameter: a tensor (buffer) or a scalar.
struct Param {
  std::string name;
  Var var;        // scalar parameters: the variable; tensors: undefined
  Buffer buffer;  // tensor parameters
  bool is_buffer() const { return buffer.defined(); }
};

struct PrimFuncNode {
  std::string name;
  std::vector<Param> params;
  Stmt body;
  AttrMap attrs;  // "global_symbol", func_attr entries, "enable_auto_sync", ...
  Span span;
};

class PrimFunc {
 public:
  PrimFunc() = default;
  explicit PrimFunc(std::shared_ptr<const PrimFuncNode> node) : node_(std::move(node)) {}
  PrimFunc(std::string name, std::vector<Param> params, Stmt body, AttrMap attrs = {}, Span span = {});
  bool defined() const { return node_ != nullptr; }
  const PrimFuncNode* get() const { return node_.get(); }
  const PrimFuncNode* operator->() const { return node_.get(); }
  const std::string& name() const { return node_->name; }
  const std::vector<Param>& params() const { return node_->params; }
  const Stmt& body() const { return node_->body; }
  const AttrMap& attrs() const { return node_->attrs; }
  PrimFunc with_body(Stmt body) const;
  PrimFunc with_attrs(AttrMap attrs) const;
  PrimFunc with_attr(const std::string& key, Attr value) const;
  // Dynamic dimension variables appearing in parameter shapes/strides, in first-use order.
  std::vector<Var> dynamic_vars() const;

 private:
  std::shared_ptr<const PrimFuncNode> node_;
};

std::string to_string(const Stmt& s);

}  // namespace tl
