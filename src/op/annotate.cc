// T.annotate_layout({buf: layout}) (kinds custom, swizzled, zn, nz, fragment) and T.annotate_address({buf: offset}): hints for layout
// inference and memory planning (cuda shared-memory swizzles, Ascend fractal layouts and pinned
// on-chip addresses). They neither read nor write data; the loop form is nothing (cpu buffers are
// plain row-major arrays).
#include "ir/error.h"
#include "ir/eval.h"
#include "ir/functor.h"
#include "ir/printer.h"
#include "layout/infer_layout.h"
#include "layout/swizzle.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

// "gmma": the wgmma / TMA layout of a shared tile (layout/swizzle.h, attr swizzle_bytes), which the
// cuda compiler pins on the staging buffers of its TMA-store epilogues (target/cuda/ws_tma_store.h).
const std::vector<std::string> kLayoutKinds = {"custom", "swizzled", "zn", "nz", "fragment", "gmma"};

bool has_list(const TileOpNode& op, const char* key) {
  auto it = op.attrs.find(key);
  return it != op.attrs.end() && it->second.kind() == Attr::kExprList;
}

void check_annotate_layout(const TileOpNode& op) {
  check_num_args(op, 1, 1, "T.annotate_layout({buffer: layout})");
  region_arg(op, 0, "buffer");
  std::string kind = checked_str_attr(op, "kind", kLayoutKinds, "custom");
  if ((kind == "custom" || kind == "fragment") && (!has_list(op, "vars") || !has_list(op, "exprs")))
    throw_op_error_type(op, "a " + kind + " layout needs the index variables ('vars') and the forward map ('exprs')");
  if (kind == "fragment") {
    auto it = op.attrs.find("thread");
    if (it == op.attrs.end() || it->second.is_none())
      throw_op_error_type(op, "a fragment layout (T.Fragment) needs its thread map ('thread')");
  }
}

void check_annotate_address(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.annotate_address({buffer: byte_offset})");
  const BufferRegion& r = region_arg(op, 0, "buffer");
  const Expr& off = expr_arg(op, 1, "byte_offset");
  if (!off.dtype().is_integer())
    throw_op_error_type(op, "the address of buffer '" + r.buffer.name() + "' must be an integer byte offset, got " +
                                print_expr(off));
  int64_t v;
  if (is_const_int(off, &v) && v < 0)
    throw_op_error_value(op, "the address of buffer '" + r.buffer.name() + "' must be non-negative, got " +
                                 std::to_string(v));
}

Stmt lower_nothing(const TileOpNode&, const LowerContext&) { return make_nop(); }

