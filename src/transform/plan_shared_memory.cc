#include "transform/plan_shared_memory.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "transform/pass_config.h"

namespace tl {

int64_t max_shared_bytes_per_block(const std::string& arch) {
  if (arch == "sm_80" || arch == "sm_87") return 163 * 1024;
  if (arch == "sm_86" || arch == "sm_89") return 99 * 1024;
  if (arch.rfind("sm_90", 0) == 0) return 227 * 1024;
  return 48 * 1024;
}

namespace {

constexpr int64_t kAlign = 128;

// Buffers are aligned to the largest power of two up to 1024 that divides their size (at least
// 128): a tile that wgmma reads through a descriptor must start at a multiple of 8 swizzled rows
// (1024 / 512 / 256 bytes for its 128 / 64 / 32-byte swizzle), and such tiles have sizes that are
// multiples of that; other tiles lose at most a little padding.
int64_t slot_alignment(int64_t bytes) {
  int64_t a = 1024;
  while (a > kAlign && bytes % a != 0) a /= 2;
  return a;
}

struct Slot {
  Buffer buffer;
  int64_t bytes = 0;
  int64_t first = -1, last = -1;
  int64_t offset = 0;
  size_t order = 0;
};

// Live intervals of the shared buffers of one kernel body.
class Liveness {
 public:
  std::map<const BufferNode*, Slot> slots;
  std::vector<const BufferNode*> order;

  void run(const Stmt& s) { walk(s); }

