// TMA-store epilogues (see ws_tma_store.h).
#include "target/cuda/ws_tma_store.h"

#include <set>

#include "arith/analyzer.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "layout/swizzle.h"
#include "target/cuda/cuda_tma.h"
#include "transform/plan_shared_memory.h"

namespace tl {

namespace {

Stmt builtin(const std::string& op, std::vector<Expr> args) {
  return make_evaluate(make_call(DataType::Void(), op, std::move(args)));
}

int64_t slot_bytes(int64_t bytes) {  // plan_shared_memory's slot alignment (up to 1024)
  int64_t a = 1024;
  while (a > 128 && bytes % a != 0) a /= 2;
  return (bytes + a - 1) / a * a;
}

bool touches(const BodyItem& b, const BufferNode* buf) {
  std::set<const BufferNode*> used;
  if (b.is_stmt()) collect_buffer_uses(b.stmt, &used);
  else if (b.let_var.defined()) collect_buffer_uses(make_evaluate(b.let_value), &used);
  return used.count(buf) > 0;
}

// One eligible epilogue copy.
struct Candidate {
  size_t at = 0;
  const TileOpNode* op = nullptr;
  bool from_fragment = false;
  int64_t rows = 0, cols = 0;  // the tile
};

// The swizzle (0, 32, 64, 128) of a shared buffer as the copy lowering will see it, or -1 where TMA
// cannot read its layout.
int shared_swizzle(const LayoutMap& lm, const Buffer& b) {
  auto it = lm.shared.find(b);
  if (it == lm.shared.end()) return 0;
  const std::string& n = it->second->name;
  if (n == "row_major") return 0;
  if (n.rfind("gmma", 0) == 0) return std::stoi(n.substr(4));
  return -1;
}

}  // namespace

int64_t shared_bytes_estimate(const std::vector<BodyItem>& items, const std::vector<Buffer>& versioned, int64_t S,
                              int64_t extra) {
  int64_t total = extra;
  std::set<const BufferNode*> ver;
  for (const Buffer& b : versioned) ver.insert(b.get());
  std::set<const BufferNode*> seen;
  auto add = [&](const Buffer& b) {
    if (b.scope() != MemScope::kShared || !seen.insert(b.get()).second) return;
    int64_t n = b.dtype().element_bytes();
    for (const Expr& e : b.shape()) {
      int64_t x = 0;
      if (!is_const_int(e, &x)) return;
      n *= x;
    }
    total += slot_bytes(ver.count(b.get()) ? n * S : n);
  };
  for (const BodyItem& it : items) {
    if (it.alloc.defined()) add(it.alloc);
    if (it.is_stmt())
      post_order_visit(it.stmt, [&](const Stmt& s) {
        if (const auto* a = s.as<AllocateNode>()) add(a->buffer);
      });
  }
  return total;
}

TmaStoreEpilogue plan_tma_store_epilogue(const KernelLaunchNode& k, const std::vector<BodyItem>& top, size_t loop_at,
                                         const LayoutMap& lm, const std::vector<Param>& params,
                                         const PassContext& ctx, bool persistent, int64_t shared_bytes) {
  TmaStoreEpilogue out;
  if (config_bool(ctx.configs, "tl.disable_tma_store") || config_bool(ctx.configs, "tl.disable_tma_lower") ||
      k.thread_vars.size() != 1)
    return out;
  const Var& tid = k.thread_vars[0];
  const DataType it = tid.dtype();
  std::vector<Candidate> cands;
  for (size_t j = loop_at + 1; j < top.size(); ++j) {
    const auto* op = top[j].is_stmt() ? top[j].stmt.as<TileOpNode>() : nullptr;
    if (!op || !is_tile_op(*op, TileOpKind::kCopy) || op->args.size() < 2 || !op->args[0].is_region() ||
        !op->args[1].is_region())
      continue;
    if (attr_bool(op->attrs, "disable_tma", false)) continue;
    const BufferRegion& src = op->args[0].region;
    const BufferRegion& dst = op->args[1].region;
    const Buffer& g = dst.buffer;
    if (g.scope() != MemScope::kGlobal || g.ndim() < 2 || g.ndim() > 5 || tma_data_type(g.dtype()) < 0) continue;
    bool is_param = false;
    for (const Param& p : params) is_param |= p.is_buffer() && p.buffer.same_as(g);
    if (!is_param) continue;
    // The tile: the last dimension's extent (columns) and at most one other non-unit extent (rows;
    // attention's Output[b, rows, h, :]).
    int64_t rows = 1, cols = 0;
    bool const_ext = is_const_int(dst.region.back().extent, &cols);
    int other_dims = 0;
    for (size_t d = 0; d + 1 < g.ndim(); ++d) {
      int64_t e = 0;
      const_ext = const_ext && is_const_int(dst.region[d].extent, &e);
      if (e != 1) {
        rows = e;
        ++other_dims;
      }
    }
    if (!const_ext || other_dims > 1 || rows < 1 || rows > 256 || cols < 1) continue;
    // The whole source buffer, of the tile's shape.
    const Buffer& s = src.buffer;
    const bool frag = s.scope() == MemScope::kFragment;
    if (!frag && s.scope() != MemScope::kShared) continue;
    if (s.ndim() != 2) continue;
    bool whole = true;
    for (size_t d = 0; d < 2; ++d) {
      int64_t ext = 0;
      whole = whole && is_zero(src.region[d].min) && is_const_int(src.region[d].extent, &ext) &&
              is_const_value(s.shape()[d], ext) && ext == (d ? cols : rows);
    }
    if (!whole) continue;
    if (frag && lm.fragments.find(s) == lm.fragments.end()) continue;
    if (!frag) {
      if (s.dtype() != g.dtype() || shared_swizzle(lm, s) < 0) continue;
      // Written only after the loop (its first use there gets the wait).
      bool before = false;
      for (size_t i = 0; i <= loop_at; ++i) before = before || touches(top[i], s.get());
      if (before) continue;
    }
    // Nothing after the copy touches the tensor (the store is still in flight); in the persistent
    // form nothing else at all (the next tile's statements run while it is).
    bool other = false;
    for (size_t i = persistent ? 0 : j + 1; i < top.size(); ++i) other = other || (i != j && touches(top[i], g.get()));
    if (other) continue;
    cands.push_back({j, op, frag, rows, cols});
  }
  if (cands.empty()) return out;

  // Staging buffers: the whole tile in one buffer; else 128-byte column chunks in two, else in one.
  const int64_t limit = max_shared_bytes_per_block(ctx.target.arch);
  int64_t used = shared_bytes;
  auto elem = [](const Candidate& c) { return c.op->args[1].region.buffer.dtype().element_bytes(); };
  auto tile_ok = [&](const Candidate& c, int64_t w, int sw) {
    // Row bytes a multiple of 16, the global row stride too; at most 256 elements a box row.
    TmaBoxPlan plan;
    std::string why;
    BufferRegion part = c.op->args[1].region;
    part.region.back().extent = make_int(w, part.region.back().extent.dtype());
    return plan_tma_box(part, {c.rows, w}, sw, &plan, &why);
  };
  struct Choice {
    int64_t width = 0, nbuf = 0;
    int swizzle = 0;
  };
  std::vector<Choice> choices(cands.size());
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const Candidate& c = cands[ci];
    const int64_t eb = elem(c);
    if (!c.from_fragment) {
      const int sw = shared_swizzle(lm, c.op->args[0].region.buffer);
      if (tile_ok(c, c.cols, sw)) choices[ci] = {c.cols, 1, sw};
      continue;
    }
    std::vector<Choice> tries;
    tries.push_back({c.cols, 1, gmma_swizzle_bytes(c.cols, static_cast<int>(eb))});
    const int64_t w = 128 / eb;
    if (c.cols > w && c.cols % w == 0) {
      if ((c.cols / w) % 2 == 0) tries.push_back({w, 2, 128});
      tries.push_back({w, 1, 128});
    }
    for (const Choice& t : tries) {
      if (c.rows % 8 != 0 && t.swizzle) continue;  // gmma layouts take rows in groups of 8
      const int64_t bytes = t.nbuf * slot_bytes(c.rows * t.width * eb);
      if (used + bytes > limit || !tile_ok(c, t.width, t.swizzle)) continue;
      choices[ci] = t;
      used += bytes;
      break;
    }
  }

