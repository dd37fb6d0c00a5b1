// Expressions of the tile IR. Nodes are immutable and shared; a handle (Expr, Var) is a
// shared pointer to a const node. Identity of variables and buffers is pointer identity;
// their names are only for printing.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tl {

// A source location in the kernel's Python file (or in textual IR). Used in every user error.
struct Span {
  std::shared_ptr<const std::string> file;
  int line = 0;
  int col = 0;
  bool defined() const { return line > 0; }
  std::string str() const;  // "file.py:12:5", or "" when undefined
  // The prefix of an error message: "file.py:12:5: ", or "" when undefined.
  std::string prefix() const { return defined() ? str() + ": " : ""; }
};

enum class ExprKind : uint8_t {
  kIntImm,
  kFloatImm,
  kStringImm,
  kVar,
  kBinary,
  kUnary,
  kSelect,
  kCast,
  kBufferLoad,
  kCall,
  kRamp,
  kBroadcast,
};

// Expressions nest at most this deep (a leaf has depth 1). The compiler's walkers (simplifier,
// printers, code generators, verifier, simulator) recurse over expressions, so this bound is what
// keeps their stack use bounded: a deeper expression is a ResourceError where it is built — at the
// user's line for the frontend — never a stack overflow later. tests/error/test_deep_expressions.py
// compiles expressions of this depth on every target.
extern const uint32_t kMaxExprDepth;

struct ExprNode {
  const ExprKind kind;
  const DataType dtype;
  const uint32_t depth;  // 1 + the depth of the deepest operand
  // Throws ResourceError when `depth` exceeds kMaxExprDepth.
  ExprNode(ExprKind k, DataType t, uint32_t depth = 1);
  virtual ~ExprNode() = default;
};

class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  // An int32 constant; lets passes write `x + 1`.
  Expr(int value);  // NOLINT(google-explicit-constructor)

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  ExprKind kind() const { return node_->kind; }
  DataType dtype() const { return node_->dtype; }
  bool same_as(const Expr& other) const { return node_ == other.node_; }
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  const std::shared_ptr<const ExprNode>& node() const { return node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

// 1 + the largest depth among `operands` (undefined ones count 0): the depth of a node over them.
inline uint32_t depth_over(std::initializer_list<const Expr*> operands) {
  uint32_t d = 0;
  for (const Expr* e : operands)
    if (e->defined() && e->get()->depth > d) d = e->get()->depth;
  return d + 1;
}
inline uint32_t depth_over(const std::vector<Expr>& operands) {
  uint32_t d = 0;
  for (const Expr& e : operands)
    if (e.defined() && e.get()->depth > d) d = e.get()->depth;
  return d + 1;
}

struct VarNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kVar;
  const std::string name;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
};

// A variable: loop variable, let binding, block/thread index, dynamic dimension, scalar param.
class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType dtype = DataType::Int32());
  explicit Var(std::shared_ptr<const VarNode> node) : Expr(std::move(node)) {}
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
};

// Ordering and hashing by identity, so Vars can key std::map / unordered_map.
struct VarLess {
  bool operator()(const Var& a, const Var& b) const { return a.get() < b.get(); }
};
struct VarHash {
  size_t operator()(const Var& v) const { return std::hash<const void*>()(v.get()); }
};
struct VarEq {
  bool operator()(const Var& a, const Var& b) const { return a.get() == b.get(); }
};

struct IntImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kIntImm;
  const int64_t value;
  IntImmNode(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
};

struct FloatImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kFloatImm;
  const double value;
  FloatImmNode(DataType t, double v) : ExprNode(kKind, t), value(v) {}
};

struct StringImmNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kStringImm;
  const std::string value;
  explicit StringImmNode(std::string v) : ExprNode(kKind, DataType::Handle()), value(std::move(v)) {}
};

enum class BinOp : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,       // floats: true division; integers: C (truncating) division
  kMod,       // integers: C (truncating) remainder; floats: fmod
  kFloorDiv,  // integers: Python //
  kFloorMod,  // integers: Python %
  kMin,
  kMax,
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,  // logical, on bool
  kOr,
  kBitAnd,
  kBitOr,
  kBitXor,
  kShl,
  kShr,
};
const char* binop_name(BinOp op);  // "add", "floordiv", ...
bool binop_is_compare(BinOp op);
bool binop_is_logical(BinOp op);

struct BinaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  const BinOp op;
  const Expr a, b;
  BinaryNode(DataType t, BinOp o, Expr x, Expr y)
      : ExprNode(kKind, t, depth_over({&x, &y})), op(o), a(std::move(x)), b(std::move(y)) {}
};

enum class UnOp : uint8_t { kNeg, kNot, kBitNot };
const char* unop_name(UnOp op);

struct UnaryNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kUnary;
  const UnOp op;
  const Expr a;
  UnaryNode(DataType t, UnOp o, Expr x) : ExprNode(kKind, t, depth_over({&x})), op(o), a(std::move(x)) {}
};

struct SelectNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kSelect;
  const Expr cond, true_value, false_value;
  SelectNode(DataType t, Expr c, Expr x, Expr y)
      : ExprNode(kKind, t, depth_over({&c, &x, &y})),
        cond(std::move(c)),
        true_value(std::move(x)),
        false_value(std::move(y)) {}
};

