// Helpers for tile-op tests: build ops with a source location, expect typed errors whose message
// contains given pieces, lower with a context.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/printer.h"
#include "ir/tile_op.h"

namespace tl::test {

inline Span kernel_span(int line) { return Span{std::make_shared<std::string>("kernel.py"), line, 5}; }

inline Stmt op_at(int line, std::string name, std::vector<TileArg> args, AttrMap attrs = {}) {
  return make_tile_op(std::move(name), std::move(args), std::move(attrs), kernel_span(line));
}

inline const TileOpNode& as_op(const Stmt& s) { return *s.as<TileOpNode>(); }

// Runs the op's check and expects an error of type E whose message contains every piece.
template <typename E>
void expect_check_error(const Stmt& s, const std::vector<std::string>& pieces) {
  const TileOpNode& op = as_op(s);
  try {
    get_tile_op(op.op).verify(op);
    ADD_FAILURE() << "expected an error for " << print_stmt(s);
  } catch (const E& e) {
    std::string msg = e.what();
    for (auto& p : pieces) EXPECT_NE(msg.find(p), std::string::npos) << "missing '" << p << "' in: " << msg;
  }
}

inline void expect_check_ok(const Stmt& s) {
  const TileOpNode& op = as_op(s);
  EXPECT_NO_THROW(get_tile_op(op.op).verify(op)) << print_stmt(s);
}

inline Stmt lower(const Stmt& s, const LowerContext& ctx = {}) {
  const TileOpNode& op = as_op(s);
  const TileOp& def = get_tile_op(op.op);
  def.verify(op);
  return def.lower_loops(op, ctx);
}

inline std::vector<std::string> names(const std::vector<BufferRegion>& rs) {
  std::vector<std::string> out;
  for (auto& r : rs) out.push_back(r.buffer.name());
  return out;
}

}  // namespace tl::test