  Expr elected = eq(tid, make_int(0, it));
  auto wait = [&](int64_t keep) {
    return make_seq({make_if(elected, builtin("cuda.tma_store_wait", {make_int(keep)})),
                     builtin("tl.sync_threads", {})});
  };
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    const Candidate& c = cands[ci];
    const Choice& ch = choices[ci];
    if (!ch.width) continue;
    const BufferRegion& src = c.op->args[0].region;
    const BufferRegion& dst = c.op->args[1].region;
    AttrMap store_attrs;
    store_attrs["tma_store"] = Attr(true);
    store_attrs["swizzle"] = Attr(static_cast<int64_t>(ch.swizzle));
    if (!c.from_fragment) {
      // The program's own staging buffer: wait before the first statement after the loop that uses
      // it (persistent kernels: the previous tile's store may still read it).
      const BufferNode* sb = src.buffer.get();
      for (size_t i = loop_at + 1; persistent && i <= c.at; ++i) {
        if (!touches(top[i], sb)) continue;
        Stmt before = out.rewritten.count(i) ? out.rewritten[i] : top[i].stmt;
        out.rewritten[i] = make_seq({wait(0), before});
        break;
      }
      Stmt st = make_tile_op(c.op->op, c.op->args, store_attrs, c.op->span);
      out.rewritten[c.at] = out.rewritten.count(c.at) ? make_seq({out.rewritten[c.at], st}) : st;
      continue;
    }
    const Buffer& g = dst.buffer;
    const int64_t chunks = c.cols / ch.width;
    std::vector<Buffer> stage;
    for (int64_t b = 0; b < ch.nbuf; ++b) {
      Buffer sbuf(src.buffer.name() + "_tma_stage" + (ch.nbuf > 1 ? std::to_string(b) : std::string()), g.dtype(),
                  {make_int(c.rows), make_int(ch.width)}, MemScope::kShared, {}, c.op->span);
      stage.push_back(sbuf);
      BodyItem a;
      a.alloc = sbuf;
      a.span = c.op->span;
      out.allocs.push_back(a);
    }
    std::vector<Stmt> seq;
    for (const Buffer& sbuf : stage)
      if (ch.swizzle) {
        AttrMap la;
        la["kind"] = Attr(std::string("gmma"));
        la["swizzle_bytes"] = Attr(static_cast<int64_t>(ch.swizzle));
        seq.push_back(make_tile_op("annotate_layout", {BufferRegion::full(sbuf)}, la, c.op->span));
      }
    for (int64_t q = 0; q < chunks; ++q) {
      const Buffer& sbuf = stage[static_cast<size_t>(q % ch.nbuf)];
      if (persistent || q >= ch.nbuf) seq.push_back(wait(ch.nbuf - 1));
      BufferRegion fpart = src;
      fpart.region[1] = Range(make_int(q * ch.width, src.region[1].min.dtype()), make_int(ch.width));
      BufferRegion gpart = dst;
      const Range& last = dst.region.back();
      gpart.region.back() = Range(last.min + make_int(q * ch.width, last.min.dtype()), make_int(ch.width, last.extent.dtype()));
      seq.push_back(make_tile_op(c.op->op, {fpart, BufferRegion::full(sbuf)}, {}, c.op->span));
      seq.push_back(make_tile_op(c.op->op, {BufferRegion::full(sbuf), gpart}, store_attrs, c.op->span));
    }
    out.rewritten[c.at] = make_seq(seq, c.op->span);
  }
  if (out.on()) out.drain = make_if(elected, builtin("cuda.tma_store_wait", {make_int(0)}));
  return out;
}

}  // namespace tl
