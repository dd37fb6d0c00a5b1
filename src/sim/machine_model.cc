#include "sim/machine_model.h"

#include <algorithm>
#include <cctype>

#include "ir/error.h"

namespace tl::sim {

const char* pipe_name(Pipe p) {
  static const char* names[] = {"S", "MTE1", "MTE2", "MTE3", "M", "FIX", "V"};
  return names[static_cast<int>(p)];
}
const char* pipe_user_name(Pipe p) {
  static const char* names[] = {"s", "mte1", "mte2", "mte3", "m", "fix", "v"};
  return names[static_cast<int>(p)];
}
bool parse_pipe(const std::string& text, Pipe* out) {
  std::string s;
  for (char c : text) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.rfind("pipe_", 0) == 0) s = s.substr(5);
  for (int i = 0; i < kNumPipes; ++i)
    if (s == pipe_user_name(static_cast<Pipe>(i))) {
      *out = static_cast<Pipe>(i);
      return true;
    }
  return false;
}

const char* core_kind_name(CoreKind k) { return k == CoreKind::kAIC ? "AIC" : "AIV"; }

const char* mem_name(Mem m) {
  static const char* names[] = {"GM", "L1", "L0A", "L0B", "L0C", "UB"};
  return names[static_cast<int>(m)];
}
CoreKind mem_owner(Mem m) { return m == Mem::kUB ? CoreKind::kAIV : CoreKind::kAIC; }

const char* copy_path_name(CopyPath p) {
  static const char* names[] = {"GM->L1", "GM->UB", "UB->GM", "L0C->GM", "L1->L0A", "L1->L0B", "UB->UB"};
  return names[static_cast<int>(p)];
}

double MachineModel::bytes_per_cycle(CopyPath p) const {
  return copy_gib_per_s[static_cast<int>(p)] * double(1ll << 30) / clock_hz;
}

const VectorCost& MachineModel::vector_cost(const std::string& op) const {
  auto it = vector_costs.find(op);
  return it == vector_costs.end() ? default_vector : it->second;
}

const MachineModel& machine_model(const std::string& name) {
  std::string n;
  for (char c : name) n += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (n.empty() || n == "A2") return model_a2();
  if (n == "A3") return model_a3();
  throw_error<ValueError>("unknown Ascend model '", name, "'; supported models: A2, A3");
}

}  // namespace tl::sim