// The Fragment a T.Fragment annotation describes: its thread map ('thread') and register map
// ('exprs', one register index) over the index variables ('vars', then the replica variable when
// 'replicate' > 1), evaluated element by element. Our fragments are mixed radices (fragment.h):
// each digit of an index dimension (or of the replica) goes to threads or to registers with one
// stride. The digits are read off the map along each axis, then the whole map is checked element
// by element against the Fragment built from them; a map that is no such radix (two elements on
// one register of one thread, a nonlinear map) raises LayoutError saying why. The thread of element
// 0 (replica 0) is the fragment's first thread: a map `32 + ...` puts the fragment on threads
// [32, 32 + n) (Fragment::thread_offset); its register must be 0.
Fragment annotated_fragment(const TileOpNode& op, const Buffer& b) {
  const std::string where = op_error_prefix(op);
  std::vector<int64_t> shape = const_shape(b, "fragment");
  auto fail = [&](const std::string& why) -> Fragment {
    throw_error<LayoutError>(where, "the T.Fragment annotated for fragment '", b.name(), "' ", shape_str(shape),
                             " ", why);
  };
  const int64_t replicate = attr_int(op.attrs, "replicate", 1);
  if (replicate < 1) return fail("has replicate=" + std::to_string(replicate) + "; it must be at least 1");
  std::vector<const VarNode*> vars;
  for (const Expr& e : op.attrs.at("vars").as_expr_list()) {
    if (!e.as<VarNode>()) return fail("has an index variable that is not a variable: " + print_expr(e));
    vars.push_back(e.as<VarNode>());
  }
  const bool has_rep_var = vars.size() == shape.size() + 1;
  if (vars.size() != shape.size() && !has_rep_var)
    return fail("takes " + std::to_string(vars.size()) + " indices for a buffer of rank " +
                std::to_string(shape.size()));
  if (replicate > 1 && !has_rep_var)
    return fail("has replicate=" + std::to_string(replicate) + " but its forward_fn takes no replica argument "
                "(write forward_fn=lambda i, ..., rep: (thread, index))");
  std::vector<Expr> regs = op.attrs.at("exprs").as_expr_list();
  if (regs.size() != 1)
    return fail("maps an element to " + std::to_string(regs.size()) + " register indices; a fragment's registers are "
                "one flat index per thread (return (thread, index))");
  const Expr thread = op.attrs.at("thread").as_expr();
  std::vector<int64_t> vals(vars.size(), 0);
  auto lookup = [&](const VarNode* v, int64_t* out) {
    for (size_t i = 0; i < vars.size(); ++i)
      if (vars[i] == v) {
        *out = vals[i];
        return true;
      }
    return false;
  };
  int64_t base_thread = 0;  // the thread of element 0: subtracted, it is the fragment's offset
  auto at = [&](const std::vector<int64_t>& idx, int64_t rep) {
    for (size_t i = 0; i < shape.size(); ++i) vals[i] = idx[i];
    if (has_rep_var) vals.back() = rep;
    int64_t t = 0, r = 0;
    if (eval_int(thread, lookup, &t) != IntEval::kOk || eval_int(regs[0], lookup, &r) != IntEval::kOk)
      fail("has a thread or register map that is not integer arithmetic of its index variables (" + print_expr(thread) +
           ", " + print_expr(regs[0]) + ")");
    return std::pair<int64_t, int64_t>(t - base_thread, r);
  };
  auto idx_str = [&](const std::vector<int64_t>& idx, int64_t rep) {
    std::string s = shape_str(idx);
    return replicate > 1 ? s + " (replica " + std::to_string(rep) + ")" : s;
  };
  const std::vector<int64_t> zero(shape.size(), 0);
  {
    auto [t0, r0] = at(zero, 0);
    if (t0 < 0 || r0 != 0)
      return fail("puts element " + idx_str(zero, 0) + " on thread " + std::to_string(t0) + ", register " +
                  std::to_string(r0) + "; its first element must be on register 0 of the fragment's first thread "
                  "(a thread >= 0)");
    base_thread = t0;
  }
  // Digits along each axis: dimension d (axis d) and the replica (axis rank).
  std::vector<FragmentMode> modes;
  for (size_t a = 0; a <= shape.size(); ++a) {
    const bool rep_axis = a == shape.size();
    const int64_t extent = rep_axis ? replicate : shape[a];
    auto probe = [&](int64_t k) {
      std::vector<int64_t> idx = zero;
      if (rep_axis) return at(idx, k);
      idx[a] = k;
      return at(idx, 0);
    };
    int64_t pos = 1;
    while (pos < extent) {
      auto [t, r] = probe(pos);
      std::vector<int64_t> step = zero;
      if (!rep_axis) step[a] = pos;
      if (t == 0 && r == 0)
        return fail("puts element " + idx_str(step, rep_axis ? pos : 0) + " on thread 0, register 0, as element " +
                    idx_str(zero, 0) + ": the (thread, register) slots of the elements must be distinct");
      if ((t != 0) == (r != 0) || t < 0 || r < 0 || (rep_axis && r != 0))
        return fail("is not a mixed radix of thread and register digits: element " + idx_str(step, rep_axis ? pos : 0) +
                    " is on thread " + std::to_string(t) + ", register " + std::to_string(r) + ", but each digit of an "
                    "index must move the thread or the register (not both, not backwards)" +
                    (rep_axis ? ", and a replica only the thread" : ""));
      // The digit's extent: how far the map stays linear along the axis (the last digit may pad).
      int64_t e = 2;
      while (pos * e < extent && probe(pos * e) == std::pair<int64_t, int64_t>(t * e, r * e)) ++e;
      FragmentMode m;
      m.dim = rep_axis ? -1 : static_cast<int>(a);
      m.extent = e;
      m.dim_stride = rep_axis ? 0 : pos;
      m.thread_stride = t;
      m.reg_stride = r;
      modes.push_back(m);
      pos *= m.extent;
    }
  }
  Fragment f;
  try {
    f = Fragment::make(shape, modes);
  } catch (const LayoutError& e) {
    return fail(std::string("is not a layout of distinct (thread, register) slots: ") + e.what());
  }
  // The whole map, element by element (and replica by replica).
  std::vector<int64_t> idx = zero;
  for (;;) {
    for (int64_t rep = 0; rep < replicate; ++rep) {
      auto [t, r] = at(idx, rep);
      if (f.thread_at(idx, rep) != t || f.reg_at(idx) != r)
        return fail("is not a mixed radix of thread and register digits: element " + idx_str(idx, rep) + " is on thread " +
                    std::to_string(t + base_thread) + ", register " + std::to_string(r) +
                    ", where its digits put it on thread " + std::to_string(f.thread_at(idx, rep) + base_thread) +
                    ", register " + std::to_string(f.reg_at(idx)));
    }
    size_t d = shape.size();
    while (d > 0 && ++idx[d - 1] == shape[d - 1]) idx[--d] = 0;
    if (d == 0) break;
  }
  return f.with_thread_offset(base_thread);
}

}  // namespace

