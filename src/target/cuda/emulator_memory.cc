// The cuda emulator's memory accesses: buffer addressing, bounds checks, and the shared-memory race
// checker (every byte remembers its last writer and readers since the last barrier).
#include "target/cuda/emulator_impl.h"

#include "ir/error.h"

namespace tl::cuda_emu {

Mem Emulator::mem_of(const Buffer& b, int64_t t) {
  if (auto it = global_.find(b.get()); it != global_.end()) return it->second;
  if (auto it = shared_.find(b.get()); it != shared_.end()) return it->second;
  if (auto it = local_.find(b.get()); it != local_.end()) {
    Mem m;
    auto& store = it->second[static_cast<size_t>(t)];
    m.base = store.data();
    m.size = static_cast<int64_t>(store.size());
    m.space = Space::kLocal;
    m.name = b.name();
    return m;
  }
  throw_error<Error>("emulator: buffer '", b.name(), "' is not allocated");
}

int64_t Emulator::flat_index(const Buffer& b, const std::vector<Expr>& idx, int64_t t) {
  if (idx.size() == 1) return eval(idx[0], t).i;
  std::vector<Expr> strides = b.effective_strides();
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off += eval(idx[d], t).i * eval(strides[d], t).i;
  return off;
}

void Emulator::check_range(const Mem& m, int64_t off, int64_t n, const char* what) {
  if (off < 0 || off + n > m.size)
    throw_error<RuntimeError>("emulator: out-of-bounds ", what, " of '", m.name, "' at byte ", off, " (+", n, ") of ",
                              m.size);
}

void Emulator::race(const std::string& msg) {
  if (report_.races.size() < 20) report_.races.push_back(msg);
}

void Emulator::shared_read(const Mem& m, int64_t off, int64_t n, int64_t t) {
  if (m.space != Space::kShared) return;
  int64_t base = m.base - smem_.data() + off;
  for (int64_t b = base; b < base + n; ++b) {
    ByteState& s = bytes_[static_cast<size_t>(b)];
    if (ws_) ws_read_check(s, b, m, t);
    if (s.pending_async)
      race("thread " + std::to_string(t) + " reads '" + m.name + "' (shared byte " + std::to_string(b) +
           ") before the cp.async writing it was waited for");
    else if (s.w_epoch == epoch_ && s.w_thread != t)
      race("thread " + std::to_string(t) + " reads '" + m.name + "' (shared byte " + std::to_string(b) +
           ") written by thread " + std::to_string(s.w_thread) + " without a barrier in between");
    if (s.r_epoch == epoch_) {
      if (s.r_thread != t) s.r_multi = true;
    } else {
      s.r_epoch = epoch_;
      s.r_thread = static_cast<int32_t>(t);
      s.r_multi = t < 0;
    }
  }
}

void Emulator::shared_write(const Mem& m, int64_t off, int64_t n, int64_t t, bool async) {
  if (m.space != Space::kShared) return;
  int64_t base = m.base - smem_.data() + off;
  for (const auto& [lo, hi] : wgmma_inflight_)
    if (base < hi && lo < base + n)
      race("thread " + std::to_string(t) + " writes '" + m.name + "' (shared bytes " + std::to_string(base) + "+" +
           std::to_string(n) + ") that an in-flight wgmma still reads");
  for (const auto& [lo, hi, u] : bulk_pending_)
    if (base < hi && lo < base + n)
      race("thread " + std::to_string(t) + " writes '" + m.name + "' (shared bytes " + std::to_string(base) + "+" +
           std::to_string(n) + ") that a TMA store of thread " + std::to_string(u) +
           " still reads (no cp.async.bulk.wait_group.read of that thread before)");
  for (int64_t b = base; b < base + n; ++b) {
    ByteState& s = bytes_[static_cast<size_t>(b)];
    if (s.r_epoch == epoch_ && (s.r_multi || s.r_thread != t))
      race("thread " + std::to_string(t) + " writes '" + m.name + "' (shared byte " + std::to_string(b) +
           ") that other threads read without a barrier in between" +
           (s.r_thread == -2 ? std::string(" (a wgmma operand)") : std::string()));
    else if (s.w_epoch == epoch_ && s.w_thread != t && !s.pending_async)
      race("threads " + std::to_string(t) + " and " + std::to_string(s.w_thread) + " write '" + m.name +
           "' (shared byte " + std::to_string(b) + ") without a barrier in between");
    s.w_thread = static_cast<int32_t>(t);
    s.w_epoch = epoch_;
    s.pending_async = async;
    s.tma_bar = -1;
    s.proxy_fenced = false;
    s.readers.clear();
  }
}

// float4_e2m1fn global tensors hold two elements a byte, element 2k in the low nibble of byte k
// (docs/FLOAT4.md); on-chip buffers one a byte, as every other type.
static bool packed_fp4(const Buffer& b) { return b.dtype().is_fp4() && b.scope() == MemScope::kGlobal; }

Val Emulator::load(const Buffer& b, const std::vector<Expr>& idx, int64_t t) {
  Mem m = mem_of(b, t);
  if (packed_fp4(b)) {
    const int64_t i = flat_index(b, idx, t);
    check_range(m, i >> 1, 1, "read");
    const uint8_t code = static_cast<uint8_t>((m.base[i >> 1] >> ((i & 1) * 4)) & 0xfu);
    return decode(b.dtype(), &code);
  }
  int64_t eb = b.dtype().element_bytes();
  int64_t off = flat_index(b, idx, t) * eb;
  check_range(m, off, eb, "read");
  shared_read(m, off, eb, t);
  if (!wgmma_groups_.empty()) check_wgmma_registers(m, off, eb, t);
  return decode(b.dtype(), m.base + off);
}

void Emulator::store(const Buffer& b, const std::vector<Expr>& idx, const Val& v, int64_t t) {
  Mem m = mem_of(b, t);
  if (packed_fp4(b)) {
    const int64_t i = flat_index(b, idx, t);
    check_range(m, i >> 1, 1, "write");
    uint8_t code = 0;
    encode(b.dtype(), v, &code);
    const int sh = static_cast<int>(i & 1) * 4;
    m.base[i >> 1] = static_cast<uint8_t>((m.base[i >> 1] & ~(0xfu << sh)) | ((code & 0xfu) << sh));
    return;
  }
  int64_t eb = b.dtype().element_bytes();
  int64_t off = flat_index(b, idx, t) * eb;
  check_range(m, off, eb, "write");
  shared_write(m, off, eb, t, false);
  if (!wgmma_groups_.empty()) check_wgmma_registers(m, off, eb, t);
  encode(b.dtype(), v, m.base + off);
}

Val Emulator::address(const Expr& e, int64_t t) {
  const auto* c = e.as<CallNode>();
  TL_ICHECK(c && c->op == "cuda.address_of");
  const auto* l = c->args[0].as<BufferLoadNode>();
  if (packed_fp4(l->buffer))
    throw_error<NotImplemented>("not implemented: the address of an element of the packed float4_e2m1fn tensor '",
                                l->buffer.name(), "'");
  Val v;
  v.mem = mem_of(l->buffer, t);
  v.off = flat_index(l->buffer, l->indices, t) * l->buffer.dtype().element_bytes();
  return v;
}

DataType Emulator::address_type(const Expr& e) {
  return e.as<CallNode>()->args[0].as<BufferLoadNode>()->buffer.dtype();
}

}  // namespace tl::cuda_emu
