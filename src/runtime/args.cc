#include "runtime/args.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>

#include "arith/analyzer.h"
#include "arith/region.h"
#include "ir/error.h"
#include "ir/eval.h"
#include "ir/printer.h"

namespace tl {

std::string device_str(int32_t device_type, int32_t device_id) {
  switch (device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda:" + std::to_string(device_id);
    case kDLCUDAHost: return "cuda_host (pinned host memory)";
    case kDLCUDAManaged: return "cuda_managed:" + std::to_string(device_id);
    case 4: return "opencl:" + std::to_string(device_id);
    case 7: return "vulkan:" + std::to_string(device_id);
    case 8: return "metal:" + std::to_string(device_id);
    case 10: return "rocm:" + std::to_string(device_id);
    default: return "device type " + std::to_string(device_type) + ":" + std::to_string(device_id);
  }
}

namespace {

// Buffers the kernel may write: destinations of stores, of scalar atomics and of tile ops
// (arith/region.h). When the analysis cannot say, every buffer counts as written.
std::set<const BufferNode*> written_buffers(const PrimFunc& f) {
  std::set<const BufferNode*> out;
  try {
    Analyzer analyzer;
    for (const BufferRegion& r : collect_access_regions(f.body(), analyzer).writes) out.insert(r.buffer.get());
  } catch (const Error&) {
    for (const Param& p : f.params())
      if (p.is_buffer()) out.insert(p.buffer.get());
  }
  return out;
}

std::string join_shape(const int64_t* v, size_t n) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << v[i];
  os << "]";
  return os.str();
}

std::string join_specs(const std::vector<DimSpec>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i].text;
  return s + "]";
}

bool fits(DataType t, int64_t v) {
  if (t.is_bool()) return v == 0 || v == 1;
  if (t.bits >= 64) return !t.is_uint() || v >= 0;
  if (t.is_uint()) return v >= 0 && v < (int64_t(1) << t.bits);
  int64_t lim = int64_t(1) << (t.bits - 1);
  return v >= -lim && v < lim;
}

// Shape expressions may only use integer arithmetic on constants and dynamic variables.
bool supported_shape_expr(const Expr& e) {
  switch (e.kind()) {
    case ExprKind::kIntImm:
    case ExprKind::kVar: return true;
    case ExprKind::kCast: return e.dtype().is_integer() && supported_shape_expr(e.as<CastNode>()->value);
    case ExprKind::kBinary: {
      auto* b = e.as<BinaryNode>();
      switch (b->op) {
        case BinOp::kAdd: case BinOp::kSub: case BinOp::kMul: case BinOp::kDiv: case BinOp::kMod:
        case BinOp::kFloorDiv: case BinOp::kFloorMod: case BinOp::kMin: case BinOp::kMax:
          return supported_shape_expr(b->a) && supported_shape_expr(b->b);
        default: return false;
      }
    }
    default: return false;
  }
}

}  // namespace

