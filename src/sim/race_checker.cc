#include "sim/race_checker.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "ir/error.h"

namespace tl::sim {


int64_t Box::rows() const {
  int64_t r = 1;
  for (int i = 0; i < nd; ++i) r *= ext[i];
  return r;
}

int64_t Box::hi() const {
  int64_t h = base + row_bytes;
  for (int i = 0; i < nd; ++i) h += (ext[i] - 1) * stride[i];
  return h;
}

Box make_box(int64_t base, int64_t eb, int nd, const int64_t* ext, const int64_t* stride) {
  // Drop unit dimensions, then take the innermost contiguous run as the row.
  int64_t e[8], s[8];
  int n = 0;
  for (int i = 0; i < nd; ++i)
    if (ext[i] != 1) {
      e[n] = ext[i];
      s[n] = stride[i] * eb;
      ++n;
    }
  Box b;
  b.base = base;
  b.row_bytes = eb;
  if (n > 0 && s[n - 1] == eb) {
    b.row_bytes = e[n - 1] * eb;
    --n;
  }
  // Merge outer dimensions that continue the row contiguously.
  while (n > 0 && s[n - 1] == b.row_bytes) {
    b.row_bytes *= e[n - 1];
    --n;
  }
  // Merge remaining dimensions pairwise when one is the continuation of the next.
  std::vector<std::pair<int64_t, int64_t>> dims;
  for (int i = 0; i < n; ++i) dims.emplace_back(e[i], s[i]);
  for (size_t i = dims.size(); i-- > 1;) {
    if (dims[i - 1].second == dims[i].first * dims[i].second) {
      dims[i - 1] = {dims[i - 1].first * dims[i].first, dims[i].second};
      dims.erase(dims.begin() + static_cast<long>(i));
    }
  }
  while (dims.size() > 3) {  // too many dimensions: widen to the covering rows of the outer ones
    auto inner = dims.back();
    dims.pop_back();
    b.row_bytes = (inner.first - 1) * inner.second + b.row_bytes;
  }
  b.nd = static_cast<int>(dims.size());
  for (int i = 0; i < b.nd; ++i) {
    b.ext[i] = dims[i].first;
    b.stride[i] = dims[i].second;
  }
  return b;
}

// Does the interval [s, e) intersect any row of `b`? Writes the first intersection.
static bool rows_hit(const Box& b, int dim, int64_t base, int64_t s, int64_t e, int64_t* lo, int64_t* hi) {
  if (dim == b.nd) {
    int64_t a0 = std::max(s, base), a1 = std::min(e, base + b.row_bytes);
    if (a0 < a1) {
      *lo = a0;
      *hi = a1;
      return true;
    }
    return false;
  }
  int64_t st = b.stride[dim], n = b.ext[dim];
  // Extent of one slice of the remaining dimensions.
  int64_t span = b.row_bytes;
  for (int i = dim + 1; i < b.nd; ++i) span += (b.ext[i] - 1) * b.stride[i];
  if (st <= 0) {
    for (int64_t r = 0; r < n; ++r)
      if (rows_hit(b, dim + 1, base + r * st, s, e, lo, hi)) return true;
    return false;
  }
  // Slices r with base + r*st < e and base + r*st + span > s.
  int64_t r_lo = s - span - base < 0 ? 0 : (s - span - base) / st + 1;
  int64_t r_hi = e - base <= 0 ? -1 : (e - base - 1) / st;
  r_lo = std::max<int64_t>(r_lo, 0);
  r_hi = std::min<int64_t>(r_hi, n - 1);
  for (int64_t r = r_lo; r <= r_hi; ++r)
    if (rows_hit(b, dim + 1, base + r * st, s, e, lo, hi)) return true;
  return false;
}

static bool for_each_row(const Box& b, int dim, int64_t base, const Box& other, int64_t* lo, int64_t* hi) {
  if (dim == b.nd) return rows_hit(other, 0, other.base, base, base + b.row_bytes, lo, hi);
  for (int64_t r = 0; r < b.ext[dim]; ++r)
    if (for_each_row(b, dim + 1, base + r * b.stride[dim], other, lo, hi)) return true;
  return false;
}

bool box_overlap(const Box& a, const Box& b, int64_t* lo, int64_t* hi) {
  if (a.hi() <= b.lo() || b.hi() <= a.lo()) return false;
  if (a.rows() <= b.rows()) return for_each_row(a, 0, a.base, b, lo, hi);
  return for_each_row(b, 0, b.base, a, lo, hi);
}

bool box_contains(const Box& outer, const Box& inner) {
  if (inner.lo() < outer.lo() || inner.hi() > outer.hi()) return false;
  if (outer.nd == 0) return true;
  if (outer.nd != inner.nd && inner.nd != 0) return false;
  if (inner.nd == 0) {
    // One run inside a strided box: it must sit inside one row.
    if (outer.nd != 1) return false;
    int64_t off = inner.base - outer.base;
    int64_t r = off / outer.stride[0];
    return r < outer.ext[0] && off - r * outer.stride[0] + inner.row_bytes <= outer.row_bytes;
  }
  for (int i = 0; i < outer.nd; ++i)
    if (outer.stride[i] != inner.stride[i]) return false;
  // Same strides: decompose the base offset along the dimensions (outermost first).
  int64_t off = inner.base - outer.base;
  for (int i = 0; i < outer.nd; ++i) {
    int64_t st = outer.stride[i];
    if (st <= 0) return false;
    int64_t r = off / st;
    if (r < 0 || r + inner.ext[i] > outer.ext[i]) return false;
    off -= r * st;
  }
  return off >= 0 && off + inner.row_bytes <= outer.row_bytes;
}

RaceChecker::Shadow& RaceChecker::shadow(Mem mem, int space) {
  if (mem == Mem::kGM && space < 0) return gm_;
  return private_[int64_t(space) * kNumMems + int(mem)];
}

// The pages (of 2^shift bytes) that the bytes of `b` touch, ascending: the whole address range when
// that is about as short as the rows' own pages, otherwise the pages of each row. (A GM tile is a few
// rows strided over a large tensor: by its address range alone, every tile of the same rows would
// share every page, and each access would scan all of them: the time grew with the square of the
// tensor's width, 82 s for a 1024 x 32768 element-wise kernel.)
static void box_pages(const Box& b, int shift, std::vector<int64_t>* out) {
  out->clear();
  const int64_t p0 = b.lo() >> shift, p1 = (b.hi() - 1) >> shift;
  const int64_t per_row = ((b.row_bytes - 1) >> shift) + 2;
  if (b.nd == 0 || p1 - p0 + 1 <= b.rows() * per_row) {
    for (int64_t p = p0; p <= p1; ++p) out->push_back(p);
    return;
  }
  std::function<void(int, int64_t)> rows = [&](int dim, int64_t base) {
    if (dim == b.nd) {
      for (int64_t p = base >> shift; p <= (base + b.row_bytes - 1) >> shift; ++p)
        if (out->empty() || out->back() != p) out->push_back(p);
      return;
    }
    for (int64_t r = 0; r < b.ext[dim]; ++r) rows(dim + 1, base + r * b.stride[dim]);
  };
  rows(0, b.base);
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

void RaceChecker::reset_space(int space) {
  for (int m = 0; m < kNumMems; ++m) private_.erase(int64_t(space) * kNumMems + m);  // m = GM: workspaces
  // The page lists of this space are gone, so its record slots can be reused.
  auto it = space_records_.find(space);
  if (it == space_records_.end()) return;
  for (int32_t id : it->second) {
    if (records_[id].alive) --live_;
    records_[id].alive = false;
    free_.push_back(id);
  }
  it->second.clear();
}

int32_t RaceChecker::new_record(const AccessInfo& a) {
  int32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
    records_[id] = Record{a, true};
  } else {
    id = static_cast<int32_t>(records_.size());
    records_.push_back(Record{a, true});
  }
  ++live_;
  if (a.space >= 0) space_records_[a.space].push_back(id);
  return id;
}

bool RaceChecker::ordered(const AccessInfo& prev, const AccessInfo& cur, const VClock& vc) const {
  if (prev.block == cur.block && vc.c[clock_index(prev.core, prev.pipe)] >= prev.epoch) return true;
  if (vc.sync_gen > prev.sync_passed) return true;
  uint32_t g = vc.kind_gen[static_cast<int>(prev.kind)];
  if (g > 0 && log_) {
    size_t key = size_t(prev.block) * kCoresPerBlock + prev.core;
    if (key < log_->snaps.size() && !log_->snaps[key].empty()) {
      const auto& v = log_->snaps[key];
      const VClock& snap = v[std::min<size_t>(g, v.size()) - 1];
      if (snap.c[clock_index(prev.core, prev.pipe)] >= prev.epoch) return true;
    }
  }
  return false;
}

static std::string core_label(const AccessInfo& a) {
  std::ostringstream os;
  os << "block " << a.block << " " << (a.core == 0 ? "AIC" : a.core == 1 ? "AIV0" : "AIV1");
  return os.str();
}

static std::string site_label(const AccessInfo& a) {
  std::string s = a.site ? a.site->text : "?";
  std::string loc = a.site ? a.site->span.str() : "";
  return s + " at " + (loc.empty() ? "<unknown location>" : loc);
}

void RaceChecker::report(const AccessInfo& first, const AccessInfo& second, int64_t lo, int64_t hi) const {
  throw SyncError(describe(first, second, lo, hi));
}

std::string RaceChecker::describe(const AccessInfo& first, const AccessInfo& second, int64_t lo, int64_t hi) const {
  // Name the accesses in program order when they come from one core (time order may differ).
  bool swap = first.block == second.block && first.core == second.core && second.seq < first.seq;
  const AccessInfo& prev = swap ? second : first;
  const AccessInfo& cur = swap ? first : second;
  const char* kind = prev.write && cur.write ? "WAW" : prev.write ? "RAW" : "WAR";
  std::ostringstream os;
  os << "race (" << kind << ") on " << mem_name(cur.mem);
  int64_t rel_lo = lo - cur.buffer_base, rel_hi = hi - cur.buffer_base;
  if (cur.mem == Mem::kGM) {
    os << " tensor '" << cur.buffer << "' bytes [" << rel_lo << ", " << rel_hi << ")";
  } else {
    os << " bytes [" << lo << ", " << hi << ") (buffer '" << cur.buffer << "'";
    if (prev.buffer != cur.buffer) os << " / '" << prev.buffer << "'";
    os << ")";
  }
  os << ": " << (prev.write ? "write" : "read") << " by pipe " << pipe_name(prev.pipe) << " (" << site_label(prev)
     << ", " << core_label(prev) << ") and " << (cur.write ? "write" : "read") << " by pipe " << pipe_name(cur.pipe)
     << " (" << site_label(cur) << ", " << core_label(cur) << ") are not ordered by any sync. ";
  if (prev.block != cur.block || prev.core != cur.core) {
    os << "Accesses of different cores are ordered only by T.set_cross_flag/T.wait_cross_flag or T.sync_all.";
  } else if (prev.pipe == cur.pipe) {
    os << "Insert T.pipe_barrier(\"" << pipe_user_name(cur.pipe) << "\") between them.";
  } else {
    os << "Insert T.set_flag(\"" << pipe_user_name(prev.pipe) << "\", \"" << pipe_user_name(cur.pipe)
       << "\", id) after the first and T.wait_flag(\"" << pipe_user_name(prev.pipe) << "\", \""
       << pipe_user_name(cur.pipe) << "\", id) before the second (or enable TL_ASCEND_AUTO_SYNC).";
  }
  return os.str();
}

void RaceChecker::check(const AccessInfo& a, const VClock& vc, std::vector<DeferredWaw>* deferred, bool collect_all) {
  if (a.box.row_bytes <= 0) return;
  Shadow& sh = shadow(a.mem, a.space);
  box_pages(a.box, sh.shift, &pages_);
  auto scan = [&](std::vector<int32_t>& ids) {
    size_t w = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      int32_t id = ids[i];
      Record& r = records_[id];
      if (!r.alive) continue;  // compact
      ids[w++] = id;
      ++comparisons_;
      if (r.info.atomic && a.atomic) continue;  // atomic adds commute
      int64_t lo, hi;
      if (box_overlap(r.info.box, a.box, &lo, &hi) && !ordered(r.info, a, vc)) {
        if (deferred && (collect_all || (r.info.write && a.write && a.mem == Mem::kGM && r.info.block != a.block)))
          deferred->push_back(DeferredWaw{r.info, a, lo, hi});
        else
          report(r.info, a, lo, hi);
      }
    }
    ids.resize(w);
  };
  // A read conflicts only with writes; a write with everything.
  for (int64_t p : pages_) {
    auto it = sh.pages.find(p);
    if (it == sh.pages.end()) continue;
    scan(it->second.writes);
    if (a.write) scan(it->second.reads);
  }
}

