// The T.tile.* element-wise family (Ascend vector primitives; on other targets lowered to loops
// so that the kernel still runs) and the Developer-form T.exp(src, dst) / T.add(dst, a, b) that
// the frontend maps onto them. Forms (dst first):
//   tile.<unary>(dst, src)              exp ln log abs reciprocal sqrt rsqrt relu sigmoid silu
//                                       sin cos neg exp2 tanh
//   tile.<binary>(dst, a, b)            add sub mul div max min pow; b a tile or a scalar
//   tile.axpy(dst, src, s)              dst += s * src
//   tile.cast(dst, src, mode=...)       conversion with a rounding mode (include/tl/cpu/cast.h)
//   tile.compare(dst, a, b, mode=...)   EQ NE GT GE LT LE -> 1/0 per element (bool, uint8 or any
//                                       numeric dst), or a uint8 bit mask (8 elements per byte,
//                                       bit i%8) when dst's last extent is a's divided by 8
//   tile.select(dst, mask, a, b)        mask != 0 ? a : b (mask per element or a bit mask)
//   tile.transpose(dst, src)            2-D transpose
//   tile.broadcast(dst, src)            src's unit dimensions (and missing trailing ones) repeated to dst's shape
//   tile.reinterpretcast(dst, src)      dst views src's bytes (Ascend only: the planner aliases them)
//   tile.createvecindex(dst, first)     first, first + 1, ... in row-major order
//   tile.gather(dst, src, offs, base)   dst[i] = src element at byte base + offs[i] (Ascend only)
// Math is computed in float32 for 16/8-bit floats. tile.sort / topk / reduce_* have no loop form.
#include <functional>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/printer.h"
#include "layout/infer_layout.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

bool float_only_unary(const std::string& f) { return f != "abs" && f != "neg" && f != "relu"; }

Expr apply_unary(const std::string& f, const Expr& x) {
  DataType t = x.dtype();
  if (f == "exp" || f == "sqrt" || f == "rsqrt" || f == "sigmoid" || f == "sin" || f == "cos" || f == "exp2" ||
      f == "tanh" || f == "abs")
    return make_call(t, f, {x});
  if (f == "ln" || f == "log") return make_call(t, "log", {x});
  if (f == "reciprocal") return make_binary(BinOp::kDiv, make_const(t, 1), x);
  if (f == "relu") return max(x, make_const(t, 0));
  if (f == "silu") return x * make_call(t, "sigmoid", {x});
  if (f == "neg") return -x;
  throw_error<Error>("internal error: unknown unary tile op ", f);
}

Expr apply_binary(const std::string& f, const Expr& a, const Expr& b) {
  if (f == "add") return a + b;
  if (f == "sub") return a - b;
  if (f == "mul") return a * b;
  if (f == "div") return make_binary(BinOp::kDiv, a, b);
  if (f == "max") return max(a, b);
  if (f == "min") return min(a, b);
  if (f == "pow") return make_call(a.dtype(), "pow", {a, b});
  if (f == "bitwise_and") return make_binary(BinOp::kBitAnd, a, b);
  if (f == "bitwise_or") return make_binary(BinOp::kBitOr, a, b);
  if (f == "bitwise_xor") return make_binary(BinOp::kBitXor, a, b);
  throw_error<Error>("internal error: unknown binary tile op ", f);
}

std::string suffix(const TileOpNode& op) { return op.op.substr(op.op.find('.') + 1); }

void check_numeric(const TileOpNode& op, const BufferRegion& r, bool float_only) {
  check_numeric_buffer(op, r, float_only,
                       float_only ? "this op needs a floating-point buffer"
                                  : "this op needs an integer or floating-point buffer");
}

// The value of operand i (a tile or a scalar) at a squeezed position, in type t.
Expr operand(const TileOpNode& op, size_t i, const std::vector<Expr>& pos, DataType t) {
  const TileArg& a = op.args[i];
  return make_cast(t, a.is_region() ? region_load(a.region, pos) : a.expr);
}