void AnnotateLayoutOp::verify(const TileOpNode& op) const { check_annotate_layout(op); }
Stmt AnnotateLayoutOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_nothing(op, ctx); }
void AnnotateAddressOp::verify(const TileOpNode& op) const { check_annotate_address(op); }
Stmt AnnotateAddressOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const { return lower_nothing(op, ctx); }

namespace {
TileOpRegistration reg_layout(std::make_unique<AnnotateLayoutOp>());
TileOpRegistration reg_address(std::make_unique<AnnotateAddressOp>());
}  // namespace

// The layout the user pinned (cuda: shared-memory swizzles and custom permutations; the Ascend
// kinds have no meaning there). Runs before every other layout constraint of the kernel.
bool AnnotateLayoutOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  if (stage != LayoutStage::kAnnotate) return false;
  if (op.args.empty() || !op.args[0].is_region()) return false;
  const Buffer& b = op.args[0].region.buffer;
  std::string kind = attr_str(op.attrs, "kind", "custom");
  if (b.scope() == MemScope::kShared) {
    std::vector<int64_t> shape = const_shape(b, "shared buffer");
    if (kind == "swizzled") {
      if (!swizzle_applicable(shape, b.dtype().element_bytes()))
        throw_error<LayoutError>(op_error_prefix(op), "no swizzled layout exists for shared buffer '", b.name(),
                                 "' ", shape_str(shape), " of ", b.dtype().str(),
                                 "; rows must be 16, 32, 64 or a multiple of 128 bytes");
      ctx.set_shared_layout(b, make_swizzled_layout(shape, b.dtype().element_bytes()));
    } else if (kind == "gmma") {
      ctx.set_shared_layout(b, make_gmma_layout(shape, b.dtype().element_bytes(),
                                                static_cast<int>(attr_int(op.attrs, "swizzle_bytes", 128))));
    } else if (kind == "custom") {
      auto vit = op.attrs.find("vars");
      auto eit = op.attrs.find("exprs");
      if (vit == op.attrs.end() || eit == op.attrs.end())
        throw_error<LayoutError>(op_error_prefix(op), "a custom layout needs 'vars' and 'exprs'");
      std::vector<Var> vars;
      for (const Expr& e : vit->second.as_expr_list()) {
        const VarNode* v = e.as<VarNode>();
        if (!v) throw_error<LayoutError>(op_error_prefix(op), "layout 'vars' must be variables");
        vars.push_back(Var(std::static_pointer_cast<const VarNode>(e.node())));
      }
      std::vector<Expr> exprs = eit->second.as_expr_list();
      if (vars.size() != shape.size())
        throw_error<LayoutError>(op_error_prefix(op), "the layout of '", b.name(), "' takes ", vars.size(),
                                 " indices for a buffer of rank ", shape.size());
      std::vector<int64_t> out_shape;
      // The output space: flat, as large as the largest image (checked bijective below).
      int64_t total = 1;
      for (int64_t s : shape) total *= s;
      Layout l = make_layout(shape, {total}, [&](const std::vector<Var>& v) {
        std::map<Var, Expr, VarLess> sub;
        for (size_t i = 0; i < vars.size(); ++i) sub[vars[i]] = v[i];
        std::vector<Expr> out;
        std::vector<Expr> mapped;
        for (const Expr& e : exprs) mapped.push_back(substitute(e, sub));
        if (mapped.size() == 1) return mapped;
        // A multi-dimensional image is flattened row-major over the buffer's own shape.
        return std::vector<Expr>{flatten_index(mapped, shape)};
      }, "custom");
      std::string why;
      if (!l.is_bijective(&why))
        throw_error<LayoutError>(op_error_prefix(op), "the layout annotated for '", b.name(),
                                 "' is not a permutation of its elements: ", why);
      ctx.set_shared_layout(b, l);
    } else {
      throw_error<LayoutError>(op_error_prefix(op), "layout kind '", kind,
                               "' is an Ascend layout; it has no meaning on target cuda");
    }
  } else if (is_fragment_buffer(b)) {
    // The user's thread/register map, pinned before every other constraint: an operator that needs
    // another layout for it (T.gemm's accumulator, a reduction's result) raises LayoutError naming
    // this annotation (LayoutInference::set_fragment).
    if (kind != "fragment")
      throw_error<LayoutError>(op_error_prefix(op), "fragment '", b.name(), "' takes a T.Fragment layout (the thread "
                               "and register of each element), not a ", kind, " layout");
    ctx.set_fragment(b, annotated_fragment(op, b), op_error_prefix(op) + "the annotated layout");
  }
  return true;
}

}  // namespace tl
