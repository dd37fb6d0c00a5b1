#include "transform/plan_shared_memory.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/functor.h"
#include "transform/buffer_liveness.h"
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

// The shared buffers of one kernel body with their live intervals (the one liveness analysis,
// transform/buffer_liveness.h; the warp-specialized roles run concurrently).
std::map<const BufferNode*, Slot> shared_slots(const Stmt& body) {
  LivenessOptions opts;
  opts.track = [](const Buffer& b) { return b.scope() == MemScope::kShared; };
  opts.concurrent_attr = "cuda.warp_specialize";
  std::map<const BufferNode*, Slot> slots;
  for (const LiveInterval& li : buffer_live_intervals(body, opts)) {
    Slot sl;
    sl.buffer = li.buffer;
    int64_t n = 1;
    for (const Expr& e : li.buffer.shape()) {
      int64_t v = 0;
      if (!is_const_int(e, &v))
        throw_error<ResourceError>("shared buffer '", li.buffer.name(), "' has a run-time size (", to_string(e),
                                   "); shared tiles need constant shapes on target cuda");
      n *= v;
    }
    sl.bytes = n * li.buffer.dtype().element_bytes();
    sl.order = static_cast<size_t>(li.order);
    sl.first = li.used ? li.first : 0;  // allocated, never used: placed first, overlapping nothing later
    sl.last = li.used ? li.last : 0;
    slots[li.buffer.get()] = sl;
  }
  return slots;
}

class Planner : public StmtMutator {
 public:
  Planner(const PassContext& ctx) : ctx_(ctx) {}

 protected:
  Stmt mutate_kernel(const KernelLaunchNode* k, const Stmt& s) override {
    std::map<const BufferNode*, Slot> live = shared_slots(k->body);
    std::vector<Slot*> slots;
    for (auto& [b, sl] : live) slots.push_back(&sl);
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
    for (auto& [b, sl] : live) offsets_[b] = sl.offset;
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