// dst[pos] = value(pos), cast to dst's dtype, for every squeezed position pos of dst (argument 0).
Stmt store_each(const TileOpNode& op, const std::function<Expr(const std::vector<Expr>&)>& value) {
  const BufferRegion& dst = op.args[0].region;
  LoopNest nest = make_loop_nest(dst.squeezed_extents(), "i");
  std::vector<Expr> pos = nest.indices();
  return nest.wrap(
      make_store(dst.buffer, region_indices(dst, pos), make_cast(dst.buffer.dtype(), value(pos)), op.span));
}

void check_tile_or_scalar(const TileOpNode& op, size_t i, const char* role, const BufferRegion& dst) {
  if (op.args[i].is_region()) {
    check_region_well_formed(op, op.args[i].region, role);
    check_same_extents(op, dst, "dst", op.args[i].region, role);
  } else if (op.args[i].expr.dtype().is_handle() || op.args[i].expr.dtype().is_void()) {
    throw_op_error_type(op, std::string("operand ") + role + " must be a tile or a number");
  }
}

// ---- unary ----------------------------------------------------------------------------------

void check_unary(const TileOpNode& op) {
  check_num_args(op, 2, 2, ("T.tile." + suffix(op) + "(dst, src)").c_str());
  check_same_shape_tiles(op, 0, "dst", 1, "src");
  check_numeric(op, op.args[0].region, float_only_unary(suffix(op)));
  check_numeric(op, op.args[1].region, false);
}

Stmt lower_unary(const TileOpNode& op, const LowerContext&) {
  DataType t = compute_dtype(op.args[0].region.buffer.dtype());
  std::string f = suffix(op);
  return store_each(op, [&](const std::vector<Expr>& pos) { return apply_unary(f, operand(op, 1, pos, t)); });
}

// ---- binary / axpy --------------------------------------------------------------------------

void check_binary(const TileOpNode& op) {
  check_num_args(op, 3, 3, ("T.tile." + suffix(op) + "(dst, a, b)").c_str());
  const BufferRegion& dst = region_arg(op, 0, "dst");
  check_region_well_formed(op, dst, "dst");
  const BufferRegion& a = region_arg(op, 1, "a");
  check_region_well_formed(op, a, "a");
  check_same_extents(op, dst, "dst", a, "a");
  check_tile_or_scalar(op, 2, "b", dst);
  check_numeric(op, dst, suffix(op) == "pow");
  check_numeric(op, a, false);
  if (suffix(op).rfind("bitwise_", 0) == 0)
    for (size_t i = 0; i < 3; ++i)
      if (op.args[i].is_region() && !op.args[i].region.buffer.dtype().is_integer())
        throw_op_error_type(op, "T.tile." + suffix(op) + " works on integer tiles, but '" +
                                    op.args[i].region.buffer.name() + "' is " + op.args[i].region.buffer.dtype().str());
}

Stmt lower_binary(const TileOpNode& op, const LowerContext&) {
  DataType t = compute_dtype(op.args[0].region.buffer.dtype());
  std::string f = suffix(op);
  return store_each(op, [&](const std::vector<Expr>& pos) {
    return apply_binary(f, operand(op, 1, pos, t), operand(op, 2, pos, t));
  });
}

void check_axpy(const TileOpNode& op) {
  check_num_args(op, 3, 3, "T.tile.axpy(dst, src, scalar)");
  check_same_shape_tiles(op, 0, "dst", 1, "src");
  expr_arg(op, 2, "scalar");
  check_numeric(op, op.args[0].region, false);
  check_numeric(op, op.args[1].region, false);
}

AccessRegions access_axpy(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  a.read(op, 1);
  a.write(op, 0);
  return a;
}

Stmt lower_axpy(const TileOpNode& op, const LowerContext&) {
  DataType t = compute_dtype(op.args[0].region.buffer.dtype());
  return store_each(op, [&](const std::vector<Expr>& pos) {
    return operand(op, 0, pos, t) + make_cast(t, op.args[2].expr) * operand(op, 1, pos, t);
  });
}

// ---- cast -----------------------------------------------------------------------------------

const std::vector<std::string> kCastModes = {"CAST_NONE", "CAST_RINT",  "CAST_FLOOR", "CAST_CEIL",
                                             "CAST_ROUND", "CAST_TRUNC", "CAST_ODD"};