struct CastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCast;
  const Expr value;
  CastNode(DataType t, Expr v) : ExprNode(kKind, t, depth_over({&v})), value(std::move(v)) {}
};

// Calls to math functions and target builtins, by name: "exp", "sqrt", "if_then_else",
// "tl.printf", ... The list of known names and their typing rules lives in ir/op_table.h.
struct CallNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kCall;
  const std::string op;
  const std::vector<Expr> args;
  CallNode(DataType t, std::string o, std::vector<Expr> a)
      : ExprNode(kKind, t, depth_over(a)), op(std::move(o)), args(std::move(a)) {}
};

// Vector index base, base+stride, ..., base+(lanes-1)*stride. Produced by vectorization.
struct RampNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kRamp;
  const Expr base, stride;
  const int lanes;
  RampNode(Expr b, Expr s, int l)
      : ExprNode(kKind, b.dtype().with_lanes(l), depth_over({&b, &s})), base(std::move(b)), stride(std::move(s)), lanes(l) {}
};

struct BroadcastNode : ExprNode {
  static constexpr ExprKind kKind = ExprKind::kBroadcast;
  const Expr value;
  const int lanes;
  BroadcastNode(Expr v, int l)
      : ExprNode(kKind, v.dtype().with_lanes(l), depth_over({&v})), value(std::move(v)), lanes(l) {}
};

// ---------------------------------------------------------------------------------------------
// Constructors. They check operand types, apply the promotion rules below and fold constants,
// so `make_add(IntImm 2, IntImm 3)` is IntImm 5.
//
// Promotion: an integer constant adopts the other side's type; int op float -> float;
// float16/bfloat16 op float32 -> float32; two different non-constant ints -> the wider one.
// Comparisons and logical ops give bool.
Expr make_int(int64_t value, DataType dtype = DataType::Int32());
Expr make_float(double value, DataType dtype = DataType::Float32());
Expr make_bool(bool value);
Expr make_string(std::string value);
// A constant of the given type from a double (int types truncate).
Expr make_const(DataType dtype, double value);
Expr make_binary(BinOp op, Expr a, Expr b);
Expr make_unary(UnOp op, Expr a);
Expr make_select(Expr cond, Expr t, Expr f);
Expr make_cast(DataType dtype, Expr value);  // no-op when the type already matches
Expr make_call(DataType dtype, std::string op, std::vector<Expr> args);
// The builtins that write their first argument (a BufferLoad naming the element) atomically:
// tl.atomic_add_scalar / tl.atomic_max_scalar / tl.atomic_min_scalar, the bitwise
// tl.atomic_or_scalar / tl.atomic_and_scalar / tl.atomic_xor_scalar (integer elements), tl.atomic_store.
bool is_atomic_write_builtin(const std::string& op);
Expr make_ramp(Expr base, Expr stride, int lanes);
Expr make_broadcast(Expr value, int lanes);

inline Expr operator+(Expr a, Expr b) { return make_binary(BinOp::kAdd, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return make_binary(BinOp::kSub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return make_binary(BinOp::kMul, std::move(a), std::move(b)); }
inline Expr operator-(Expr a) { return make_unary(UnOp::kNeg, std::move(a)); }
inline Expr operator<(Expr a, Expr b) { return make_binary(BinOp::kLT, std::move(a), std::move(b)); }
inline Expr operator<=(Expr a, Expr b) { return make_binary(BinOp::kLE, std::move(a), std::move(b)); }
inline Expr operator>(Expr a, Expr b) { return make_binary(BinOp::kGT, std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return make_binary(BinOp::kGE, std::move(a), std::move(b)); }
inline Expr operator&&(Expr a, Expr b) { return make_binary(BinOp::kAnd, std::move(a), std::move(b)); }
inline Expr operator||(Expr a, Expr b) { return make_binary(BinOp::kOr, std::move(a), std::move(b)); }
inline Expr floordiv(Expr a, Expr b) { return make_binary(BinOp::kFloorDiv, std::move(a), std::move(b)); }
inline Expr floormod(Expr a, Expr b) { return make_binary(BinOp::kFloorMod, std::move(a), std::move(b)); }
inline Expr min(Expr a, Expr b) { return make_binary(BinOp::kMin, std::move(a), std::move(b)); }
inline Expr max(Expr a, Expr b) { return make_binary(BinOp::kMax, std::move(a), std::move(b)); }
inline Expr eq(Expr a, Expr b) { return make_binary(BinOp::kEQ, std::move(a), std::move(b)); }
inline Expr ne(Expr a, Expr b) { return make_binary(BinOp::kNE, std::move(a), std::move(b)); }
// ceil(a / b) for non-negative integers.
Expr ceildiv(Expr a, Expr b);

// Constant inspection.
bool is_const_int(const Expr& e, int64_t* value = nullptr);
bool is_const_value(const Expr& e, int64_t value);  // e is the integer constant `value`
bool is_const_float(const Expr& e, double* value = nullptr);
inline bool is_zero(const Expr& e) { return is_const_value(e, 0); }
inline bool is_one(const Expr& e) { return is_const_value(e, 1); }
// Returns the constant's value or throws ValueError mentioning `what`.
int64_t get_const_int(const Expr& e, const char* what);

// Pretty form of one expression (same syntax as the IR printer).
std::string to_string(const Expr& e);

}  // namespace tl
