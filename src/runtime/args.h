// Call-time argument checking and binding: turns the caller's tensors and scalars into the TLArg
// vector of include/tl/cpu/abi.h, after checking count, dtype, rank, shape, strides and device.
// Dynamic dimensions (T.dynamic) bind from their first use and must agree everywhere after.
// Every failure is a tl::ArgumentError naming the parameter, what was expected and what was given.
//
// The binder is built once per compiled kernel; bind() does no IR walking on the hot path except
// for shape entries that are expressions of dynamic variables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/target.h"
#include "tl/cpu/abi.h"

namespace tl {

// Device type codes of TensorArg: DLPack's values (the bindings check them against nanobind's DLPack
// declarations, bindings/dlpack.h), so that an imported DLPack device needs no translation.
enum DeviceCode : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
std::string device_str(int32_t device_type, int32_t device_id);  // "cpu", "cuda:0", "cuda_host", ...

// A framework-neutral view of one tensor argument.
struct TensorArg {
  void* data = nullptr;
  int32_t ndim = 0;
  const int64_t* shape = nullptr;
  const int64_t* strides = nullptr;  // in elements; null means compact row-major
  DataType dtype;
  int32_t device_type = kDLCPU;
  int32_t device_id = 0;
  bool read_only = false;  // the exporter marked the memory read-only (numpy writeable=False, bytes, DLPack flag)
};

// One positional argument of a call.
struct CallArg {
  enum Kind : uint8_t { kMissing, kTensor, kInt, kFloat, kBool, kOther };
  Kind kind = kMissing;
  TensorArg tensor;
  int64_t i = 0;
  double f = 0;
  std::string type_name;  // kOther (and tensors not understood): the caller's type, for messages
};

enum class ParamRole : uint8_t { kInput, kOutput, kWorkspace };

// A shape or stride entry, pre-classified so binding rarely walks expressions.
struct DimSpec {
  enum Kind : uint8_t { kConst, kVar, kExpr };
  Kind kind = kConst;
  int64_t value = 0;  // kConst
  int var = -1;       // kVar: index into the dynamic variables
  Expr expr;          // kVar, kExpr
  std::string text;   // printed form, for messages
};

struct ParamSpec {
  std::string name;
  int index = 0;
  ParamRole role = ParamRole::kInput;
  bool is_tensor = false;
  DataType dtype;
  std::vector<DimSpec> shape;
  std::vector<DimSpec> strides;  // only for T.StridedTensor; empty means "must be contiguous"
  int scalar_var = -1;           // a scalar parameter that is also a dynamic variable
  bool written = false;          // a tensor the kernel may write (stores, tile-op destinations, atomics)
  std::string signature;         // "A: float16[M, K]"
};

class ArgBinder {
 public:
  // out_idx / workspace_idx may be negative (Python style); they are normalized and checked
  // (in range, tensor parameters, no duplicates, not both) with ValueError on misuse.
  ArgBinder(const PrimFunc& f, const Target& target, std::vector<int> out_idx = {},
            std::vector<int> workspace_idx = {});

  struct State {
    std::vector<int64_t> values;  // dynamic variable values
    std::vector<int> bound_by;    // per variable: -1 unbound, else the parameter index that bound it
    int32_t device_type = 0, device_id = 0;
    int device_param = -1;        // the parameter whose device the others must match
  };

  const std::string& kernel_name() const { return kernel_name_; }
  size_t num_params() const { return params_.size(); }
  const ParamSpec& param(size_t i) const { return params_[i]; }
  // Parameter index of each argument the caller passes, in order.
  const std::vector<int>& user_params() const { return user_params_; }
  // Parameters the runtime allocates (outputs and workspaces), in parameter order.
  const std::vector<int>& allocated_params() const { return allocated_params_; }
  const std::vector<int>& out_idx() const { return out_idx_; }
  const std::vector<int>& workspace_idx() const { return workspace_idx_; }
  const std::vector<Var>& dynamic_vars() const { return vars_; }

  // The call-time side of config_index_bitwidth: the kernel's 32-bit index arithmetic holds
  // only while these run-time integers (dynamic dimensions, integer scalar parameters) stay
  // within [-limit, limit]; bind() raises ArgumentError otherwise. limit 0: no check.
  void set_index_limit(int64_t limit, const std::vector<Var>& vars);
  int64_t index_limit() const { return index_limit_; }

  // Checks the argument count (ArgumentError listing the expected parameters).
  void check_count(size_t n) const;
  // ArgumentError when user argument k is read-only memory and the kernel writes its parameter.
  void check_writable(size_t k, bool read_only) const;
  // Checks user arguments (args[k] is for user_params()[k]) and binds dynamic variables.
  void bind(const CallArg* args, size_t n, State& st) const;
  // Shape of an allocated parameter from the bound variables.
  void alloc_shape(int param, const State& st, std::vector<int64_t>* shape) const;
  // The ABI argument vector: one slot per parameter (user arguments from `args`, allocated ones
  // from `allocated_data`, in allocated_params() order), then one per dynamic variable.
  void pack(const CallArg* args, void* const* allocated_data, const State& st, std::vector<TLArg>* out) const;

 private:
  [[noreturn]] void fail(const ParamSpec& p, const std::string& what) const;
  void bind_dim(const ParamSpec& p, const DimSpec& d, int64_t given, const char* what, size_t axis,
                const int64_t* all_given, size_t rank, State& st) const;
  std::string describe_binding(int var, const State& st) const;
  void check_index_limits(const State& st) const;
  [[noreturn]] void fail_index_limit(const ParamSpec& p, const std::string& what, int64_t value) const;
  bool eval(const Expr& e, const State& st, int64_t* out, int* unbound) const;
  bool eval_with(const Expr& e, const State& st, int var, int64_t value, int64_t* out) const;

  int64_t index_limit_ = 0;
  std::vector<int> limited_vars_;    // indices into vars_
  std::vector<int> limited_params_;  // integer scalar parameters that are not dynamic variables
  std::vector<const VarNode*> scalar_param_vars_;  // per parameter: its variable (scalars)
  std::string kernel_name_;
  Target target_;
  std::vector<ParamSpec> params_;
  std::vector<Var> vars_;
  std::vector<int> user_params_, allocated_params_, out_idx_, workspace_idx_;
};

}  // namespace tl