ArgBinder::ArgBinder(const PrimFunc& f, const Target& target, std::vector<int> out_idx, std::vector<int> workspace_idx)
    : kernel_name_(f.name()), target_(target) {
  vars_ = f.dynamic_vars();
  const int n_all = static_cast<int>(f.params().size());
  // T.alloc_global buffers are the last `hidden` parameters: never passed by the caller, allocated
  // (zero-filled) at each call like workspace_idx entries. out_idx / workspace_idx count only the
  // parameters the user declared (a negative index is relative to the last of those).
  const int hidden = static_cast<int>(attr_int(f.attrs(), "tl.global_workspaces", 0));
  if (hidden < 0 || hidden > n_all)
    throw_error<ValueError>("kernel '", kernel_name_, "': attribute tl.global_workspaces = ", hidden, " is out of range");
  const int n = n_all - hidden;
  auto var_index = [&](const Expr& e) -> int {
    for (size_t i = 0; i < vars_.size(); ++i)
      if (vars_[i].get() == e.get()) return static_cast<int>(i);
    return -1;
  };
  auto normalize = [&](std::vector<int>& idx, const char* what) {
    for (auto& i : idx) {
      if (i < -n || i >= n)
        throw_error<ValueError>(what, " entry ", i, " is out of range: kernel '", kernel_name_, "' has ", n,
                                " parameters (valid: ", -n, " .. ", n - 1, ")");
      if (i < 0) i += n;
      if (!f.params()[i].is_buffer())
        throw_error<ValueError>(what, " entry ", i, " names scalar parameter '", f.params()[i].name,
                                "'; only tensor parameters can be allocated by the runtime");
    }
    std::vector<int> sorted = idx;
    std::sort(sorted.begin(), sorted.end());
    auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end())
      throw_error<ValueError>(what, " lists parameter ", *dup, " ('", f.params()[*dup].name, "') twice");
  };
  normalize(out_idx, "out_idx");
  normalize(workspace_idx, "workspace_idx");
  for (int o : out_idx)
    if (std::find(workspace_idx.begin(), workspace_idx.end(), o) != workspace_idx.end())
      throw_error<ValueError>("parameter ", o, " ('", f.params()[o].name, "') is in both out_idx and workspace_idx");
  for (int i = n; i < n_all; ++i) workspace_idx.push_back(i);
  out_idx_ = out_idx;
  workspace_idx_ = workspace_idx;

  std::set<const BufferNode*> written = written_buffers(f);
  for (int i = 0; i < n_all; ++i) {
    const Param& prm = f.params()[i];
    ParamSpec p;
    p.name = prm.name;
    p.index = i;
    if (std::find(out_idx.begin(), out_idx.end(), i) != out_idx.end()) p.role = ParamRole::kOutput;
    if (std::find(workspace_idx.begin(), workspace_idx.end(), i) != workspace_idx.end()) p.role = ParamRole::kWorkspace;
    p.is_tensor = prm.is_buffer();
    if (p.is_tensor) {
      const Buffer& b = prm.buffer;
      p.dtype = b.dtype();
      auto classify = [&](const Expr& e) {
        DimSpec d;
        d.text = print_expr(e);
        int64_t c = 0;
        if (is_const_int(e, &c)) {
          d.kind = DimSpec::kConst;
          d.value = c;
        } else if (e.as<VarNode>() && var_index(e) >= 0) {
          d.kind = DimSpec::kVar;
          d.var = var_index(e);
          d.expr = e;
        } else {
          if (!supported_shape_expr(e))
            throw_error<NotImplemented>("not implemented: parameter '", p.name, "' has shape/stride entry '", d.text,
                                        "'; shapes may use + - * // % min max of integers and T.dynamic variables");
          d.kind = DimSpec::kExpr;
          d.expr = e;
        }
        return d;
      };
      for (auto& e : b.shape()) p.shape.push_back(classify(e));
      for (auto& e : b->strides) p.strides.push_back(classify(e));
      p.signature = p.name + ": " + p.dtype.str() + join_specs(p.shape);
      if (!p.strides.empty()) p.signature += " strides " + join_specs(p.strides);
    } else {
      p.dtype = prm.var.dtype();
      p.scalar_var = var_index(prm.var);
      scalar_param_vars_.resize(static_cast<size_t>(i) + 1, nullptr);
      scalar_param_vars_[static_cast<size_t>(i)] = prm.var.get();
      p.signature = p.name + ": " + p.dtype.str();
    }
    p.written = p.is_tensor && written.count(prm.buffer.get());
    params_.push_back(std::move(p));
    scalar_param_vars_.resize(params_.size(), nullptr);
    if (params_.back().role == ParamRole::kInput) user_params_.push_back(i);
    else allocated_params_.push_back(i);
  }
}

