// The cuda code generator's internals, shared by its files (not included outside codegen*.cc):
//   codegen.cc        the module and each kernel: signature, launch description, kernel variables
//   codegen_stmt.cc   statements (loops, lets, allocations, stores)
//   codegen_expr.cc   expressions (literals, operators, buffer accesses)
//   codegen_call.cc   calls of builtins and device functions (tl::, cuda., tl.dist.)
//   codegen_names.cc  C++ names for IR variables and buffers
//   launch_info.cc    CudaLaunchInfo written to / read from the kernel cache
#pragma once

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "ir/error.h"
#include "ir/stmt.h"
#include "target/cuda/codegen.h"

namespace tl {
namespace cuda_codegen {

// C++ names for IR variables and buffers: one per object, unique in the source, never a name that
// C++, CUDA or tilelang's runtime reserves (codegen_names.cc).
class NameTable {
 public:
  // The name of `key`, made from `hint` the first time.
  std::string get(const void* key, const std::string& hint);
  void reserve(const std::string& n) { used_.insert(n); }
  // A new C++ name for `key` (one not used before), replacing its current one until restore().
  // Lowering duplicates statements (one copy of a T.Parallel body per register, pipeline
  // prologue/body/epilogue, unswitched masks), so one IR variable may be bound by several
  // LetStmts; each binding gets its own name, and uses inside its body refer to it.
  std::string rebind(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    std::string old = it == names_.end() ? std::string() : it->second;
    saved_.push_back({key, old});
    if (it != names_.end()) names_.erase(it);
    return get(key, hint);
  }
  void restore() {
    auto [key, old] = saved_.back();
    saved_.pop_back();
    if (old.empty()) names_.erase(key);
    else names_[key] = old;
  }

 private:
  std::map<const void*, std::string> names_;
  std::set<std::string> used_;
  std::vector<std::pair<const void*, std::string>> saved_;
};

// The emitter of one function (codegen_cuda).
class CudaCodegen {
 public:
  void set_params(const PrimFunc& f);
  std::string run(const PrimFunc& f, CudaLaunchInfo* info);

 private:
  // ---- the module and its kernels (codegen.cc)
  void collect_kernels(const PrimFunc& f, const Stmt& s, std::vector<const LetStmtNode*> lets,
                       std::vector<std::pair<const KernelLaunchNode*, std::vector<const LetStmtNode*>>>* out);
  void emit_kernel(const PrimFunc& f, const KernelLaunchNode& kernel_node,
                   const std::vector<const LetStmtNode*>& outer_lets, CudaLaunchInfo* info, const std::string& name);
  Var find_var(const PrimFunc& f, const VarNode* v);
  void emit_kernel_vars(const KernelLaunchNode& k);
  // A TMA tensor map the kernel uses (cuda.tma_load): tensor parameter, swizzle, box.
  struct TensorMapUse {
    Buffer tensor;
    size_t param = 0;
    int swizzle = 0;
    std::vector<int64_t> box;
    std::string name;
  };
  size_t tmap_index(const CallNode* c) const;
  void collect_tensor_maps(const PrimFunc& f, const Stmt& body);
  // Whether the kernel uses distributed builtins (tl.dist.*; include/tl/cuda/dist.h).
  static bool uses_distributed(const Stmt& body);
  // Whether a wgmma GEMM has fp8 operands (its wrappers live in a header of their own).
  static bool uses_fp8_wgmma(const Stmt& body);

  // ---- statements (codegen_stmt.cc)
  void line(const std::string& s);
  void stmt(const Stmt& s);

  // ---- expressions (codegen_expr.cc)
  std::string var_name(const Var& v) { return names_.get(v.get(), v.name()); }
  std::string buf_name(const Buffer& b) { return names_.get(b.get(), b.name()); }
  // Flat element offset of an access.
  std::string offset(const Buffer& b, const std::vector<Expr>& idx);
  // "A[off]": an element as an lvalue (also for its address). Not for a float4_e2m1fn global
  // buffer, whose elements are nibbles (docs/FLOAT4.md): loads and stores of those go through
  // load_element / store_element, and nothing else may address them.
  std::string access(const Buffer& b, const std::vector<Expr>& idx) {
    if (packed_fp4(b))
      throw_error<NotImplemented>("not implemented: addressing an element of the float4_e2m1fn tensor '", b.name(),
                                  "' (packed two a byte) on target cuda (atomics, vector, async or TMA copies); "
                                  "copy it through T.copy into shared memory or a fragment element by element");
    return buf_name(b) + "[" + offset(b, idx) + "]";
  }
  static bool packed_fp4(const Buffer& b) { return b.dtype().is_fp4() && b.scope() == MemScope::kGlobal; }
  std::string load_element(const Buffer& b, const std::vector<Expr>& idx) {
    if (packed_fp4(b)) return "tl::fp4_packed_load(" + buf_name(b) + ", " + offset(b, idx) + ")";
    return access(b, idx);
  }
  std::string store_element(const Buffer& b, const std::vector<Expr>& idx, const std::string& value) {
    if (packed_fp4(b)) return "tl::fp4_packed_store(" + buf_name(b) + ", " + offset(b, idx) + ", " + value + ");";
    return access(b, idx) + " = " + value + ";";
  }
  std::string literal_float(double v, DataType t);
  std::string literal_int(int64_t v, DataType t);
  // C++ promotes 8/16-bit integer operands to int (and fp8 ones to float): the result is brought
  // back to the IR type, so every emitted expression has its IR node's C++ type (overloads such as
  // tl::max(int8_t, int8_t) then resolve) and wraps where the IR wraps.
  static bool promoted_in_cpp(DataType t) {
    return (t.is_integer() && t.bits < 32) || t.is_fp8() || t.is_fp4() || t.is_bool();
  }
  std::string narrow(DataType t, const std::string& s);
  std::string binary(const BinaryNode* b);
  std::string expr(const Expr& e);

  // ---- calls (codegen_call.cc)
  // `&buf[index]` operand of a builtin, and its buffer.
  std::pair<std::string, Buffer> address(const Expr& e);
  // tl.dist.* (include/tl/cuda/dist.h): executed by every thread of the block.
  std::string dist_call(const CallNode* c);
  std::string call(const CallNode* c);

  std::vector<TensorMapUse> tmaps_;
  bool in_consumer_ = false;
  bool in_producer_ = false;  // inside the producer role (cuda.warp_role "producer"): one thread runs dist ops
  CudaLaunchInfo* info_ = nullptr;
  std::ostringstream os_;
  int indent_ = 0;
  NameTable names_;
  std::map<const BufferNode*, int64_t> smem_offset_;
  std::set<const VarNode*> dyn_is_param_;
  // Variables and buffers whose declaration was emitted already (a second one gets a new name).
  std::set<const void*> declared_;
  Span cur_span_;
  bool has_assert_ = false;
};

}  // namespace cuda_codegen
}  // namespace tl
