#include "ir/buffer.h"

#include "ir/error.h"

namespace tl {

const char* scope_name(MemScope s) {
  switch (s) {
    case MemScope::kGlobal: return "global";
    case MemScope::kShared: return "shared";
    case MemScope::kFragment: return "fragment";
    case MemScope::kLocal: return "local";
    case MemScope::kLocalVar: return "local.var";
    case MemScope::kL1: return "L1";
    case MemScope::kUB: return "UB";
    case MemScope::kL0A: return "L0A";
    case MemScope::kL0B: return "L0B";
    case MemScope::kL0C: return "L0C";
    case MemScope::kL0: return "L0";
    case MemScope::kBarrier: return "barrier";
  }
  return "?";
}

MemScope parse_scope(const std::string& name) {
  static const std::pair<const char*, MemScope> table[] = {
      {"global", MemScope::kGlobal},     {"shared", MemScope::kShared},
      {"shared.dyn", MemScope::kShared}, {"fragment", MemScope::kFragment},
      {"local.fragment", MemScope::kFragment}, {"local", MemScope::kLocal},
      {"local.var", MemScope::kLocalVar}, {"L1", MemScope::kL1},
      {"UB", MemScope::kUB},             {"L0A", MemScope::kL0A},
      {"L0B", MemScope::kL0B},           {"L0C", MemScope::kL0C},
      {"L0", MemScope::kL0},             {"barrier", MemScope::kBarrier},
  };
  for (auto& [n, s] : table)
    if (name == n) return s;
  throw_error<ValueError>("unknown memory scope '", name,
                          "'; expected global, shared, fragment, local, local.var, L1, UB, L0A, L0B, L0C, L0");
}

bool is_block_local(MemScope s) { return s == MemScope::kShared || s == MemScope::kFragment || s == MemScope::kLocal; }

bool is_ascend_scope(MemScope s) {
  return s == MemScope::kL1 || s == MemScope::kUB || s == MemScope::kL0A || s == MemScope::kL0B ||
         s == MemScope::kL0C || s == MemScope::kL0;
}

Buffer::Buffer(std::string name, DataType dtype, std::vector<Expr> shape, MemScope scope,
               std::vector<Expr> strides, Span span) {
  if (dtype.is_void()) throw_error<TypeError>("buffer '", name, "' cannot have dtype void");
  for (auto& e : shape) {
    if (!e.defined()) throw_error<TypeError>("buffer '", name, "': undefined shape entry");
    if (!e.dtype().is_integer()) throw_error<TypeError>("buffer '", name, "': shape entries must be integers, got ", e.dtype().str());
    int64_t v;
    if (is_const_int(e, &v) && v < 0) throw_error<ValueError>("buffer '", name, "': negative dimension ", v);
  }
  if (!strides.empty() && strides.size() != shape.size())
    throw_error<TypeError>("buffer '", name, "': ", strides.size(), " strides for ", shape.size(), " dimensions");
  auto n = std::make_shared<BufferNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->scope = scope;
  n->span = std::move(span);
  node_ = std::move(n);
}

std::vector<Expr> Buffer::effective_strides() const {
  if (!node_->strides.empty()) return node_->strides;
  std::vector<Expr> s(node_->shape.size());
  Expr acc = make_int(1, node_->shape.empty() ? DataType::Int32() : node_->shape.back().dtype());
  for (size_t i = node_->shape.size(); i-- > 0;) {
    s[i] = acc;
    acc = acc * node_->shape[i];
  }
  return s;
}

Expr Buffer::offset_of(const std::vector<Expr>& indices) const {
  if (indices.size() == 1 && ndim() != 1) return indices[0];
  if (indices.size() != ndim())
    throw_error<TypeError>("buffer '", name(), "' has ", ndim(), " dimensions, indexed with ", indices.size());
  auto st = effective_strides();
  Expr off;
  for (size_t i = 0; i < indices.size(); ++i) {
    Expr term = indices[i] * st[i];
    off = off.defined() ? off + term : term;
  }
  return off.defined() ? off : Expr(0);
}

Expr Buffer::num_elements() const {
  Expr n = 1;
  for (auto& e : node_->shape) n = n * e;
  return n;
}

Buffer Buffer::with_shape(std::vector<Expr> shape) const {
  auto n = std::make_shared<BufferNode>(*node_);
  n->shape = std::move(shape);
  n->strides.clear();
  return Buffer(std::move(n));
}
Buffer Buffer::with_scope(MemScope scope) const {
  auto n = std::make_shared<BufferNode>(*node_);
  n->scope = scope;
  return Buffer(std::move(n));
}
Buffer Buffer::with_name(std::string name) const {
  auto n = std::make_shared<BufferNode>(*node_);
  n->name = std::move(name);
  return Buffer(std::move(n));
}

Expr make_load(Buffer buffer, std::vector<Expr> indices) {
  if (!buffer.defined()) throw_error<TypeError>("load from an undefined buffer");
  if (indices.size() != buffer.ndim() && indices.size() != 1)
    throw_error<TypeError>("buffer '", buffer.name(), "' has ", buffer.ndim(), " dimensions but is indexed with ",
                           indices.size(), " indices");
  int lanes = 1;
  for (auto& i : indices) {
    if (!i.defined()) throw_error<TypeError>("undefined index into buffer '", buffer.name(), "'");
    if (!i.dtype().is_integer()) throw_error<TypeError>("index into buffer '", buffer.name(), "' must be an integer, got ", i.dtype().str());
    lanes = std::max<int>(lanes, i.dtype().lanes);
  }
  DataType t = buffer.dtype().with_lanes(lanes);
  return Expr(std::make_shared<BufferLoadNode>(t, std::move(buffer), std::move(indices)));
}

BufferRegion BufferRegion::full(const Buffer& b) {
  std::vector<Range> r;
  for (auto& e : b.shape()) r.emplace_back(make_int(0, e.dtype()), e);
  return BufferRegion(b, std::move(r));
}

std::vector<Expr> BufferRegion::squeezed_extents() const {
  std::vector<Expr> out;
  for (auto& r : region)
    if (!is_one(r.extent)) out.push_back(r.extent);
  return out;
}

bool Attr::as_bool() const {
  if (kind_ == kBool || kind_ == kInt) return i_ != 0;
  if (kind_ == kExpr) {
    int64_t v;
    if (is_const_int(e_, &v)) return v != 0;
  }
  throw_error<TypeError>("attribute is not a boolean constant");
}
int64_t Attr::as_int() const {
  if (kind_ == kBool || kind_ == kInt) return i_;
  if (kind_ == kExpr) {
    int64_t v;
    if (is_const_int(e_, &v)) return v;
  }
  throw_error<TypeError>("attribute is not an integer constant");
}
double Attr::as_float() const {
  if (kind_ == kFloat) return f_;
  if (kind_ == kInt || kind_ == kBool) return static_cast<double>(i_);
  if (kind_ == kExpr) {
    double f;
    int64_t i;
    if (is_const_float(e_, &f)) return f;
    if (is_const_int(e_, &i)) return static_cast<double>(i);
  }
  throw_error<TypeError>("attribute is not a number");
}
const std::string& Attr::as_str() const {
  if (kind_ != kStr) throw_error<TypeError>("attribute is not a string");
  return s_;
}
Expr Attr::as_expr() const {
  switch (kind_) {
    case kExpr: return e_;
    case kInt: return make_int(i_, DataType::Int32());
    case kBool: return make_bool(i_ != 0);
    case kFloat: return make_float(f_);
    default: throw_error<TypeError>("attribute is not an expression");
  }
}
const Buffer& Attr::as_buffer() const {
  if (kind_ != kBuffer) throw_error<TypeError>("attribute is not a buffer");
  return b_;
}
const std::vector<int64_t>& Attr::as_int_list() const {
  if (kind_ != kIntList) throw_error<TypeError>("attribute is not an integer list");
  return ints_;
}
const std::vector<Expr>& Attr::as_expr_list() const {
  if (kind_ != kExprList) throw_error<TypeError>("attribute is not an expression list");
  return exprs_;
}
const std::vector<std::string>& Attr::as_str_list() const {
  if (kind_ != kStrList) throw_error<TypeError>("attribute is not a string list");
  return strs_;
}

bool attr_bool(const AttrMap& m, const std::string& key, bool dflt) {
  auto it = m.find(key);
  return it == m.end() || it->second.is_none() ? dflt : it->second.as_bool();
}
int64_t attr_int(const AttrMap& m, const std::string& key, int64_t dflt) {
  auto it = m.find(key);
  return it == m.end() || it->second.is_none() ? dflt : it->second.as_int();
}
std::string attr_str(const AttrMap& m, const std::string& key, const std::string& dflt) {
  auto it = m.find(key);
  return it == m.end() || it->second.is_none() ? dflt : it->second.as_str();
}

}  // namespace tl
