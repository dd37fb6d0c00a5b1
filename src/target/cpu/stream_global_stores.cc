#include "target/cpu/stream_global_stores.h"

#include <cctype>
#include <fstream>
#include <optional>
#include <string>

#include "ir/functor.h"
#include "ir/structural.h"
#include "target/cpu/loop_index.h"
#include "transform/pass_config.h"

namespace tl {

namespace {

constexpr int64_t kMinRowBytes = kStreamMinRowBytes;

class GemmFinder : public IRVisitor {
 public:
  bool found = false;

 protected:
  void visit_call(const CallNode* n) override {
    if (n->op == "tl.cpu.gemm") found = true;
    IRVisitor::visit_call(n);
  }
};

// "48K", "32768K", "2M", "1048576" (a sysfs cache size) in bytes; 0 when unreadable (digits stop
// being read past 2^32, so a unit shift stays inside int64).
int64_t parse_cache_size(const std::string& text) {
  size_t i = 0;
  int64_t v = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && v < (int64_t(1) << 32))
    v = v * 10 + (text[i++] - '0');
  if (i == 0) return 0;
  const char unit = i < text.size() ? static_cast<char>(std::toupper(static_cast<unsigned char>(text[i]))) : ' ';
  return unit == 'K' ? v << 10 : unit == 'M' ? v << 20 : unit == 'G' ? v << 30 : v;
}

// One instance of the highest cache level sysfs lists for cpu0, when that is level 3 or above (0
// otherwise: a VM that lists only L1 / L2 says nothing about the cache its outputs would stay in).
int64_t host_llc_bytes() {
  static const int64_t bytes = [] {
    int best_level = 0;
    int64_t best = 0;
    for (int i = 0; i < 16; ++i) {
      const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
      std::ifstream level_file(dir + "level"), size_file(dir + "size"), type_file(dir + "type");
      int level = 0;
      std::string size, type;
      if (!(level_file >> level) || !(size_file >> size)) continue;
      type_file >> type;
      if (type == "Instruction") continue;
      const int64_t b = parse_cache_size(size);
      if (b > 0 && (level > best_level || (level == best_level && b > best))) best_level = level, best = b;
    }
    return best_level >= 3 ? best : 0;
  }();
  return bytes;
}

class StreamRewriter : public StmtMutator {
 public:
  StreamRewriter(bool large_outputs, int64_t min_output_bytes)
      : large_outputs_(large_outputs), min_output_bytes_(min_output_bytes) {}
  using StmtMutator::mutate;
  int rewritten = 0;

 protected:
  Stmt mutate_for(const ForNode* n, const Stmt& s) override {
    int64_t bytes = 0, dst_bytes = 0;
    // A loop over rows (serial, constant trip count) around a streamable row copy: the total counts.
    if (auto* inner = n->body.as<ForNode>()) {
      int64_t rows = 0;
      if (n->for_kind == ForKind::kSerial && is_const_int(n->extent, &rows) && rows > 0) {
        std::optional<Stmt> copy = row_copy(inner, &bytes, &dst_bytes);
        if (copy && stream_copy_wanted(bytes, rows * bytes, dst_bytes, large_outputs_, min_output_bytes_)) {
          ++rewritten;
          return fenced(make_for(n->var, n->min, n->extent, n->for_kind, *copy, n->annotations, n->span));
        }
      }
      return StmtMutator::mutate_for(n, s);
    }
    std::optional<Stmt> copy = row_copy(n, &bytes, &dst_bytes);
    if (copy && stream_copy_wanted(bytes, bytes, dst_bytes, large_outputs_, min_output_bytes_)) {
      ++rewritten;
      return fenced(*copy);
    }
    return StmtMutator::mutate_for(n, s);
  }

 private:
  // The copy, then the fence that orders its streaming stores before everything after it.
  static Stmt fenced(const Stmt& copy) {
    return make_seq({copy, make_evaluate(make_call(DataType::Void(), "tl.cpu.store_fence", {}), copy->span)});
  }
  bool large_outputs_;
  int64_t min_output_bytes_;

