#include "target/ascend/ascend_plan_memory.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/tile_op.h"
#include "op/tile_ops.h"
#include "target/ascend/ascend_liveness.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

std::string describe(const BufferLife& l) {
  std::ostringstream os;
  os << "'" << l.buffer.name() << "' " << l.buffer.dtype().str() << "[";
  for (size_t i = 0; i < l.buffer.shape().size(); ++i) os << (i ? ", " : "") << to_string(l.buffer.shape()[i]);
  os << "] = " << l.bytes << " bytes";
  if (l.pinned >= 0) os << " pinned at " << l.pinned;
  if (l.buffer->span.defined()) os << " (" << l.buffer->span.str() << ")";
  if (l.buffer.name().rfind("gemm_v0_", 0) == 0) os << " [T.gemm_v0's ping-pong halves: all of " << sim::mem_name(l.mem) << "]";
  return os.str();
}

[[noreturn]] void over_capacity(sim::Mem mem, int64_t cap, int64_t need, const std::vector<BufferLife*>& ls,
                                bool planning) {
  std::ostringstream os;
  os << sim::mem_name(mem) << " over capacity: the kernel's " << sim::mem_name(mem) << " buffers need " << need
     << " bytes but " << sim::mem_name(mem) << " has " << cap << " bytes per core:";
  bool gemm_v0 = false;
  for (auto* l : ls) {
    if (!l->used) continue;
    os << "\n  " << describe(*l);
    gemm_v0 |= l->buffer.name().rfind("gemm_v0_", 0) == 0;
  }
  if (gemm_v0)
    os << "\nT.gemm_v0 uses the whole L0A and L0B for its ping-pong halves; use T.mma with your own L0A/L0B buffers "
          "(and flags) if the kernel needs L0A/L0B buffers of its own.";
  else
    os << "\nUse smaller tiles or fewer buffers" << (planning ? "" : ", or enable TL_ASCEND_MEMORY_PLANNING so that "
                                                                     "buffers with disjoint lifetimes share memory")
       << ".";
  throw ResourceError(os.str());
}

class AddressEmitter : public StmtMutator {
 public:
  explicit AddressEmitter(const std::map<Buffer, int64_t, BufferLess>& a) : addr_(a) {}

 protected:
  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt body = mutate(n->body);
    auto it = addr_.find(n->buffer);
    if (it != addr_.end())
      body = make_seq({make_tile_op("annotate_address", {BufferRegion::full(n->buffer), make_int(it->second)},
                                    {{"planned", Attr(true)}}, n->span),
                       body});
    return body.same_as(n->body) ? s : make_allocate(n->buffer, body, n->span);
  }

 private:
  const std::map<Buffer, int64_t, BufferLess>& addr_;
};

// dst -> src of every T.reinterpretcast (a buffer reinterpreting two different buffers is refused).
std::map<Buffer, Buffer, BufferLess> reinterpret_aliases(const PrimFunc& f) {
  std::map<Buffer, Buffer, BufferLess> out;
  post_order_visit(f.body(), [&](const Stmt& s) {
    auto* op = s.as<TileOpNode>();
    const ElementwiseOp* ew = op ? tile_op_as<ElementwiseOp>(*op) : nullptr;
    if (!ew || ew->fn() != "reinterpretcast" || op->args.size() != 2 || !op->args[0].is_region() ||
        !op->args[1].is_region())
      return;
    const Buffer& dst = op->args[0].region.buffer;
    const Buffer& src = op->args[1].region.buffer;
    auto it = out.find(dst);
    if (it != out.end() && !it->second.same_as(src))
      throw_error<ValueError>(op_error_prefix(*op), "'", dst.name(), "' is already a T.reinterpretcast view of '",
                              it->second.name(), "'; a buffer can view only one source (allocate another for '",
                              src.name(), "')");
    out.emplace(dst, src);
  });
  return out;
}

}  // namespace