void ArgBinder::set_index_limit(int64_t limit, const std::vector<Var>& vars) {
  index_limit_ = limit;
  limited_vars_.clear();
  limited_params_.clear();
  if (limit <= 0) return;
  for (const Var& v : vars) {
    bool found = false;
    for (size_t i = 0; i < vars_.size(); ++i)
      if (vars_[i].get() == v.get()) {
        limited_vars_.push_back(static_cast<int>(i));
        found = true;
      }
    if (found) continue;
    for (size_t i = 0; i < params_.size(); ++i)
      if (scalar_param_vars_[i] == v.get()) limited_params_.push_back(static_cast<int>(i));
  }
}

void ArgBinder::fail_index_limit(const ParamSpec& p, const std::string& what, int64_t value) const {
  std::ostringstream os;
  os << what << " is " << value << ", beyond +-" << index_limit_
     << ", the range this kernel's 32-bit index arithmetic was compiled for (a larger value would make "
        "indices overflow); compile it with pass_configs={'tl.config_index_bitwidth': 64} for 64-bit indices";
  fail(p, os.str());
}

void ArgBinder::check_index_limits(const State& st) const {
  for (int v : limited_vars_) {
    int64_t x = st.values[static_cast<size_t>(v)];
    if (st.bound_by[static_cast<size_t>(v)] >= 0 && (x > index_limit_ || x < -index_limit_))
      fail_index_limit(params_[static_cast<size_t>(st.bound_by[static_cast<size_t>(v)])],
                       "dynamic variable '" + vars_[static_cast<size_t>(v)]->name + "'", x);
  }
}

void ArgBinder::fail(const ParamSpec& p, const std::string& what) const {
  std::ostringstream os;
  os << kernel_name_ << "(): parameter '" << p.name << "' (" << p.signature << "): " << what;
  throw ArgumentError(os.str());
}

void ArgBinder::check_count(size_t n) const {
  if (n == user_params_.size()) return;
  std::ostringstream os;
  os << kernel_name_ << "() takes " << user_params_.size() << " argument" << (user_params_.size() == 1 ? "" : "s")
     << " (";
  for (size_t k = 0; k < user_params_.size(); ++k) os << (k ? ", " : "") << params_[user_params_[k]].signature;
  os << ") but " << n << " were given";
  if (!allocated_params_.empty()) {
    os << "; ";
    for (size_t k = 0; k < allocated_params_.size(); ++k)
      os << (k ? ", " : "") << "'" << params_[allocated_params_[k]].name << "'";
    os << (allocated_params_.size() == 1 ? " is" : " are") << " allocated by the runtime (out_idx/workspace_idx) "
       << "and must not be passed";
  }
  throw ArgumentError(os.str());
}

void ArgBinder::check_writable(size_t k, bool read_only) const {
  const ParamSpec& p = params_[user_params_.at(k)];
  if (p.written && read_only)
    fail(p, "the kernel writes to this tensor, but the argument is read-only memory (a numpy array with "
            "flags.writeable == False, a buffer over bytes, a read-only DLPack export); pass a writable array, "
            "e.g. numpy.array(arg)");
}

std::string ArgBinder::describe_binding(int var, const State& st) const {
  std::ostringstream os;
  os << vars_[var]->name << " = " << st.values[var];
  if (st.bound_by[var] >= 0) os << ", bound from parameter '" << params_[st.bound_by[var]].name << "'";
  return os.str();
}

bool ArgBinder::eval(const Expr& e, const State& st, int64_t* out, int* unbound) const {
  // The one int64 evaluator (ir/eval.h); a dynamic variable no argument has bound yet is unknown.
  int first_unbound = -1;
  auto lookup = [&](const VarNode* v, int64_t* val) {
    for (size_t i = 0; i < vars_.size(); ++i)
      if (vars_[i].get() == v) {
        if (st.bound_by[i] == -1) {
          if (first_unbound < 0) first_unbound = static_cast<int>(i);
          return false;
        }
        *val = st.values[i];
        return true;
      }
    return false;
  };
  if (eval_int(e, lookup, out) == IntEval::kOk) return true;
  if (unbound && first_unbound >= 0) *unbound = first_unbound;
  return false;
}