void RaceChecker::record(const AccessInfo& a, const VClock& vc) {
  if (a.box.row_bytes <= 0) return;
  Shadow& sh = shadow(a.mem, a.space);
  box_pages(a.box, sh.shift, &pages_);
  // Drops the live records of `ids` that `superseded` says this access makes redundant.
  auto prune = [&](std::vector<int32_t>& ids, const auto& superseded) {
    size_t w = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      Record& r = records_[ids[i]];
      if (!r.alive) continue;
      if (superseded(r.info)) {
        r.alive = false;
        --live_;
        continue;
      }
      ids[w++] = ids[i];
    }
    ids.resize(w);
  };
  if (a.write) {
    // A write supersedes the accesses it covers that are ordered before it: any later access racing
    // with them races with this write too.
    auto covered = [&](const AccessInfo& r) { return box_contains(a.box, r.box) && ordered(r, a, vc); };
    for (int64_t p : pages_) {
      auto it = sh.pages.find(p);
      if (it == sh.pages.end()) continue;
      prune(it->second.writes, covered);
      prune(it->second.reads, covered);
    }
  } else if (a.mem != Mem::kGM) {
    // A read supersedes the earlier reads of its own pipe (same block and core) that it covers: a
    // later write ordered after it is ordered after them too (their epochs on that pipe are smaller,
    // and every ordering edge of the checker compares that pipe's epoch or a sync generation that
    // only grows), and a write racing with them overlaps it and races with it. Without this, a value
    // read again and again and never written (LayerNorm's per-row mean, loaded by the scalar unit
    // for every tile of a row) piled up records that every later write of its page scanned. Only in
    // the private memories (reset per block): GM pages are shared by every block, and a scan of
    // their read lists at every read would cost more than it saves there.
    auto covered = [&](const AccessInfo& r) {
      return r.block == a.block && r.core == a.core && r.pipe == a.pipe && r.epoch < a.epoch &&
             r.sync_passed <= a.sync_passed && box_contains(a.box, r.box);
    };
    for (int64_t p : pages_) {
      auto it = sh.pages.find(p);
      if (it != sh.pages.end()) prune(it->second.reads, covered);
    }
  }
  int32_t id = new_record(a);
  for (int64_t p : pages_) {
    Page& pg = sh.pages[p];
    (a.write ? pg.writes : pg.reads).push_back(id);
  }
}

}  // namespace tl::sim