PrimFunc ascend_plan_memory(const PrimFunc& f, const PassContext& ctx) {
  const sim::MachineModel& model = sim::machine_model(ctx.target.model);
  bool planning = config_bool(ctx.configs, "tl.ascend_memory_planning");
  std::vector<BufferLife> lives = analyze_ascend_liveness(f, model);
  // T.reinterpretcast(dst, src): dst takes no memory of its own but src's address; src (the root of a
  // chain of casts) stays live for as long as any of its views is.
  std::map<Buffer, Buffer, BufferLess> alias = reinterpret_aliases(f);
  std::map<const BufferNode*, BufferLife*> life_of;
  for (auto& l : lives) life_of[l.buffer.get()] = &l;
  auto root_of = [&](Buffer b) {
    for (size_t hops = 0; alias.count(b); ++hops) {
      if (hops > alias.size())
        throw_error<ValueError>("T.reinterpretcast: '", b.name(), "' is (indirectly) a reinterpretation of itself");
      b = alias.at(b);
    }
    return b;
  };
  for (auto& [view, src] : alias) {
    BufferLife* v = life_of.count(view.get()) ? life_of[view.get()] : nullptr;
    BufferLife* r = life_of.count(root_of(view).get()) ? life_of[root_of(view).get()] : nullptr;
    if (!v || !r) continue;
    if (v->pinned >= 0)
      throw_error<ValueError>(view->span.str(), view->span.defined() ? ": " : "", "'", view.name(),
                              "' is both pinned with T.annotate_address and a T.reinterpretcast view of '",
                              r->buffer.name(), "'; pin the source buffer instead");
    r->first = std::min(r->first, v->first);
    r->last = std::max(r->last, v->last);
    r->used = r->used || v->used;
  }
  std::map<Buffer, int64_t, BufferLess> planned;
  std::vector<int64_t> peak(sim::kNumMems, 0);
  int64_t align = model.alignment;
  auto aligned = [&](int64_t x) { return (x + align - 1) / align * align; };
  for (int mi = 1; mi < sim::kNumMems; ++mi) {
    auto mem = static_cast<sim::Mem>(mi);
    int64_t cap = model.mem_bytes[mi];
    std::vector<BufferLife*> ls;
    for (auto& l : lives)
      if (l.mem == mem) ls.push_back(&l);
    if (ls.empty()) continue;
    struct Placed {
      int64_t addr, bytes, first, last;
    };
    std::vector<Placed> placed;
    int64_t need = 0;
    for (auto* l : ls) {
      if (l->pinned < 0) continue;
      if (l->pinned % align != 0)
        throw_error<ValueError>(l->buffer->span.str(), l->buffer->span.defined() ? ": " : "",
                                "T.annotate_address places '", l->buffer.name(), "' at byte ", l->pinned, " of ",
                                sim::mem_name(mem), ", which is not ", align, "-byte aligned");
      placed.push_back({l->pinned, l->bytes, l->first, l->last});
      need = std::max(need, l->pinned + l->bytes);
    }
    std::vector<BufferLife*> todo;
    for (auto* l : ls)
      if (l->pinned < 0 && !alias.count(l->buffer)) todo.push_back(l);
    if (planning)
      std::stable_sort(todo.begin(), todo.end(), [](BufferLife* a, BufferLife* b) {
        return a->first != b->first ? a->first < b->first : a->bytes > b->bytes;
      });
    for (auto* l : todo) {
      if (!l->used) {  // allocated, never accessed (e.g. under a Python-level branch): takes no memory
        planned[l->buffer] = 0;
        continue;
      }
      // Lowest aligned address clear of every placed buffer whose lifetime overlaps (all of them
      // without planning: each buffer keeps its own region).
      int64_t addr = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (auto& p : placed) {
          bool live = !planning || (p.first <= l->last && l->first <= p.last);
          if (live && addr < p.addr + p.bytes && p.addr < addr + l->bytes) {
            addr = aligned(p.addr + p.bytes);
            moved = true;
          }
        }
      }
      placed.push_back({addr, l->bytes, l->first, l->last});
      planned[l->buffer] = addr;
      need = std::max(need, addr + l->bytes);
    }
    if (need > cap) over_capacity(mem, cap, need, ls, planning);
    peak[mi] = need;
  }
  for (auto& [view, src] : alias) {
    Buffer root = root_of(view);
    auto it = planned.find(root);
    BufferLife* r = life_of.count(root.get()) ? life_of[root.get()] : nullptr;
    if (it != planned.end()) planned[view] = it->second;
    else if (r && r->pinned >= 0) planned[view] = r->pinned;
  }
  AddressEmitter e(planned);
  Stmt body = e.mutate(f.body());
  AttrMap attrs = f.attrs();
  attrs["ascend.peak_bytes"] = Attr(std::vector<int64_t>(peak.begin() + 1, peak.end()));
  attrs["ascend.memory_planning"] = Attr(planning);
  return f.with_body(body).with_attrs(attrs);
}

TL_REGISTER_PASS("ascend_plan_memory", ascend_plan_memory);

}  // namespace tl
