#include "ir/tile_op.h"

#include <map>

#include "ir/error.h"

namespace tl {

static std::map<std::string, std::unique_ptr<TileOp>, std::less<>>& op_registry() {
  static std::map<std::string, std::unique_ptr<TileOp>, std::less<>> r;
  return r;
}

void register_tile_op(std::unique_ptr<TileOp> op) {
  TL_ICHECK(op != nullptr);
  std::string name = op->name();
  op_registry()[name] = std::move(op);
}

const TileOp* find_tile_op(const std::string& name) {
  auto it = op_registry().find(name);
  return it == op_registry().end() ? nullptr : it->second.get();
}

const TileOp& get_tile_op(const std::string& name) {
  const TileOp* d = find_tile_op(name);
  if (!d) throw_error<Error>("unknown tile op '", name, "'");
  return *d;
}

std::vector<std::string> registered_tile_ops() {
  std::vector<std::string> out;
  for (auto& [k, v] : op_registry()) out.push_back(k);
  return out;
}

std::string op_error_prefix(const TileOpNode& op) {
  std::string loc = op.span.str();
  std::string name = op.op;
  if (name.rfind("dist.", 0) == 0) name = name.substr(5);  // dist.copy is the user's T.copy(..., dst=peer)
  return (loc.empty() ? "" : loc + ": ") + "T." + name + ": ";
}

}  // namespace tl
