// Explicit vector code for the element-wise loops that vectorize_math_loops marks
// (src/target/cpu/vectorize_math_loops.h states the forms it admits). For lanes = 16:
//   for (int32_t j = lo; j < lo + E / 16 * 16; j += 16) {           // the vector steps
//     tl::cpu::vstore(&S[i * 128 + j], tl::cpu::vexp2((tl::cpu::vload<tl::cpu::f32x16>(&S[i * 128 + j])
//                                                       * 0.5f) - M[i]));
//   }
//   if (lo + E / 16 * 16 < lo + E) {                                 // the rest: one partial step
//     const int32_t j = lo + E / 16 * 16;  const int j_n = E % 16;
//     ...the same statements with tl::cpu::vload_n / vstore_n of j_n lanes...
//   }
// so every element is computed by the same code (the lanes past j_n read zeros and are not stored).
// A part of a value free of the loop variable stays a scalar expression, which GCC's vector
// extension broadcasts in a mixed operation. A difference of two per-lane products with a common
// factor (a * c - b * c) rounds each product (tl::cpu::vrounded), so that a == b gives exactly 0. A per-iteration temporary (R[0] = ...; later ... R[0]
// ...) becomes a const vector; its element gets the last lane after each step.
#include "target/cpu/codegen_cpu.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/structural.h"
#include "op/op_util.h"

