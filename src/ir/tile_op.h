// Registry of tile operators: the IR's extension point for TileOpNode (kept in ir/ so that the
// verifier and the access analysis below op/ can ask it). Each operator (src/op/<name>.cc) registers
// a TileOpDef that knows how to check its arguments, which buffer regions it reads and writes (for
// pipelining, sync insertion and memory planning on every target), and how to lower itself to plain
// loops (the cpu target, and the fallback of other targets). Target-specific lowerings live with the
// target. Argument conventions of every op are in docs/TILE_OPS.md.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/stmt.h"
#include "ir/target.h"

namespace tl {

struct AccessRegions {
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
};

// What a loop lowering may need to know besides the op itself.
struct LowerContext {
  Target target;
  // Thread count of the enclosing kernel (1 when unknown); fragments on cpu ignore it.
  int64_t num_threads = 1;
  // Ranges [min, min + extent) of the block, loop and let variables around the op (filled by
  // lower_tile_ops), so that lowerings can prove accesses in bounds and skip their guards.
  std::map<Var, Range, VarLess> var_ranges;
  // Guard out-of-bounds accesses of global tensors (reads fill 0, writes are dropped). Off with
  // the pass config tl.disable_safe_memory_legalize.
  bool guard_global_bounds = true;
};

struct TileOpDef {
  std::string name;
  // Throws SyntaxError/TypeError (prefixed with the op's source location) on malformed ops.
  std::function<void(const TileOpNode&)> check;
  std::function<AccessRegions(const TileOpNode&)> access;
  // Lowers to loops over scalar loads/stores; null when the op has no loop form.
  std::function<Stmt(const TileOpNode&, const LowerContext&)> lower_loops;
};

void register_tile_op(TileOpDef def);
// nullptr when unknown.
const TileOpDef* find_tile_op(const std::string& name);
// Throws when unknown: "unknown tile op 'x'".
const TileOpDef& get_tile_op(const std::string& name);
std::vector<std::string> registered_tile_ops();

// Static registration from an op's .cc file.
struct TileOpRegistration {
  explicit TileOpRegistration(TileOpDef def) { register_tile_op(std::move(def)); }
};

// Prefixes an error message with the op's source location: "kernel.py:12:5: T.copy: ...".
std::string op_error_prefix(const TileOpNode& op);

}  // namespace tl