bool ArgBinder::eval_with(const Expr& e, const State& st, int var, int64_t value, int64_t* out) const {
  State tmp = st;
  tmp.values[var] = value;
  tmp.bound_by[var] = -2;
  return eval(e, tmp, out, nullptr);
}

void ArgBinder::bind_dim(const ParamSpec& p, const DimSpec& d, int64_t given, const char* what, size_t axis,
                         const int64_t* all_given, size_t rank, State& st) const {
  auto mismatch = [&](int64_t expected, const std::string& why) {
    std::ostringstream os;
    os << what << " " << axis << " (" << d.text << ") must be " << expected << why << ", got " << given << " (the "
       << what << "s given are " << join_shape(all_given, rank) << ")";
    fail(p, os.str());
  };
  switch (d.kind) {
    case DimSpec::kConst:
      if (given != d.value) mismatch(d.value, "");
      return;
    case DimSpec::kVar:
      if (st.bound_by[d.var] == -1) {
        if (!fits(vars_[d.var].dtype(), given)) {
          std::ostringstream os;
          os << what << " " << axis << " binds dynamic variable '" << d.text << "' (" << vars_[d.var].dtype().str()
             << ") to " << given << ", which does not fit its type";
          fail(p, os.str());
        }
        st.values[d.var] = given;
        st.bound_by[d.var] = p.index;
      } else if (st.values[d.var] != given) {
        mismatch(st.values[d.var], " (" + describe_binding(d.var, st) + ")");
      }
      return;
    case DimSpec::kExpr: return;  // resolved after every bare variable is bound
  }
}