namespace tl {
namespace cpu_codegen {

namespace {
const char* kVectorType = "tl::cpu::f32x16";
}

namespace {
// a = x * c and b = y * c (either order) with c the same expression: online softmax's
// exp2(m_old * s - m_new * s). Contracted into fma(x, c, -(y * c)), equal x and y give the rounding
// error of y * c instead of 0, so the scale exp2(...) is 1 + an ulp or two rather than exactly 1, and
// a rescale guarded by scale != 1 (vectorize_math_loops) would not be skipped.
bool common_factor_products(const Expr& a, const Expr& b) {
  auto* x = a.as<BinaryNode>();
  auto* y = b.as<BinaryNode>();
  if (!x || !y || x->op != BinOp::kMul || y->op != BinOp::kMul) return false;
  return structural_equal(x->a, y->a) || structural_equal(x->a, y->b) || structural_equal(x->b, y->a) ||
         structural_equal(x->b, y->b);
}
}  // namespace

bool CodeGenCPU::vector_varies(const Expr& e, const Var& lane_var) const {
  if (uses_var(e, lane_var)) return true;
  bool found = false;
  for_each_subexpr(e, [&](const Expr& x) {
    if (auto* l = x.as<BufferLoadNode>(); l && vector_temps_.count(l->buffer.get())) found = true;
  });
  return found;
}

std::string CodeGenCPU::vector_value(const Expr& e, const Var& lane_var) {
  if (!vector_varies(e, lane_var)) return "(" + expr(e) + ")";
  if (auto* l = e.as<BufferLoadNode>()) {
    if (auto t = vector_temps_.find(l->buffer.get()); t != vector_temps_.end()) return t->second;
    if (!vector_count_.empty())  // the last, partial step: lanes past the count read as 0
      return std::string("tl::cpu::vload_n<") + kVectorType + ">(&" + element_ref(l->buffer, l->indices) + ", " +
             vector_count_ + ")";
    return std::string("tl::cpu::vload<") + kVectorType + ">(&" + element_ref(l->buffer, l->indices) + ")";
  }
  if (auto* b = e.as<BinaryNode>()) {
    const char* op = b->op == BinOp::kAdd ? " + " : b->op == BinOp::kSub ? " - " : b->op == BinOp::kMul ? " * "
                     : b->op == BinOp::kDiv ? " / " : nullptr;
    if (!op) throw_error<Error>("internal error: vector loop with a binary operator other than + - * /");
    if (b->op == BinOp::kSub && vector_varies(b->a, lane_var) && vector_varies(b->b, lane_var) &&
        common_factor_products(b->a, b->b))  // a * c - b * c, both per lane: each product rounded
      return "(tl::cpu::vrounded(" + vector_value(b->a, lane_var) + ") - tl::cpu::vrounded(" +
             vector_value(b->b, lane_var) + "))";
    return "(" + vector_value(b->a, lane_var) + op + vector_value(b->b, lane_var) + ")";
  }
  if (auto* c = e.as<CallNode>(); c && c->args.size() == 1) {
    if (c->op == "exp2") return "tl::cpu::vexp2(" + vector_value(c->args[0], lane_var) + ")";
    if (c->op == "exp" || c->op == "__exp") return "tl::cpu::vexp(" + vector_value(c->args[0], lane_var) + ")";
  }
  throw_error<Error>("internal error: vector loop value not of the forms vectorize_math_loops admits");
}

void CodeGenCPU::vector_step(const std::vector<Stmt>& stores, const Var& lane_var, int64_t lanes) {
  vector_temps_.clear();
  std::vector<const BufferStoreNode*> temps;  // the last store of each temporary, in order
  for (const Stmt& s : stores) {
    auto* st = s.as<BufferStoreNode>();
    if (!st) throw_error<Error>("internal error: vector loop body is not a sequence of stores");
    std::string val = vector_value(st->value, lane_var);
    if (!vector_varies(st->value, lane_var)) val = std::string("tl::cpu::vsplat<") + kVectorType + ">(" + val + ")";
    if (st->indices.size() == 1 && !uses_var(st->indices[0], lane_var)) {  // a per-iteration temporary
      const std::string tv = fresh(name(st->buffer) + "_v");
      line("const " + std::string(kVectorType) + " " + tv + " = " + val + ";");
      vector_temps_[st->buffer.get()] = tv;
      temps.erase(std::remove_if(temps.begin(), temps.end(),
                                 [&](const BufferStoreNode* o) { return o->buffer.same_as(st->buffer); }),
                  temps.end());
      temps.push_back(st);
      continue;
    }
    const std::string ref = "&" + element_ref(st->buffer, st->indices);
    line(vector_count_.empty() ? "tl::cpu::vstore(" + ref + ", " + val + ");"
                               : "tl::cpu::vstore_n(" + ref + ", " + val + ", " + vector_count_ + ");");
  }
  const std::string last = vector_count_.empty() ? std::to_string(lanes - 1) : vector_count_ + " - 1";
  for (const BufferStoreNode* st : temps)  // the element holds the last iteration's value, as in the loop
    line(element_ref(st->buffer, st->indices) + " = " + vector_temps_.at(st->buffer.get()) + "[" + last + "];");
  vector_temps_.clear();
}

void CodeGenCPU::vector_loop(const ForNode* n, int64_t lanes) {
  const std::string t = storage_type(n->var.dtype());
  const std::string v = name(n->var);
  const std::string L = std::to_string(lanes);
  int64_t ext = 0;
  const bool whole = is_const_int(n->extent, &ext) && ext % lanes == 0;
  std::vector<Stmt> stores;
  if (auto* sq = n->body.as<SeqStmtNode>()) stores = sq->seq;
  else stores = {n->body};
  line("{");
  ++indent_;
  const std::string lo = fresh(v + "_lo"), vend = fresh(v + "_vend"), end = fresh(v + "_end");
  line("const " + t + " " + lo + " = " + expr(n->min) + ", " + end + " = " + lo + " + " + expr(n->extent) + ";");
  line("const " + t + " " + vend + " = " + lo + " + (" + end + " - " + lo + ") / " + L + " * " + L + ";");
  line("for (" + t + " " + v + " = " + lo + "; " + v + " < " + vend + "; " + v + " += " + L + ") {");
  ++indent_;
  vector_step(stores, n->var, lanes);
  --indent_;
  line("}");
  if (!whole) {  // the iterations past the last whole vector: one partial step, computed as the others
    line("if (" + vend + " < " + end + ") {");
    ++indent_;
    line("const " + t + " " + v + " = " + vend + ";");
    vector_count_ = fresh(v + "_n");
    line("const int " + vector_count_ + " = static_cast<int>(" + end + " - " + vend + ");");
    vector_step(stores, n->var, lanes);
    vector_count_.clear();
    --indent_;
    line("}");
  }
  --indent_;
  line("}");
}

}  // namespace cpu_codegen
}  // namespace tl