void check_cast(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.tile.cast(dst, src, mode)");
  check_same_shape_tiles(op, 0, "dst", 1, "src");
  checked_str_attr(op, "mode", kCastModes, "CAST_NONE");
  for (const TileArg& a : op.args)
    if (a.region.buffer.dtype().is_handle())
      throw_op_error_type(op, "cannot cast buffer '" + a.region.buffer.name() + "' of dtype handle");
}

Stmt lower_cast(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& dst = op.args[0].region;
  const BufferRegion& src = op.args[1].region;
  std::string mode = checked_str_attr(op, "mode", kCastModes, "CAST_NONE");
  DataType to = dst.buffer.dtype(), from = src.buffer.dtype();
  // Round-to-nearest-even float conversions and anything from an integer are plain casts.
  bool nearest = mode == "CAST_NONE" || mode == "CAST_RINT";
  bool plain = to == from || !from.is_float() || (nearest && to.is_float());
  return store_each(op, [&](const std::vector<Expr>& pos) {
    Expr x = region_load(src, pos);
    return plain ? x : make_call(to, "tl.cast_rounding", {x, make_string(mode)});
  });
}

// ---- compare / select -----------------------------------------------------------------------

const std::vector<std::string> kCompareModes = {"EQ", "NE", "GT", "GE", "LT", "LE"};

// True when `mask` holds 8 elements of `full` per byte along the last dimension.
bool is_bit_mask(const TileOpNode& op, const BufferRegion& mask, const BufferRegion& full, const char* role) {
  auto me = mask.squeezed_extents(), fe = full.squeezed_extents();
  bool same = me.size() == fe.size();
  for (size_t i = 0; same && i < me.size(); ++i) same = extents_may_equal(me[i], fe[i]);
  if (same) return false;
  int64_t m_last, f_last;
  bool packed = mask.buffer.dtype() == DataType::UInt(8) && me.size() == fe.size() && !me.empty() &&
                is_const_int(me.back(), &m_last) && is_const_int(fe.back(), &f_last) && m_last * 8 == f_last;
  for (size_t i = 0; packed && i + 1 < me.size(); ++i) packed = extents_may_equal(me[i], fe[i]);
  if (!packed) {
    std::ostringstream os;
    os << role << " " << describe_region(mask) << " must have the shape " << describe_extents(fe) << " of "
       << describe_region(full) << " (one element each), or be a uint8 bit mask with a last extent 8 times smaller; "
       << "got " << describe_extents(me);
    throw_op_error_value(op, os.str());
  }
  return true;
}