void ArgBinder::bind(const CallArg* args, size_t n, State& st) const {
  check_count(n);
  st.values.assign(vars_.size(), 0);
  st.bound_by.assign(vars_.size(), -1);
  st.device_param = -1;
  struct Pending {
    const ParamSpec* p;
    const DimSpec* d;
    int64_t given;
    const char* what;
    size_t axis;
    // A copy of the tensor's dimensions or strides, for the message: the stride scratch buffer is
    // reused by the next tensor (only expression dimensions get here, so the copy is rare).
    std::vector<int64_t> all;
  };
  std::vector<Pending> pending;
  int64_t compact[16];
  int64_t packed_shape[16];
  std::vector<int64_t> compact_big;

  for (size_t k = 0; k < n; ++k) {
    const ParamSpec& p = params_[user_params_[k]];
    const CallArg& a = args[k];
    if (!p.is_tensor) {
      const DataType t = p.dtype;
      int64_t iv = 0;
      if (t.is_float()) {
        if (a.kind != CallArg::kFloat && a.kind != CallArg::kInt)
          fail(p, "expects a float scalar (Python float or int), got " +
                      (a.kind == CallArg::kTensor ? std::string("a tensor") : a.kind == CallArg::kBool ? "bool" : a.type_name));
      } else if (t.is_bool()) {
        if (a.kind != CallArg::kBool && !(a.kind == CallArg::kInt && (a.i == 0 || a.i == 1)))
          fail(p, "expects a bool scalar, got " + (a.kind == CallArg::kTensor ? std::string("a tensor")
                                                   : a.kind == CallArg::kInt  ? "int " + std::to_string(a.i)
                                                                              : a.type_name));
        iv = a.i;
      } else {
        if (a.kind != CallArg::kInt && a.kind != CallArg::kBool)
          fail(p, "expects an integer scalar (Python int), got " +
                      (a.kind == CallArg::kTensor ? std::string("a tensor") : a.kind == CallArg::kFloat ? "float" : a.type_name));
        iv = a.i;
        if (!fits(t, iv)) fail(p, "value " + std::to_string(iv) + " does not fit in " + t.str());
        if (index_limit_ > 0 && (iv > index_limit_ || iv < -index_limit_))
          for (int lp : limited_params_)
            if (lp == p.index) fail_index_limit(p, "integer argument", iv);
      }
      if (p.scalar_var >= 0) {
        if (st.bound_by[p.scalar_var] == -1) {
          st.values[p.scalar_var] = iv;
          st.bound_by[p.scalar_var] = p.index;
        } else if (st.values[p.scalar_var] != iv) {
          fail(p, "value " + std::to_string(iv) + " disagrees with the tensor shapes (" +
                      describe_binding(p.scalar_var, st) + ")");
        }
      }
      continue;
    }
    // Tensor parameter.
    if (a.kind != CallArg::kTensor) {
      std::string got = a.kind == CallArg::kInt ? "int" : a.kind == CallArg::kFloat ? "float"
                        : a.kind == CallArg::kBool ? "bool" : a.type_name;
      fail(p, "expects a tensor (numpy array, torch tensor or any DLPack object), got " + got);
    }
    const TensorArg& t0 = a.tensor;
    // float4_e2m1fn elements are packed two a byte (docs/FLOAT4.md): the tensor is the bytes
    // (torch.float4_e2m1fn_x2, int8 or uint8) with a last dimension half the parameter's.
    TensorArg packed;
    if (p.dtype.is_fp4()) {
      if (t0.dtype != p.dtype && t0.dtype != DataType::Int(8) && t0.dtype != DataType::UInt(8))
        fail(p, "expects float4_e2m1fn data packed two elements a byte (a torch.float4_e2m1fn_x2, int8 or uint8 "
                "tensor whose last dimension is half the parameter's), got " + t0.dtype.str());
      if (!p.strides.empty())
        throw_error<NotImplemented>("not implemented: float4_e2m1fn parameter '", p.name, "' declared with strides "
                                    "(T.StridedTensor); declare it with T.Tensor and pass a contiguous tensor");
      if (t0.ndim < 1 || static_cast<size_t>(t0.ndim) > sizeof(packed_shape) / sizeof(packed_shape[0]))
        fail(p, "expects a " + std::to_string(p.shape.size()) + "-d tensor of packed float4_e2m1fn bytes, got " +
                    std::to_string(t0.ndim) + "-d");
      packed = t0;
      for (int ax = 0; ax < t0.ndim; ++ax) packed_shape[ax] = t0.shape[ax];
      packed_shape[t0.ndim - 1] *= 2;  // elements, not bytes
      packed.shape = packed_shape;
      if (t0.strides) {
        int64_t expected = 1;
        for (int ax = t0.ndim - 1; ax >= 0; --ax) {
          if (t0.shape[ax] != 1 && t0.strides[ax] != expected)
            fail(p, "must be contiguous (row-major) packed float4_e2m1fn bytes, but its strides are " +
                        join_shape(t0.strides, t0.ndim) + " for shape " + join_shape(t0.shape, t0.ndim) +
                        "; pass a contiguous copy (.contiguous())");
          expected *= t0.shape[ax];
        }
      }
      packed.strides = nullptr;
      packed.dtype = p.dtype;
    }
    const TensorArg& t = p.dtype.is_fp4() ? packed : t0;
    if (t.dtype != p.dtype) fail(p, "expects dtype " + p.dtype.str() + ", got " + t.dtype.str());
    if (t.read_only) check_writable(k, true);
    if (static_cast<size_t>(t.ndim) != p.shape.size())
      fail(p, "expects a " + std::to_string(p.shape.size()) + "-d tensor, got " + std::to_string(t.ndim) +
                  "-d with shape " + join_shape(t.shape, t.ndim));
    // Device.
    bool host_target = !target_.is_cuda();
    bool device_ok = host_target ? (t.device_type == kDLCPU || t.device_type == kDLCUDAHost)
                                 : (t.device_type == kDLCUDA || t.device_type == kDLCUDAManaged);
    if (!device_ok) {
      if (host_target)
        fail(p, "is on " + device_str(t.device_type, t.device_id) + ", but target '" + target_.str() +
                    "' needs host (cpu) memory; move it with .cpu() or compile for the tensor's device");
      fail(p, "is on " + device_str(t.device_type, t.device_id) + ", but target '" + target_.str() +
                  "' needs cuda device memory; move it with .cuda()");
    }
    if (st.device_param < 0) {
      st.device_param = p.index;
      st.device_type = t.device_type;
      st.device_id = t.device_id;
    } else if (!host_target && (t.device_id != st.device_id)) {
      fail(p, "is on " + device_str(t.device_type, t.device_id) + " but parameter '" + params_[st.device_param].name +
                  "' is on " + device_str(st.device_type, st.device_id) + "; all tensors of one call must be on one device");
    }
    // Shape.
    for (size_t ax = 0; ax < p.shape.size(); ++ax) {
      const DimSpec& d = p.shape[ax];
      bind_dim(p, d, t.shape[ax], "dimension", ax, t.shape, t.ndim, st);
      if (d.kind == DimSpec::kExpr) pending.push_back({&p, &d, t.shape[ax], "dimension", ax, std::vector<int64_t>(t.shape, t.shape + t.ndim)});
    }
    // Strides. A tensor without them is compact row-major: contiguous, with strides computed only
    // when a T.StridedTensor parameter binds them.
    if (p.strides.empty()) {
      if (!t.strides) continue;
      bool empty = false;
      for (int ax = 0; ax < t.ndim; ++ax) empty |= t.shape[ax] == 0;
      int64_t expected = 1;
      for (int ax = t.ndim - 1; ax >= 0 && !empty; --ax) {
        if (t.shape[ax] != 1 && t.strides[ax] != expected) {
          fail(p, "must be contiguous (row-major), but its strides are " + join_shape(t.strides, t.ndim) +
                      " elements for shape " + join_shape(t.shape, t.ndim) +
                      " (a transposed or sliced view?); pass a contiguous copy (numpy.ascontiguousarray / "
                      ".contiguous()) or declare the parameter with T.StridedTensor");
        }
        expected *= t.shape[ax];
      }
      continue;
    }
    const int64_t* strides = t.strides;
    if (!strides) {
      int64_t* buf = compact;
      if (t.ndim > 16) {
        compact_big.resize(t.ndim);
        buf = compact_big.data();
      }
      int64_t acc = 1;
      for (int ax = t.ndim - 1; ax >= 0; --ax) {
        buf[ax] = acc;
        acc *= t.shape[ax];
      }
      strides = buf;
    }
    for (size_t ax = 0; ax < p.strides.size(); ++ax) {
      const DimSpec& d = p.strides[ax];
      bind_dim(p, d, strides[ax], "stride", ax, strides, t.ndim, st);
      if (d.kind == DimSpec::kExpr) pending.push_back({&p, &d, strides[ax], "stride", ax, std::vector<int64_t>(strides, strides + t.ndim)});
    }
  }

  // Entries that are expressions: check them, solving for one unknown variable when it is affine.
  if (pending.empty()) {
    if (!limited_vars_.empty()) check_index_limits(st);
    return;
  }
  std::vector<bool> done(pending.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < pending.size(); ++i) {
      if (done[i]) continue;
      const Pending& q = pending[i];
      int64_t v = 0;
      int unbound = -1;
      if (eval(q.d->expr, st, &v, &unbound)) {
        if (v != q.given) {
          std::ostringstream os;
          os << q.what << " " << q.axis << " (" << q.d->text << ") must be " << v << " (";
          bool first = true;
          for (size_t j = 0; j < vars_.size(); ++j)
            if (st.bound_by[j] != -1) {
              os << (first ? "" : "; ") << describe_binding(static_cast<int>(j), st);
              first = false;
            }
          os << "), got " << q.given << " (the " << q.what << "s given are " << join_shape(q.all.data(), q.all.size()) << ")";
          fail(*q.p, os.str());
        }
        done[i] = true;
        progress = true;
        continue;
      }
      if (unbound < 0) {
        fail(*q.p, std::string("cannot evaluate ") + q.what + " " + std::to_string(q.axis) + " (" + q.d->text +
                       ") for the given arguments (division by zero?)");
      }
      // Try to solve q.given = f(var) assuming f is affine in the one unknown.
      int64_t f0 = 0, f1 = 0;
      bool single = eval_with(q.d->expr, st, unbound, 0, &f0) && eval_with(q.d->expr, st, unbound, 1, &f1);
      if (!single) continue;  // more than one unknown: wait for another entry to bind one
      int64_t slope = f1 - f0, sol = 0, check = 0;
      bool solved = slope != 0 && (q.given - f0) % slope == 0 &&
                    eval_with(q.d->expr, st, unbound, sol = (q.given - f0) / slope, &check) && check == q.given;
      if (!solved) {
        std::ostringstream os;
        os << q.what << " " << q.axis << " is " << q.given << ", which is not a value of " << q.d->text
           << " for any integer " << vars_[unbound]->name;
        fail(*q.p, os.str());
      }
      st.values[unbound] = sol;
      st.bound_by[unbound] = q.p->index;
      progress = true;
    }
  }
  for (size_t i = 0; i < pending.size(); ++i)
    if (!done[i])
      fail(*pending[i].p, std::string("cannot determine the dynamic variables of ") + pending[i].what + " " +
                              std::to_string(pending[i].axis) + " (" + pending[i].d->text +
                              "): give one of them a dimension of its own in some input");
  if (!limited_vars_.empty()) check_index_limits(st);
}

