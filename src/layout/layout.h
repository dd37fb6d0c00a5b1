// Layouts of buffers as IR expressions.
//
// A Layout maps a logical index of a statically shaped buffer (i0, ..., in-1) to a physical index
// (usually one flat element offset): row-major, padded, XOR-swizzled shared-memory tiles
// (swizzle.h), NPU fractal tiles. It is a forward map only; what needs to go backwards (threads to
// elements) is a Fragment (fragment.h), which is built so its inverse is cheap.
//
// The maps are expressions over placeholder variables, so passes substitute real index
// expressions (`map(indices)`) and tests evaluate them on integers (`apply`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace tl {

// Evaluates an integer index expression (constants, variables bound in `env`, + - * floordiv
// floormod / % min max, bit operations, shifts, comparisons, select). Throws ValueError for an
// unbound variable or an unsupported node.
int64_t eval_index(const Expr& e, const std::map<Var, int64_t, VarLess>& env);

// The same index expressions evaluated at many points of a loop nest (layout checks enumerate every
// (thread, register) of a tile): an index that is one of the nest's variables is read off the point,
// the others go through eval_index with one environment reused from point to point. `vars` and
// `indices` are referenced, not copied: they must outlive the evaluator.
class NestIndexEval {
 public:
  NestIndexEval(const std::vector<Var>& vars, const std::vector<Expr>& indices);
  // *idx = the indices at vars = point (point.size() == vars.size()).
  void eval(const std::vector<int64_t>& point, std::vector<int64_t>* idx);
  // The same with `point` (vars.size() values) and `idx` (indices.size() values) as arrays.
  void eval(const int64_t* point, int64_t* idx) {
    for (size_t i = 0; i < direct_.size(); ++i) {
      if (direct_[i] < 0) return eval_slow(point, idx);
      idx[i] = point[direct_[i]];
    }
  }

 private:
  const std::vector<Var>& vars_;
  const std::vector<Expr>& indices_;
  void eval_slow(const int64_t* point, int64_t* idx);
  std::vector<int> direct_;  // the position of the variable an index is, or -1
  std::map<Var, int64_t, VarLess> env_;
};
// "[128, 64]": a constant shape in messages and printed layouts.
std::string shape_str(const std::vector<int64_t>& shape);

struct LayoutNode {
  std::vector<int64_t> input_shape;
  std::vector<Var> vars;           // one placeholder per input dimension
  std::vector<Expr> forward;       // physical coordinates as expressions of `vars`
  std::vector<int64_t> output_shape;
  std::string name;                // "row_major", "swizzled", ...: for printing
};

class Layout {
 public:
  Layout() = default;
  explicit Layout(std::shared_ptr<const LayoutNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  const LayoutNode* operator->() const { return node_.get(); }

  const std::vector<int64_t>& input_shape() const { return node_->input_shape; }
  const std::vector<int64_t>& output_shape() const { return node_->output_shape; }
  int64_t input_size() const;
  int64_t output_size() const;

  // The physical coordinates of a logical index given as expressions.
  std::vector<Expr> map(const std::vector<Expr>& indices) const;
  // The same on integers.
  std::vector<int64_t> apply(const std::vector<int64_t>& indices) const;
  // Flat physical offset (row-major over output_shape) of an integer logical index.
  int64_t apply_flat(const std::vector<int64_t>& indices) const;

  // True when every logical index maps to a distinct in-range physical index and the two spaces
  // have the same size; otherwise `why` names a collision or an out-of-range image. Enumerates,
  // so it is meant for tests and checks on tiles (at most 2^22 elements).
  bool is_bijective(std::string* why = nullptr) const;
  // Same map on every logical index (by enumeration; shapes must match).
  bool same_map(const Layout& other) const;

  std::string str() const;

 private:
  std::shared_ptr<const LayoutNode> node_;
};

// Builds a layout from a function of the index variables.
Layout make_layout(std::vector<int64_t> input_shape, std::vector<int64_t> output_shape,
                   const std::function<std::vector<Expr>(const std::vector<Var>&)>& fn, std::string name = "custom");
// Dense row-major: one flat offset.
Layout make_row_major_layout(const std::vector<int64_t>& shape);
// Row-major with each row (last dimension) padded to `row_pitch` elements.
Layout make_padded_layout(const std::vector<int64_t>& shape, int64_t row_pitch);

// Row-major flat offset expression of `indices` in `shape`.
Expr flatten_index(const std::vector<Expr>& indices, const std::vector<int64_t>& shape);
// Enumerates every index of `shape` in row-major order (fn returns false to stop early).
void for_each_index(const std::vector<int64_t>& shape, const std::function<bool(const std::vector<int64_t>&)>& fn);

}  // namespace tl
