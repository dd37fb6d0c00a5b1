// The cuda emulator's interpreter (internal to src/target/cuda/emulator*.cc, not installed; the
// entry point is emulate_cuda in emulator.h, whose comment describes what is emulated and checked).
//
// Its member functions are defined by concern:
//   emulator_interpreter.cc  the grid and block loops, variables, expressions and statements
//   emulator_memory.cc       buffer addressing, bounds checks and the shared-memory race checker
//   emulator_builtins.cc     barriers, cp.async, vector/cast copies, device_assert, atomics and
//                            tl::allreduce (the builtin and device calls a statement makes)
//   emulator_gemm.cc         the mma.sync (include/tl/cuda/gemm.h) and wgmma (wgmma.h) GEMM contracts
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "target/cuda/emulator.h"
#include "target/cuda/emulator_values.h"

namespace tl::cuda_emu {

// What a shared-memory byte remembers since the last barrier, for the race checker.
struct ByteState {
  int32_t w_thread = -1;
  int64_t w_epoch = -1;
  bool pending_async = false;
  int32_t r_thread = -1;
  int64_t r_epoch = -1;
  bool r_multi = false;
};

// A device function's spelling split into its name and template arguments:
// "tl::gemm_ss<64, 64, ...>" -> {"tl::gemm_ss", {"64", "64", ...}}.
struct Template {
  std::string name;
  std::vector<std::string> args;
};
Template parse_template(const std::string& callee);

// The IR type of a device-header element type name ("tl::half_t", "float", ...).
DataType type_of_name(const std::string& n);

class Emulator {
 public:
  Emulator(const PrimFunc& f, const std::vector<TLArg>& args) : f_(f), args_(args) {}

  EmulatorReport run();

 private:
  // ---- grid and blocks (emulator_interpreter.cc) ----
  static void rasterize(int64_t panel, bool row, const std::vector<int64_t>& g, int64_t x, int64_t y, int64_t* bx,
                        int64_t* by);
  void exec_top(const Stmt& s);  // lets and kernels at the top of the function, in order
  void run_kernel(const KernelLaunchNode& k);
  void run_block(const KernelLaunchNode& k, const std::vector<int64_t>& tdims);

  // ---- variables, expressions, statements (emulator_interpreter.cc) ----
  Val var_value(const VarNode* v, int64_t t);
  Val eval(const Expr& e, int64_t t);
  Val binary(const BinaryNode* b, int64_t t);
  Val call(const CallNode* c, int64_t t);
  void exec(const Stmt& s, const std::vector<char>& act);

  // ---- memory (emulator_memory.cc) ----
  Mem mem_of(const Buffer& b, int64_t t);
  int64_t flat_index(const Buffer& b, const std::vector<Expr>& idx, int64_t t);
  void check_range(const Mem& m, int64_t off, int64_t n, const char* what);
  void race(const std::string& msg);
  void shared_read(const Mem& m, int64_t off, int64_t n, int64_t t);
  void shared_write(const Mem& m, int64_t off, int64_t n, int64_t t, bool async);
  Val load(const Buffer& b, const std::vector<Expr>& idx, int64_t t);
  void store(const Buffer& b, const std::vector<Expr>& idx, const Val& v, int64_t t);
  Val address(const Expr& e, int64_t t);
  DataType address_type(const Expr& e);
  // Atomic read-modify-write (`kind` add/max/min/store/load) of the element `ref` (a BufferLoad)
  // by thread t; returns the old value. Threads of the block run it one after the other.
  Val atomic_update(const std::string& kind, const Expr& ref, const Val& v, int64_t t);

  // ---- builtin and device calls (emulator_builtins.cc) ----
  void barrier(const std::vector<char>& act, const char* what);
  void evaluate(const CallNode* c, const std::vector<char>& act, const Span& span);
  void collective_store(const BufferStoreNode* st, const CallNode* c, const std::vector<char>& act);

  // ---- GEMM contracts (emulator_gemm.cc) ----
  void gemm(const CallNode* c, const Template& tp, const std::vector<char>& act);
  void wgmma_gemm(const CallNode* c, const Template& tp, const std::vector<char>& act);

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

}  // namespace tl::cuda_emu