void check_compare(const TileOpNode& op) {
  check_num_args(op, 3, 3, "T.tile.compare(dst, a, b, mode)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  const BufferRegion& a = region_arg(op, 1, "a");
  check_region_well_formed(op, dst, "dst");
  check_region_well_formed(op, a, "a");
  check_tile_or_scalar(op, 2, "b", a);
  checked_str_attr(op, "mode", kCompareModes, "EQ");
  DataType t = dst.buffer.dtype();
  if (!(t.is_bool() || t.is_integer() || t.is_float()))
    throw_op_error_type(op, "dst buffer '" + dst.buffer.name() + "' has dtype " + t.str() +
                                "; compare writes a mask (bool / uint8, or 1 and 0 in a numeric buffer)");
  is_bit_mask(op, dst, a, "dst");
}

Expr compare(const std::string& mode, const Expr& a, const Expr& b) {
  static const std::map<std::string, BinOp> ops = {{"EQ", BinOp::kEQ}, {"NE", BinOp::kNE}, {"GT", BinOp::kGT},
                                                   {"GE", BinOp::kGE}, {"LT", BinOp::kLT}, {"LE", BinOp::kLE}};
  return make_binary(ops.at(mode), a, b);
}

// Loops over the bytes of a bit mask `mask` (shape of `full` with the last extent / 8); `bit`
// builds the predicate of element (pos of full).
Stmt packed_mask_loops(const BufferRegion& mask, const std::function<Expr(const std::vector<Expr>&)>& bit,
                       const Span& span) {
  LoopNest nest = make_loop_nest(mask.squeezed_extents(), "i");
  std::vector<Expr> base = nest.indices();
  Expr byte;
  for (int b = 0; b < 8; ++b) {
    std::vector<Expr> pos = base;
    pos.back() = pos.back() * 8 + b;
    Expr term = make_cast(DataType::UInt(8), bit(pos));
    if (b) term = make_binary(BinOp::kShl, term, make_int(b, DataType::UInt(8)));
    byte = byte.defined() ? make_binary(BinOp::kBitOr, byte, term) : term;
  }
  return nest.wrap(make_store(mask.buffer, region_indices(mask, base), byte, span));
}

Stmt lower_compare(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& dst = op.args[0].region;
  const BufferRegion& a = op.args[1].region;
  std::string mode = checked_str_attr(op, "mode", kCompareModes, "EQ");
  DataType t = compute_dtype(a.buffer.dtype());
  auto pred = [&](const std::vector<Expr>& pos) {
    return compare(mode, operand(op, 1, pos, t), operand(op, 2, pos, t));
  };
  if (is_bit_mask(op, dst, a, "dst")) return packed_mask_loops(dst, pred, op.span);
  return store_each(op, pred);
}

void check_select(const TileOpNode& op) {
  check_num_args(op, 4, 4, "T.tile.select(dst, mask, a, b, mode)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  const BufferRegion& mask = region_arg(op, 1, "mask");
  const BufferRegion& a = region_arg(op, 2, "a");
  check_region_well_formed(op, dst, "dst");
  check_region_well_formed(op, mask, "mask");
  check_region_well_formed(op, a, "a");
  check_same_extents(op, dst, "dst", a, "a");
  check_tile_or_scalar(op, 3, "b", dst);
  if (auto it = op.attrs.find("mode"); it != op.attrs.end() && !it->second.is_none() && it->second.kind() != Attr::kStr &&
                                        it->second.kind() != Attr::kInt)
    throw_op_error_type(op, "attribute 'mode' must be a string");
  DataType mt = mask.buffer.dtype();
  if (!(mt.is_bool() || mt.is_integer() || mt.is_float()))
    throw_op_error_type(op, "mask buffer '" + mask.buffer.name() + "' has dtype " + mt.str() + "; use bool or uint8");
  is_bit_mask(op, mask, dst, "mask");
}

Stmt lower_select(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& dst = op.args[0].region;
  const BufferRegion& mask = op.args[1].region;
  bool packed = is_bit_mask(op, mask, dst, "mask");
  DataType t = compute_dtype(dst.buffer.dtype());
  return store_each(op, [&](const std::vector<Expr>& pos) {
    Expr m;
    if (packed) {
      std::vector<Expr> byte_pos = pos;
      byte_pos.back() = floordiv(pos.back(), make_int(8, pos.back().dtype()));
      Expr shift = make_cast(DataType::UInt(8), floormod(pos.back(), make_int(8, pos.back().dtype())));
      Expr byte = region_load(mask, byte_pos);
      m = ne(make_binary(BinOp::kBitAnd, make_binary(BinOp::kShr, byte, shift), make_int(1, DataType::UInt(8))),
             make_int(0, DataType::UInt(8)));
    } else {
      Expr mv = region_load(mask, pos);
      m = mv.dtype().is_bool() ? mv : ne(mv, make_int(0, mv.dtype()));
    }
    return make_select(m, operand(op, 2, pos, t), operand(op, 3, pos, t));
  });
}

// ---- transpose / broadcast ------------------------------------------------------------------

void check_transpose(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.tile.transpose(dst, src)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  const BufferRegion& src = region_arg(op, 1, "src");
  check_region_well_formed(op, dst, "dst");
  check_region_well_formed(op, src, "src");
  auto de = dst.squeezed_extents(), se = src.squeezed_extents();
  if (de.size() != 2 || se.size() != 2 || !extents_may_equal(de[0], se[1]) || !extents_may_equal(de[1], se[0]))
    throw_op_error_value(op, "transpose needs 2-D tiles with dst [n, m] for src [m, n]; got dst " +
                                 describe_region(dst) + " and src " + describe_region(src));
}

Stmt lower_transpose(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& src = op.args[1].region;
  return store_each(op, [&](const std::vector<Expr>& pos) { return region_load(src, {pos[1], pos[0]}); });
}

void check_broadcast(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.tile.broadcast(dst, src)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  const BufferRegion& src = region_arg(op, 1, "src");
  check_region_well_formed(op, dst, "dst");
  check_region_well_formed(op, src, "src");
  // A lower-rank src lines up with dst's leading dimensions (a row vector [R] -> [R, C]: each element
  // repeated along its row, as TileLang-Ascend's brcb-style broadcast).
  bool ok = src.region.size() <= dst.region.size() && !src.region.empty();
  for (size_t d = 0; ok && d < src.region.size(); ++d)
    ok = is_one(src.region[d].extent) || extents_may_equal(src.region[d].extent, dst.region[d].extent);
  if (!ok)
    throw_op_error_value(op, "broadcast needs src with dst's rank (or fewer dimensions, lining up with dst's leading "
                             "ones) and, per dimension, extent 1 or dst's extent; got dst " +
                                 describe_region(dst) + " and src " + describe_region(src));
}

Stmt lower_broadcast(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& dst = op.args[0].region;
  const BufferRegion& src = op.args[1].region;
  LoopNest nest = make_loop_nest(dst.squeezed_extents(), "i");
  std::vector<Expr> didx = region_indices(dst, nest.indices());
  std::vector<Expr> sidx;
  for (size_t d = 0; d < src.region.size(); ++d)
    sidx.push_back(is_one(src.region[d].extent) ? src.region[d].min : didx[d] - dst.region[d].min + src.region[d].min);
  return nest.wrap(make_store(dst.buffer, didx, make_cast(dst.buffer.dtype(), make_load(src.buffer, sidx)), op.span));
}

// ---- ops without a loop form ----------------------------------------------------------------

void check_dst_first(const TileOpNode& op) {
  if (op.args.empty()) throw_op_error_type(op, "expects a destination buffer as first argument");
  check_region_well_formed(op, region_arg(op, 0, "dst"), "dst");
}

AccessRegions access_dst_first(const TileOpNode& op) { return dst_first_access(op); }

// tile.reduce_sum / _max / _min(dst, src): with clear=False the result is combined with dst's old value.
AccessRegions access_vector_reduce(const TileOpNode& op) {
  AccessRegions a = dst_first_access(op);
  if (!attr_bool(op.attrs, "clear", true)) a.read(op, 0);
  return a;
}

// ---- reinterpretcast / createvecindex / gather (TileLang-Ascend's AscendC primitives) ------------

// Elements of a region when its extents are constants (-1 otherwise).
int64_t const_elements(const BufferRegion& r) {
  int64_t n = 1;
  for (auto& rg : r.region) {
    int64_t e;
    if (!is_const_int(rg.extent, &e)) return -1;
    n *= e;
  }
  return n;
}

std::string typed_extent(const BufferRegion& r) {
  std::ostringstream os;
  os << "'" << r.buffer.name() << "' " << r.buffer.dtype().str() << describe_extents(r.buffer.shape());
  return os.str();
}

// tile.reinterpretcast(dst, src, dtype=...): from here on dst names src's bytes as dst's dtype (AscendC
// LocalTensor::ReinterpretCast). No instruction: the Ascend memory planner gives dst src's address
// (ascend_plan_memory), so later writes through either buffer are seen through the other.
void check_reinterpretcast(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.reinterpretcast(dst, src, dtype)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  const BufferRegion& src = region_arg(op, 1, "src");
  for (const BufferRegion* r : {&dst, &src}) {
    bool full = r->region.size() == r->buffer.ndim();
    for (size_t d = 0; full && d < r->region.size(); ++d) {
      int64_t mn, ex, sh;
      full = is_const_int(r->region[d].min, &mn) && mn == 0 && is_const_int(r->region[d].extent, &ex) &&
             is_const_int(r->buffer.shape()[d], &sh) && ex == sh;
    }
    if (!full)
      throw_op_error_value(op, "T.reinterpretcast aliases whole buffers of constant shape; '" + r->buffer.name() +
                                   "' is given as the region " + describe_region(*r));
  }
  if (dst.buffer.same_as(src.buffer)) throw_op_error_value(op, "dst and src are the same buffer");
  auto it = op.attrs.find("dtype");
  if (it != op.attrs.end() && !it->second.is_none()) {
    std::string name = it->second.as_str();
    // AscendC spells the element type as a C++ type: uint32_t, half, float, bfloat16_t.
    if (name.size() > 2 && name.compare(name.size() - 2, 2, "_t") == 0) name = name.substr(0, name.size() - 2);
    if (name == "half") name = "float16";
    if (name == "float") name = "float32";
    DataType t;
    if (!try_parse_dtype(name, &t))
      throw_op_error_type(op, "unknown element type '" + it->second.as_str() + "'");
    if (t != dst.buffer.dtype())
      throw_op_error_type(op, "the cast type '" + it->second.as_str() + "' is not the dtype of dst " +
                                  typed_extent(dst) + "; pass the cast type " +
                                  dst.buffer.dtype().str() + ", or allocate dst with dtype " + name);
  }
  int64_t db = const_elements(dst) * dst.buffer.dtype().element_bytes();
  int64_t sb = const_elements(src) * src.buffer.dtype().element_bytes();
  if (db != sb)
    throw_op_error_type(op, "dst " + typed_extent(dst) + " is " + std::to_string(db) +
                                " bytes but src " + typed_extent(src) + " is " + std::to_string(sb) +
                                " bytes; a reinterpretation keeps the bytes, so dst needs " +
                                std::to_string(sb) + " bytes (" + std::to_string(sb / std::max(1, dst.buffer.dtype().element_bytes())) +
                                " elements of " + dst.buffer.dtype().str() + ")");
}

// tile.createvecindex(dst, first): dst = first, first + 1, ... in row-major order of dst's region.
void check_createvecindex(const TileOpNode& op) {
  check_num_args(op, 2, 2, "T.tile.createvecindex(dst, first_value)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  check_region_well_formed(op, dst, "dst");
  DataType t = dst.buffer.dtype();
  if (!(t == DataType::Int(16) || t == DataType::Int(32) || t == DataType::Float(16) || t == DataType::Float(32)))
    throw_op_error_type(op, "dst " + typed_extent(dst) +
                                " must be int16, int32, float16 or float32 (AscendC CreateVecIndex)");
  const Expr& first = expr_arg(op, 1, "first_value");
  if (!first.dtype().is_integer() && !first.dtype().is_float())
    throw_op_error_type(op, "first_value must be a number, got " + print_expr(first));
}

Stmt lower_createvecindex(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& dst = op.args[0].region;
  std::vector<Expr> ext = dst.squeezed_extents();
  DataType t = compute_dtype(dst.buffer.dtype());
  return store_each(op, [&](const std::vector<Expr>& pos) {
    Expr lin = make_int(0);
    for (size_t d = 0; d < pos.size(); ++d) lin = lin * ext[d] + pos[d];
    return make_cast(t, op.args[1].expr) + make_cast(t, lin);
  });
}

// tile.gather(dst, src, offsets, base): dst[i] = element of src at byte (base + offsets[i]) from src's
// origin, for i < min(|dst|, |offsets|) (AscendC Gather: uint32 byte offsets). No loop form.
void check_gather(const TileOpNode& op) {
  check_num_args(op, 4, 4, "T.tile.gather(dst, src, src_offset, src_base_addr)");
  const BufferRegion& dst = region_arg(op, 0, "dst");
  const BufferRegion& src = region_arg(op, 1, "src");
  const BufferRegion& off = region_arg(op, 2, "src_offset");
  for (auto* r : {&dst, &src, &off}) check_region_well_formed(op, *r, "operand");
  DataType t = dst.buffer.dtype();
  if (src.buffer.dtype() != t)
    throw_op_error_type(op, "dst " + typed_extent(dst) + " and src " + typed_extent(src) +
                                " must have the same dtype");
  if (t.element_bytes() != 2 && t.element_bytes() != 4)
    throw_op_error_type(op, "dst " + typed_extent(dst) +
                                " must have 2- or 4-byte elements (AscendC Gather: half, bfloat16, float, int16/32, "
                                "uint16/32)");
  if (off.buffer.dtype() != DataType::UInt(32))
    throw_op_error_type(op, "src_offset " + typed_extent(off) +
                                " must be uint32 byte offsets; view an int32 tile as uint32 with "
                                "T.reinterpretcast(offsets_u32, offsets_i32, \"uint32_t\")");
  const Expr& base = expr_arg(op, 3, "src_base_addr");
  if (!base.dtype().is_integer())
    throw_op_error_type(op, "src_base_addr must be an integer byte offset, got " + print_expr(base));
}

struct Registrations {
  Registrations() {
    for (const char* u : {"exp", "ln", "log", "abs", "reciprocal", "sqrt", "rsqrt", "relu", "sigmoid", "silu", "sin",
                          "cos", "neg", "exp2", "tanh"})
      register_tile_op(std::make_unique<ElementwiseOp>(u, ElementwiseArity::kUnary, check_unary, access_dst_first, lower_unary));
    for (const char* b : {"add", "sub", "mul", "div", "max", "min", "pow", "bitwise_and", "bitwise_or", "bitwise_xor"})
      register_tile_op(std::make_unique<ElementwiseOp>(b, ElementwiseArity::kBinary, check_binary, access_dst_first, lower_binary));
    register_tile_op(std::make_unique<ElementwiseOp>("axpy", ElementwiseArity::kOther, check_axpy, access_axpy, lower_axpy));
    register_tile_op(std::make_unique<ElementwiseOp>("cast", ElementwiseArity::kOther, check_cast, access_dst_first, lower_cast));
    register_tile_op(std::make_unique<ElementwiseOp>("compare", ElementwiseArity::kOther, check_compare, access_dst_first, lower_compare));
    register_tile_op(std::make_unique<ElementwiseOp>("select", ElementwiseArity::kOther, check_select, access_dst_first, lower_select));
    register_tile_op(std::make_unique<ElementwiseOp>("transpose", ElementwiseArity::kOther, check_transpose, access_dst_first, lower_transpose));
    register_tile_op(std::make_unique<ElementwiseOp>("broadcast", ElementwiseArity::kOther, check_broadcast, access_dst_first, lower_broadcast));
    register_tile_op(std::make_unique<ElementwiseOp>("reinterpretcast", ElementwiseArity::kOther, check_reinterpretcast,
                                                     access_dst_first, nullptr));
    register_tile_op(std::make_unique<ElementwiseOp>("createvecindex", ElementwiseArity::kOther, check_createvecindex,
                                                     access_dst_first, lower_createvecindex));
    register_tile_op(std::make_unique<ElementwiseOp>("gather", ElementwiseArity::kOther, check_gather, access_dst_first,
                                                     nullptr));
    for (const char* o : {"sort", "topk"})
      register_tile_op(std::make_unique<ElementwiseOp>(o, ElementwiseArity::kOther, check_dst_first, access_dst_first, nullptr));
    for (const char* o : {"reduce_sum", "reduce_max", "reduce_min"})
      register_tile_op(std::make_unique<ElementwiseOp>(o, ElementwiseArity::kOther, check_dst_first, access_vector_reduce,
                                                       nullptr));
  }
};
Registrations registrations;

}  // namespace

// Layout inference: element-wise ops may give any of their fragments the default layout.
bool ElementwiseOp::infer_layout(const TileOpNode& op, LayoutInference& ctx, LayoutStage stage) const {
  return stage == LayoutStage::kFree && ctx.set_default_fragment(op);
}

Stmt ElementwiseOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const {
  if (!lower_)
    throw_error<NotImplemented>(op_error_prefix(op), "not implemented: T.", name(), " on target ", ctx.target.kind_name(),
                                " (this op has no loop form; it exists only as an Ascend vector instruction)");
  return lower_(op, ctx);
}

}  // namespace tl
