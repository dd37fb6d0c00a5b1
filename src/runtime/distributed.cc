#include "runtime/distributed.h"

#include <mutex>

#include "ir/error.h"

namespace tl {

namespace {
std::mutex g_mu;
DistContext g_ctx;
uint64_t g_generation = 1;
}  // namespace

void dist_set_context(const DistContext& c) {
  if (c.world < 0 || c.world > kDistMaxRanks)
    throw_error<ValueError>("distributed context: world size ", c.world, " is outside [0, ", kDistMaxRanks, "]");
  if (c.world > 0) {
    if (c.rank < 0 || c.rank >= c.world)
      throw_error<ValueError>("distributed context: rank ", c.rank, " is outside [0, ", c.world, ")");
    if (c.heap_size < kDistCtrlBytes + c.ctrl_offset)
      throw_error<ValueError>("distributed context: heap of ", c.heap_size, " bytes is smaller than its control area");
    for (int r = 0; r < c.world; ++r)
      if (c.bases[r] == 0) throw_error<ValueError>("distributed context: the heap of rank ", r, " is not mapped");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  g_ctx = c;
  ++g_generation;
}

DistContext dist_context(uint64_t* generation) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (generation) *generation = g_generation;
  return g_ctx;
}

DistContext dist_context_for_launch(const std::string& kernel, uint64_t* generation) {
  DistContext c = dist_context(generation);
  if (c.world == 0)
    throw_error<RuntimeError>("kernel '", kernel, "' uses distributed operators (T.Scale(\"device\"), remote T.copy, ",
                              "T.barrier, T.signal, T.wait) but tilelang.distributed is not initialised in this ",
                              "process: start one process per device with tilelang.distributed.launch(...) or torchrun ",
                              "and call tilelang.distributed.init() first");
  return c;
}

}  // namespace tl
