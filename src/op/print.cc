// T.print(buffer, msg) and T.dump_tensor(buffer, desc, size): print a tile, one line per
// element, through the target's tl.printf (on cpu: the runtime's ordered print callback). On
// targets with many threads per block one thread prints; on cpu a block is one thread.
//   print:        msg='<msg>' buffer=<name> index=[i, j] dtype=<dtype> value=<v>
//   dump_tensor:  dump_tensor desc=<desc> buffer=<name> index=<flat> dtype=<dtype> value=<v>
// dump_tensor prints the first `size` elements of the tile in row-major order.
#include "ir/error.h"
#include "ir/printf_format.h"
#include "op/op_util.h"
#include "op/tile_ops.h"

namespace tl {
namespace {

// printf conversion and argument for one element value.
std::pair<std::string, Expr> value_format(const Expr& v) {
  DataType t = v.dtype();
  if (t.is_float()) return {"%.9g", make_cast(DataType::Float(64), v)};
  if (t.is_uint()) return {"%llu", make_cast(DataType::UInt(64), v)};
  return {"%lld", make_cast(DataType::Int64(), v)};
}

void check_printable(const TileOpNode& op) {
  const BufferRegion& r = region_arg(op, 0, "buffer");
  check_region_well_formed(op, r, "buffer");
  if (r.buffer.dtype().is_handle()) throw_op_error_type(op, "cannot print buffer '" + r.buffer.name() + "' of dtype handle");
}

void check_print(const TileOpNode& op) {
  check_num_args(op, 1, 1, "T.print(buffer, msg)");
  check_printable(op);
}

AccessRegions access_print(const TileOpNode& op) {
  AccessRegions a;
  a.read(op, 0);
  return a;
}

Stmt lower_print(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& r = op.args[0].region;
  LoopNest nest = make_loop_nest(r.squeezed_extents(), "i");
  std::vector<Expr> idx = region_indices(r, nest.indices());
  std::string fmt = "msg='" + escape_printf_percent(attr_str(op.attrs, "msg", "")) + "' buffer=" + escape_printf_percent(r.buffer.name()) +
                    " index=[";
  std::vector<Expr> args = {Expr()};
  for (size_t d = 0; d < idx.size(); ++d) {
    fmt += d ? ", %lld" : "%lld";
    args.push_back(make_cast(DataType::Int64(), idx[d]));
  }
  auto [conv, value] = value_format(make_load(r.buffer, idx));
  fmt += "] dtype=" + r.buffer.dtype().str() + " value=" + conv + "\n";
  args.push_back(value);
  args[0] = make_string(fmt);
  return nest.wrap(make_evaluate(make_call(DataType::Void(), "tl.printf", args), op.span), ForKind::kSerial);
}

void check_dump_tensor(const TileOpNode& op) {
  check_num_args(op, 1, 1, "T.dump_tensor(buffer, desc, size)");
  check_printable(op);
  if (attr_int(op.attrs, "size", 0) < 0) throw_op_error_value(op, "size must be non-negative");
}

Stmt lower_dump_tensor(const TileOpNode& op, const LowerContext&) {
  const BufferRegion& r = op.args[0].region;
  std::vector<Expr> ext = r.squeezed_extents();
  Expr total = make_int(1, DataType::Int64());
  for (auto& e : ext) total = total * make_cast(DataType::Int64(), e);
  Expr count = total;
  if (auto it = op.attrs.find("size"); it != op.attrs.end() && !it->second.is_none())
    count = min(total, make_int(it->second.as_int(), DataType::Int64()));
  Var f("f", DataType::Int64());
  // Row-major position of flat element f.
  std::vector<Expr> pos(ext.size());
  Expr rest = f;
  for (size_t d = ext.size(); d-- > 0;) {
    Expr e = make_cast(DataType::Int64(), ext[d]);
    pos[d] = make_cast(ext[d].dtype(), d == 0 ? rest : floormod(rest, e));
    rest = floordiv(rest, e);
  }
  auto [conv, value] = value_format(region_load(r, pos));
  std::string fmt = "dump_tensor desc=" + std::to_string(attr_int(op.attrs, "desc", 0)) + " buffer=" +
                    escape_printf_percent(r.buffer.name()) + " index=%lld dtype=" + r.buffer.dtype().str() + " value=" + conv +
                    "\n";
  Stmt body = make_evaluate(make_call(DataType::Void(), "tl.printf", {make_string(fmt), f, value}), op.span);
  return make_for(f, make_int(0, DataType::Int64()), count, ForKind::kSerial, body);
}

}  // namespace

void PrintOp::verify(const TileOpNode& op) const { dumps_tensor_ ? check_dump_tensor(op) : check_print(op); }
AccessRegions PrintOp::effects(const TileOpNode& op) const { return access_print(op); }
Stmt PrintOp::lower_loops(const TileOpNode& op, const LowerContext& ctx) const {
  return dumps_tensor_ ? lower_dump_tensor(op, ctx) : lower_print(op, ctx);
}

namespace {
TileOpRegistration reg_print(std::make_unique<PrintOp>("print", false));
TileOpRegistration reg_dump(std::make_unique<PrintOp>("dump_tensor", true));
}  // namespace

}  // namespace tl