  // The streaming copy for a loop `G[f + i] = L[g + i]` of at least kMinRowBytes (its size in
  // *bytes; G's whole size in *dst_bytes, 0 when not constant), or nothing.
  std::optional<Stmt> row_copy(const ForNode* n, int64_t* bytes, int64_t* dst_bytes) {
    if (n->for_kind != ForKind::kSerial && n->for_kind != ForKind::kVectorized) return std::nullopt;
    auto* st = n->body.as<BufferStoreNode>();
    int64_t ext = 0;
    if (!st || !is_const_int(n->extent, &ext) || ext <= 0) return std::nullopt;
    auto* ld = st->value.as<BufferLoadNode>();
    if (ld == nullptr) {  // a float32 value rounded to bfloat16 / float16: copy_stream's converting overloads
      auto* c = st->value.as<CastNode>();
      ld = c != nullptr ? c->value.as<BufferLoadNode>() : nullptr;
      const bool narrow = c != nullptr && (c->dtype == DataType::BFloat16() || c->dtype == DataType::Float(16));
      if (ld == nullptr || !narrow || st->buffer.dtype() != c->dtype || ld->buffer.dtype() != DataType::Float32())
        return std::nullopt;
    } else if (st->buffer.dtype() != ld->buffer.dtype()) {
      return std::nullopt;
    }
    if (st->buffer.scope() != MemScope::kGlobal || ld->buffer.scope() == MemScope::kGlobal ||
        st->indices.size() != 1 || ld->indices.size() != 1)
      return std::nullopt;
    const DataType t = st->buffer.dtype();
    if (t.bits % 8 != 0 || t.lanes != 1 || ext * t.bytes() < kMinRowBytes) return std::nullopt;
    std::optional<Expr> dst = unit_stride_start(st->indices[0], n), src = unit_stride_start(ld->indices[0], n);
    if (!dst || !src) return std::nullopt;
    auto address = [](const Buffer& b, const Expr& i) {
      return make_call(DataType::Handle(), "tl.address_of", {make_load(b, {i})});
    };
    *bytes = ext * t.bytes();
    *dst_bytes = constant_buffer_bytes(st->buffer);
    return make_evaluate(make_call(DataType::Void(), "tl.cpu.copy_stream",
                                   {address(st->buffer, *dst), address(ld->buffer, *src), make_int(ext)}),
                         n->span);
  }
};

}  // namespace

int64_t default_stream_min_output_bytes(int64_t llc_bytes) {
  if (llc_bytes <= 0) return kStreamNoLlcOutputBytes;
  return llc_bytes < kStreamMaxDefaultOutputBytes ? llc_bytes : kStreamMaxDefaultOutputBytes;
}

int64_t stream_min_output_bytes(const AttrMap& configs) {
  const int64_t n = config_int(configs, "tl.cpu_stream_min_output_bytes", 0);
  return n > 0 ? n : default_stream_min_output_bytes(host_llc_bytes());
}

int64_t constant_buffer_bytes(const Buffer& b) {
  constexpr int64_t kCap = int64_t(1) << 56;  // larger counts saturate (no overflow for any shape)
  int64_t n = b.dtype().bytes();
  for (const Expr& d : b->shape) {
    int64_t e = 0;
    if (!is_const_int(d, &e) || e <= 0) return 0;
    n = n > kCap / e ? kCap : n * e;
  }
  return n;
}

bool calls_cpu_gemm(const Stmt& s) {
  GemmFinder g;
  g.visit(s);
  return g.found;
}

bool stream_copy_wanted(int64_t row_bytes, int64_t copy_bytes, int64_t dst_bytes, bool large_outputs,
                        int64_t min_output_bytes) {
  if (row_bytes < kStreamMinRowBytes) return false;
  return copy_bytes >= kStreamMinTotalBytes || (large_outputs && copy_bytes >= kStreamMinLargeOutputCopyBytes &&
                                                 dst_bytes > 0 && dst_bytes >= min_output_bytes);
}

PrimFunc stream_global_stores(const PrimFunc& f, const PassContext& ctx) {
  if (config_bool(ctx.configs, "tl.disable_cpu_stream_stores")) return f;
  StreamRewriter r(!calls_cpu_gemm(f.body()), stream_min_output_bytes(ctx.configs));
  Stmt body = r.mutate(f.body());
  return r.rewritten == 0 ? f : f.with_body(body);
}

TL_REGISTER_PASS("stream_global_stores", stream_global_stores);

}  // namespace tl