 private:
  void touch(const BufferNode* b) {
    auto it = slots.find(b);
    if (it == slots.end()) return;
    int64_t p = loop_depth_ ? loop_start_ : pos_;
    if (it->second.first < 0) it->second.first = p;
    it->second.last = std::max(it->second.last, pos_);
    if (loop_depth_) in_loop_.push_back(b);
  }
  void uses(const Stmt& s) {
    for_each_expr(s, [&](const Expr& e) {
      for_each_subexpr(e, [&](const Expr& y) {
        if (const auto* l = y.as<BufferLoadNode>()) touch(l->buffer.get());
      });
    });
    post_order_visit(s, [&](const Stmt& x) {
      if (const auto* st = x.as<BufferStoreNode>()) touch(st->buffer.get());
    });
  }
  void walk(const Stmt& s) {
    if (!s.defined()) return;
    if (const auto* seq = s.as<SeqStmtNode>()) {
      for (const Stmt& x : seq->seq) walk(x);
    } else if (const auto* a = s.as<AllocateNode>()) {
      if (a->buffer.scope() == MemScope::kShared) {
        Slot sl;
        sl.buffer = a->buffer;
        int64_t n = 1;
        for (const Expr& e : a->buffer.shape()) {
          int64_t v = 0;
          if (!is_const_int(e, &v))
            throw_error<ResourceError>("shared buffer '", a->buffer.name(), "' has a run-time size (",
                                       to_string(e), "); shared tiles need constant shapes on target cuda");
          n *= v;
        }
        sl.bytes = n * a->buffer.dtype().element_bytes();
        sl.order = order.size();
        slots[a->buffer.get()] = sl;
        order.push_back(a->buffer.get());
      }
      walk(a->body);
    } else if (const auto* f = s.as<ForNode>()) {
      uses(make_evaluate(f->min));
      uses(make_evaluate(f->extent));
      bool outer = loop_depth_ == 0;
      if (outer) loop_start_ = ++pos_;
      ++loop_depth_;
      walk(f->body);
      --loop_depth_;
      if (outer) {
        ++pos_;
        for (const BufferNode* b : in_loop_) slots[b].last = std::max(slots[b].last, pos_);
        in_loop_.clear();
      }
    } else if (const auto* i = s.as<IfThenElseNode>()) {
      ++pos_;
      uses(make_evaluate(i->cond));
      walk(i->then_case);
      walk(i->else_case);
    } else if (const auto* l = s.as<LetStmtNode>()) {
      ++pos_;
      uses(make_evaluate(l->value));
      walk(l->body);
    } else if (const auto* at = s.as<AttrStmtNode>()) {
      const auto* roles = at->body.as<IfThenElseNode>();
      if (at->key == "cuda.warp_specialize" && roles && loop_depth_ == 0) {
        // The consumer and producer branches run at the same time: both are walked from the same
        // position. The producer only fills buffers the consumers read in their main loop, and
        // its last fill is consumed before the consumers leave that loop, so a buffer the
        // consumers use after the loop may take the bytes of the pipeline's stages.
        ++pos_;
        uses(make_evaluate(roles->cond));
        int64_t start = pos_;
        walk(roles->then_case);
        int64_t end = pos_;
        pos_ = start;
        walk(roles->else_case);
        pos_ = std::max(pos_, end);
      } else {
        walk(at->body);
      }
    } else {
      ++pos_;
      uses(s);
    }
  }
  int64_t pos_ = 0;
  int loop_depth_ = 0;
  int64_t loop_start_ = 0;
  std::vector<const BufferNode*> in_loop_;
};

class Planner : public StmtMutator {
 public:
  Planner(const PassContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* k, const Stmt& s) override {
    Liveness live;
    live.run(k->body);
    std::vector<Slot*> slots;
    for (auto& [b, sl] : live.slots) {
      if (sl.first < 0) sl.first = sl.last = 0;  // allocated, never used
      slots.push_back(&sl);
    }
    std::sort(slots.begin(), slots.end(), [](const Slot* a, const Slot* b) {
      return a->first != b->first ? a->first < b->first : a->order < b->order;
    });
    bool reuse = !config_bool(ctx_.configs, "tl.disable_shared_memory_reuse");
    std::vector<Slot*> placed;
    int64_t total = 0;
    for (Slot* sl : slots) {
      int64_t off = 0;
      bool moved = true;
      while (moved) {
        moved = false;
        for (Slot* p : placed) {
          bool live_overlap = !reuse || !(p->last < sl->first || sl->last < p->first);
          bool mem_overlap = off < p->offset + p->bytes && p->offset < off + sl->bytes;
          if (live_overlap && mem_overlap) {
            int64_t align = slot_alignment(sl->bytes);
            off = (p->offset + p->bytes + align - 1) / align * align;
            moved = true;
          }
        }
      }
      sl->offset = off;
      placed.push_back(sl);
      total = std::max(total, off + sl->bytes);
    }
    int64_t limit = max_shared_bytes_per_block(ctx_.target.arch.empty() ? "sm_80" : ctx_.target.arch);
    if (total > limit) {
      std::ostringstream os;
      os << (k->span.prefix()) << "the kernel needs " << total
         << " bytes of shared memory, but " << (ctx_.target.arch.empty() ? "sm_80" : ctx_.target.arch)
         << " allows at most " << limit << " per block. Shared buffers:";
      std::vector<Slot*> by_size = slots;
      std::sort(by_size.begin(), by_size.end(), [](const Slot* a, const Slot* b) { return a->bytes > b->bytes; });
      for (const Slot* sl : by_size) {
        os << "\n  " << sl->buffer.name() << ": " << sl->buffer.dtype().str() << "[";
        for (size_t i = 0; i < sl->buffer.shape().size(); ++i)
          os << (i ? ", " : "") << to_string(sl->buffer.shape()[i]);
        os << "] = " << sl->bytes << " bytes";
      }
      os << "\nUse smaller tiles (block_M / block_N / block_K), fewer pipeline stages (num_stages), or keep "
            "data in fragments instead of shared memory.";
      throw ResourceError(os.str());
    }
    offsets_.clear();
    for (auto& [b, sl] : live.slots) offsets_[b] = sl.offset;
    Stmt body = mutate(k->body);
    AttrMap attrs = k->attrs;
    attrs["dyn_smem_bytes"] = Attr(total);
    return make_kernel(k->grid, k->block_vars, k->threads, k->thread_vars, attrs, body, k->span);
  }

  Stmt mutate_allocate(const AllocateNode* n, const Stmt& s) override {
    Stmt inner = StmtMutator::mutate_allocate(n, s);
    auto it = offsets_.find(n->buffer.get());
    if (it == offsets_.end()) return inner;
    return make_attr("smem_offset", Attr(it->second), inner, n->span);
  }

 private:
  const PassContext& ctx_;
  std::map<const BufferNode*, int64_t> offsets_;
};

}  // namespace

PrimFunc plan_shared_memory(const PrimFunc& f, const PassContext& ctx) {
  Planner p(ctx);
  return f.with_body(p.mutate(f.body()));
}

TL_REGISTER_PASS("plan_shared_memory", plan_shared_memory);

}  // namespace tl
