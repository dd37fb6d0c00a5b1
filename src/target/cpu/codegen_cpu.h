// Internal to the cpu code generator (codegen.cc: functions and statements; codegen_expr.cc:
// types and expressions). The public entry point is codegen_cpu() in codegen.h.
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "target/c_source.h"

namespace tl {
namespace cpu_codegen {

// Per-buffer limit for block-local storage on the stack, and the limit for all stack buffers of
// one block function: larger (or dynamically shaped) buffers go on the heap. Worker threads have
// the default 8 MiB stack, so half a MiB per block leaves ample room.
constexpr int64_t kMaxStackBufferBytes = 128 * 1024;
constexpr int64_t kMaxStackBytesPerBlock = 512 * 1024;

// The C++ type a buffer element is stored as ("float", "tl::cpu::half_t", ...).
std::string storage_type(DataType t);
// The C++ type a value of type t is computed in: float for the 16/8-bit floats, else storage_type.
std::string value_type(DataType t);
// Whether a buffer holds float4_e2m1fn packed two a byte (global memory; docs/FLOAT4.md), and the
// C++ type its name is declared with ("T*", or tl::cpu::float4_e2m1_packed for packed ones).
bool packed_buffer(const Buffer& b);
std::string buffer_pointer_type(const Buffer& b);
bool is_small_float(DataType t);
// A C++ literal for an immediate of type t (rounded to t's precision).
std::string int_literal(DataType t, int64_t v);
std::string float_literal(DataType t, double v);

class CodeGenCPU {
 public:
  std::string generate(const PrimFunc& f, bool pack_reuse = true);

  // ---- expressions (codegen_expr.cc) ----
  std::string expr(const Expr& e);
  // Spells `v` as `n` in later expressions (for callers that declare the variable themselves).
  void bind_name(const Var& v, const std::string& n) {
    var_names_[v.get()] = n;
    used_names_.insert(n);
  }

 private:
  std::string expr_paren(const Expr& e);  // wrapped in parentheses unless atomic
  std::string binary(const BinaryNode* n);
  std::string cast(DataType to, const Expr& value);
  std::string call(const CallNode* n);
  std::string math_call(const CallNode* n);
  std::string printf_call(const CallNode* n);
  std::string load(const BufferLoadNode* n);
  std::string element_ref(const Buffer& b, const std::vector<Expr>& indices);  // "A[off]"
  std::string offset(const Buffer& b, const std::vector<Expr>& indices);
  // An argument converted to the C++ type of `t`'s values when its own type differs.
  std::string as_value(const Expr& e, DataType t);
  // A C++ expression of `t`'s storage type for `e` (whose type is t): copies of 16/8-bit floats
  // move the stored bits instead of converting to float and back.
  std::string as_storage(const Expr& e, DataType t);

  // ---- statements and functions (codegen.cc) ----
  void stmt(const Stmt& s);
  void seq_or_single(const Stmt& s);
  void for_loop(const ForNode* n);
  // A loop marked by vectorize_math_loops (annotation cpu.vector_lanes): explicit vector code, the
  // remaining iterations as one partial step (codegen_vector.cc).
  void vector_loop(const ForNode* n, int64_t lanes);
  std::string vector_value(const Expr& e, const Var& lane_var);
  bool vector_varies(const Expr& e, const Var& lane_var) const;
  void vector_step(const std::vector<Stmt>& stores, const Var& lane_var, int64_t lanes);
  std::map<const BufferNode*, std::string> vector_temps_;  // per-iteration temporaries: their vector's name
  std::string vector_count_;  // in the partial last step: the name of its lane count
  void allocate(const AllocateNode* n);
  void evaluate(const EvaluateNode* n);
  // tl.dist.copy / barrier / signal / wait (include/tl/cpu/dist.h): a call returning 0 or 1 (failed).
  std::string dist_call(const CallNode* n);
  void launch(const KernelLaunchNode* n);
  std::string block_function(const KernelLaunchNode* n, const std::string& base, std::vector<Var>* captured_vars,
                             std::vector<Buffer>* captured_buffers);
  void line(const std::string& text);

  std::string name(const Var& v);
  std::string name(const Buffer& b);
  std::string fresh(const std::string& base);

  std::map<const VarNode*, std::string> var_names_;
  std::map<const BufferNode*, std::string> buffer_names_;
  std::set<std::string> used_names_;

  std::ostringstream* out_ = nullptr;
  int indent_ = 0;
  std::string func_name_;
  std::vector<std::string> block_functions_;  // text of each kernel's block function + task
  int kernel_count_ = 0;
  bool in_block_ = false;
  bool uses_dist_ = false;  // the kernel calls tl.dist.*: include tl/cpu/dist.h
  // Packed-B reuse (include/tl/cpu/gemm.h, "packed B reused across the calls of one launch"):
  // tensor parameters no statement of the function writes (a tl.cpu.gemm in a kernel with such a
  // B passes the launch's token, ctx.pack_launch); those the kernel being emitted uses so; the
  // written tensor parameters (a launch gets a token only when none overlaps a reused B in
  // memory); whether a written one is fp4-packed (no overlap test: no token).
  std::map<const BufferNode*, Buffer> reuse_b_;
  std::set<const BufferNode*> reuse_b_used_;
  std::vector<Buffer> written_params_;
  bool written_packed_ = false;
  // The tl::cpu::gemm_begin_launch(...) statement of a launch whose kernel reuses packed B.
  std::string begin_launch_call();
  int64_t stack_bytes_ = 0;  // of the function being emitted
  Span span_;                // of the statement being emitted (for messages)
};

}  // namespace cpu_codegen
}  // namespace tl
