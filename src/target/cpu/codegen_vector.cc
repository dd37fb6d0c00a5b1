// Explicit vector code for the element-wise loops that vectorize_math_loops marks
// (src/target/cpu/vectorize_math_loops.h states the forms it admits). For lanes = 16:
//   for (int32_t j = lo; j < lo + E / 16 * 16; j += 16) {           // the vector steps
//     tl::cpu::vstore(&S[i * 128 + j], tl::cpu::vexp2((tl::cpu::vload<tl::cpu::f32x16>(&S[i * 128 + j])
//                                                       * 0.5f) - M[i]));
//   }
//   #pragma GCC ivdep
//   for (int32_t j = lo + E / 16 * 16; j < lo + E; ++j) { ...the scalar statements... }   // the rest
// A part of a value free of the loop variable stays a scalar expression, which GCC's vector
// extension broadcasts in a mixed operation. A per-iteration temporary (R[0] = ...; later ... R[0]
// ...) becomes a const vector; its element gets the last lane after each step.
#include "target/cpu/codegen_cpu.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/functor.h"
#include "op/op_util.h"

namespace tl {
namespace cpu_codegen {

namespace {
const char* kVectorType = "tl::cpu::f32x16";
}

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
    return std::string("tl::cpu::vload<") + kVectorType + ">(&" + element_ref(l->buffer, l->indices) + ")";
  }
  if (auto* b = e.as<BinaryNode>()) {
    const char* op = b->op == BinOp::kAdd ? " + " : b->op == BinOp::kSub ? " - " : b->op == BinOp::kMul ? " * "
                     : b->op == BinOp::kDiv ? " / " : nullptr;
    if (!op) throw_error<Error>("internal error: vector loop with a binary operator other than + - * /");
    return "(" + vector_value(b->a, lane_var) + op + vector_value(b->b, lane_var) + ")";
  }
  if (auto* c = e.as<CallNode>(); c && c->args.size() == 1) {
    if (c->op == "exp2") return "tl::cpu::vexp2(" + vector_value(c->args[0], lane_var) + ")";
    if (c->op == "exp" || c->op == "__exp") return "tl::cpu::vexp(" + vector_value(c->args[0], lane_var) + ")";
  }
  throw_error<Error>("internal error: vector loop value not of the forms vectorize_math_loops admits");
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
  vector_temps_.clear();
  std::vector<const BufferStoreNode*> temps;  // the last store of each temporary, in order
  for (const Stmt& s : stores) {
    auto* st = s.as<BufferStoreNode>();
    if (!st) throw_error<Error>("internal error: vector loop body is not a sequence of stores");
    std::string val = vector_value(st->value, n->var);
    if (!vector_varies(st->value, n->var)) val = std::string("tl::cpu::vsplat<") + kVectorType + ">(" + val + ")";
    if (st->indices.size() == 1 && !uses_var(st->indices[0], n->var)) {  // a per-iteration temporary
      const std::string tv = fresh(name(st->buffer) + "_v");
      line("const " + std::string(kVectorType) + " " + tv + " = " + val + ";");
      vector_temps_[st->buffer.get()] = tv;
      temps.erase(std::remove_if(temps.begin(), temps.end(),
                                 [&](const BufferStoreNode* o) { return o->buffer.same_as(st->buffer); }),
                  temps.end());
      temps.push_back(st);
      continue;
    }
    line("tl::cpu::vstore(&" + element_ref(st->buffer, st->indices) + ", " + val + ");");
  }
  for (const BufferStoreNode* st : temps)  // the element holds the last iteration's value, as in the loop
    line(element_ref(st->buffer, st->indices) + " = " + vector_temps_.at(st->buffer.get()) + "[" +
         std::to_string(lanes - 1) + "];");
  vector_temps_.clear();
  --indent_;
  line("}");
  if (!whole) {  // the iterations past the last whole vector, as scalar code
    line("#pragma GCC ivdep");
    line("for (" + t + " " + v + " = " + vend + "; " + v + " < " + end + "; ++" + v + ") {");
    ++indent_;
    seq_or_single(n->body);
    --indent_;
    line("}");
  }
  --indent_;
  line("}");
}

}  // namespace cpu_codegen
}  // namespace tl
