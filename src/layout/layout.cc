#include "layout/layout.h"

#include <sstream>
#include <unordered_map>

#include "ir/error.h"
#include "ir/functor.h"
#include "ir/eval.h"
#include "ir/printer.h"

namespace tl {

int64_t eval_index(const Expr& e, const std::map<Var, int64_t, VarLess>& env) {
  return eval_int_or_throw(e, env, "eval_index");
}

NestIndexEval::NestIndexEval(const std::vector<Var>& vars, const std::vector<Expr>& indices)
    : vars_(vars), indices_(indices), direct_(indices.size(), -1) {
  bool need_env = false;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (const VarNode* v = indices[i].as<VarNode>())
      for (size_t k = 0; k < vars.size(); ++k)
        if (vars[k].get() == v) direct_[i] = static_cast<int>(k);
    need_env |= direct_[i] < 0;
  }
  if (need_env)
    for (const Var& v : vars_) env_[v] = 0;
}

void NestIndexEval::eval(const std::vector<int64_t>& point, std::vector<int64_t>* idx) {
  TL_ICHECK(point.size() == vars_.size());
  idx->resize(indices_.size());
  eval(point.data(), idx->data());
}

void NestIndexEval::eval_slow(const int64_t* point, int64_t* idx) {
  bool env_set = false;
  for (size_t i = 0; i < indices_.size(); ++i) {
    if (direct_[i] >= 0) {
      idx[i] = point[static_cast<size_t>(direct_[i])];
      continue;
    }
    if (!env_set) {
      for (size_t k = 0; k < vars_.size(); ++k) env_.find(vars_[k])->second = point[k];
      env_set = true;
    }
    idx[i] = eval_index(indices_[i], env_);
  }
}

int64_t Layout::input_size() const {
  int64_t n = 1;
  for (int64_t s : node_->input_shape) n *= s;
  return n;
}

int64_t Layout::output_size() const {
  int64_t n = 1;
  for (int64_t s : node_->output_shape) n *= s;
  return n;
}

std::vector<Expr> Layout::map(const std::vector<Expr>& indices) const {
  if (indices.size() != node_->vars.size())
    throw_error<ValueError>("layout ", node_->name, " takes ", node_->vars.size(), " indices, got ", indices.size());
  std::map<Var, Expr, VarLess> vmap;
  for (size_t i = 0; i < indices.size(); ++i) vmap[node_->vars[i]] = indices[i];
  std::vector<Expr> out;
  out.reserve(node_->forward.size());
  for (const Expr& f : node_->forward) out.push_back(substitute(f, vmap));
  return out;
}

std::vector<int64_t> Layout::apply(const std::vector<int64_t>& indices) const {
  if (indices.size() != node_->vars.size())
    throw_error<ValueError>("layout ", node_->name, " takes ", node_->vars.size(), " indices, got ", indices.size());
  // The map's variables are few: a linear search beats building a map per point.
  auto lookup = [&](const VarNode* v, int64_t* out) {
    for (size_t i = 0; i < indices.size(); ++i)
      if (node_->vars[i].get() == v) return (*out = indices[i], true);
    return false;
  };
  std::vector<int64_t> out;
  out.reserve(node_->forward.size());
  for (const Expr& f : node_->forward) {
    int64_t v = 0;
    const VarNode* unbound = nullptr;
    IntEval s = eval_int(f, lookup, &v, &unbound);
    if (s != IntEval::kOk) throw_int_eval(s, f, unbound, "eval_index");
    out.push_back(v);
  }
  return out;
}

int64_t Layout::apply_flat(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> p = apply(indices);
  int64_t flat = 0;
  for (size_t i = 0; i < p.size(); ++i) flat = flat * node_->output_shape[i] + p[i];
  return flat;
}