void ArgBinder::alloc_shape(int param, const State& st, std::vector<int64_t>* shape) const {
  const ParamSpec& p = params_[param];
  shape->clear();
  for (size_t ax = 0; ax < p.shape.size(); ++ax) {
    const DimSpec& d = p.shape[ax];
    int64_t v = d.value;
    int unbound = -1;
    if (d.kind != DimSpec::kConst && !eval(d.expr, st, &v, &unbound)) {
      if (unbound >= 0)
        fail(p, "cannot allocate this " + std::string(p.role == ParamRole::kOutput ? "output" : "workspace") +
                    ": dimension " + std::to_string(ax) + " (" + d.text + ") uses dynamic variable '" +
                    vars_[unbound]->name + "', which no input tensor determines; pass the tensor yourself "
                    "(remove it from out_idx) or add an input whose shape uses it");
      fail(p, "cannot evaluate dimension " + std::to_string(ax) + " (" + d.text + ") (division by zero?)");
    }
    if (v < 0) fail(p, "dimension " + std::to_string(ax) + " (" + d.text + ") evaluates to " + std::to_string(v));
    shape->push_back(v);
  }
  if (p.dtype.is_fp4() && !shape->empty()) {  // packed two a byte (docs/FLOAT4.md)
    if (shape->back() % 2 != 0)
      fail(p, "cannot allocate this float4_e2m1fn " + std::string(p.role == ParamRole::kOutput ? "output" : "workspace") +
                  ": its last dimension (" + std::to_string(shape->back()) + ") is odd, and its elements are packed "
                  "two a byte; make the last dimension even");
    shape->back() /= 2;
  }
}

void ArgBinder::pack(const CallArg* args, void* const* allocated_data, const State& st, std::vector<TLArg>* out) const {
  out->resize(params_.size() + vars_.size());
  size_t user = 0, alloc = 0;
  for (size_t i = 0; i < params_.size(); ++i) {
    const ParamSpec& p = params_[i];
    TLArg& slot = (*out)[i];
    if (p.role != ParamRole::kInput) {
      slot.ptr = allocated_data[alloc++];
      continue;
    }
    const CallArg& a = args[user++];
    if (p.is_tensor) slot.ptr = a.tensor.data;
    else if (p.dtype.is_float()) slot.f64 = a.kind == CallArg::kFloat ? a.f : static_cast<double>(a.i);
    else slot.i64 = a.i;
  }
  for (size_t j = 0; j < vars_.size(); ++j) {
    if (st.bound_by[j] == -1)
      throw_error<ArgumentError>(kernel_name_, "(): dynamic variable '", vars_[j]->name,
                                 "' is not determined by any argument");
    (*out)[params_.size() + j].i64 = st.values[j];
  }
}

}  // namespace tl