void for_each_index(const std::vector<int64_t>& shape, const std::function<bool(const std::vector<int64_t>&)>& fn) {
  for (int64_t s : shape)
    if (s <= 0) return;
  std::vector<int64_t> idx(shape.size(), 0);
  while (true) {
    if (!fn(idx)) return;
    int d = static_cast<int>(shape.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

bool Layout::is_bijective(std::string* why) const {
  int64_t n = input_size();
  if (n > (int64_t(1) << 22)) throw_error<ValueError>("Layout::is_bijective: ", n, " elements is too many to check");
  if (n != output_size()) {
    if (why) *why = "input has " + std::to_string(n) + " elements, output " + std::to_string(output_size());
    return false;
  }
  std::vector<int64_t> owner(static_cast<size_t>(n), -1);
  bool ok = true;
  int64_t linear = 0;
  for_each_index(node_->input_shape, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> p = apply(idx);
    int64_t flat = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      if (p[i] < 0 || p[i] >= node_->output_shape[i]) {
        if (why) *why = "index " + std::to_string(linear) + " maps out of range";
        ok = false;
        return false;
      }
      flat = flat * node_->output_shape[i] + p[i];
    }
    if (owner[static_cast<size_t>(flat)] >= 0) {
      if (why)
        *why = "indices " + std::to_string(owner[static_cast<size_t>(flat)]) + " and " + std::to_string(linear) +
               " (row-major) both map to offset " + std::to_string(flat);
      ok = false;
      return false;
    }
    owner[static_cast<size_t>(flat)] = linear++;
    return true;
  });
  return ok;
}

bool Layout::same_map(const Layout& other) const {
  if (input_shape() != other.input_shape() || output_shape() != other.output_shape()) return false;
  bool same = true;
  for_each_index(node_->input_shape, [&](const std::vector<int64_t>& idx) {
    same = apply(idx) == other.apply(idx);
    return same;
  });
  return same;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << "]";
  return os.str();
}

std::string Layout::str() const {
  std::ostringstream os;
  os << "Layout<" << node_->name << ">(" << shape_str(node_->input_shape) << " -> " << shape_str(node_->output_shape)
     << ": (";
  for (size_t i = 0; i < node_->vars.size(); ++i) os << (i ? ", " : "") << node_->vars[i].name();
  os << ") -> (";
  for (size_t i = 0; i < node_->forward.size(); ++i) os << (i ? ", " : "") << to_string(node_->forward[i]);
  os << "))";
  return os.str();
}

Layout make_layout(std::vector<int64_t> input_shape, std::vector<int64_t> output_shape,
                   const std::function<std::vector<Expr>(const std::vector<Var>&)>& fn, std::string name) {
  auto n = std::make_shared<LayoutNode>();
  static const char* kNames[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  for (size_t d = 0; d < input_shape.size(); ++d)
    n->vars.emplace_back(d < 8 ? kNames[d] : "i" + std::to_string(d));
  n->forward = fn(n->vars);
  if (n->forward.size() != output_shape.size())
    throw_error<ValueError>("make_layout(", name, "): the map gives ", n->forward.size(), " coordinates for a ",
                            output_shape.size(), "-d output");
  n->input_shape = std::move(input_shape);
  n->output_shape = std::move(output_shape);
  n->name = std::move(name);
  return Layout(std::move(n));
}

Expr flatten_index(const std::vector<Expr>& indices, const std::vector<int64_t>& shape) {
  TL_ICHECK(indices.size() == shape.size());
  Expr flat = make_int(0);
  for (size_t d = 0; d < indices.size(); ++d) flat = flat * make_int(shape[d]) + indices[d];
  return flat;
}

Layout make_row_major_layout(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return make_layout(shape, {n}, [&](const std::vector<Var>& v) {
    std::vector<Expr> idx(v.begin(), v.end());
    return std::vector<Expr>{flatten_index(idx, shape)};
  }, "row_major");
}

Layout make_padded_layout(const std::vector<int64_t>& shape, int64_t row_pitch) {
  if (shape.empty() || row_pitch < shape.back())
    throw_error<ValueError>("make_padded_layout: the row pitch ", row_pitch, " is smaller than the row");
  std::vector<int64_t> padded = shape;
  padded.back() = row_pitch;
  int64_t n = 1;
  for (int64_t s : padded) n *= s;
  return make_layout(shape, {n}, [&](const std::vector<Var>& v) {
    std::vector<Expr> idx(v.begin(), v.end());
    return std::vector<Expr>{flatten_index(idx, padded)};
  }, "padded");
}

}  // namespace tl
