#include "target/cpu/pipeline.h"

#include "target/cpu/coarsen_gemm_blocks.h"
#include "target/cpu/convert_bf16_rows.h"
#include "target/cpu/forward_gemm_operands.h"
#include "target/cpu/fuse_elementwise_loops.h"
#include "target/cpu/lower_tile_ops_cpu.h"
#include "target/cpu/pad_gemm_accumulators.h"
#include "target/cpu/stream_global_stores.h"
#include "target/cpu/vectorize_math_loops.h"
#include "transform/config_index_bitwidth.h"
#include "transform/check_cpu_constructs.h"
#include "transform/flatten_buffer_access.h"
#include "transform/legalize_cpu_loops.h"
#include "transform/legalize_safe_memory_access.h"
#include "transform/lower_tile_ops.h"
#include "transform/serialize_threads.h"
#include "transform/simplify.h"

namespace tl {

PrimFunc lower_cpu(const PrimFunc& f, PassContext& ctx) {
  PassRunner runner(f, ctx);  // verifies the output of every pass (the first one: the input)
  runner.run("config_index_bitwidth", config_index_bitwidth);  // int64 where indices can exceed int32
  runner.run("check_cpu_constructs", check_cpu_constructs);
  runner.run("serialize_threads", serialize_threads);
  runner.run("simplify", simplify);  // constant regions let the GEMM take its static form
  runner.run("forward_gemm_operands", forward_gemm_operands);  // T.gemm reads global tiles, not their copies
  runner.run("coarsen_gemm_blocks", coarsen_gemm_blocks);  // GPU-sized GEMM blocks -> cpu-sized ones
  runner.run("pad_gemm_accumulators", pad_gemm_accumulators);  // AMX C tiles: rows 1 KiB apart alias L1 sets
  runner.run("lower_tile_ops", [](const PrimFunc& fn, const PassContext& c) {
    return lower_tile_ops(fn, c, lower_tile_op_cpu);
  });
  runner.run("legalize_safe_memory_access", legalize_safe_memory_access);  // tails of T.Parallel on global
  runner.run("legalize_cpu_loops", legalize_cpu_loops);
  runner.run("fuse_elementwise_loops", fuse_elementwise_loops);  // one nest per element-wise chain
  runner.run("flatten_buffer_access", flatten_buffer_access);
  runner.run("simplify", simplify);  // folds the flattened index arithmetic, drops provable guards
  runner.run("convert_bf16_rows", convert_bf16_rows);  // float32 -> bfloat16 stores: one row conversion per nest
  runner.run("stream_global_stores", stream_global_stores);  // long local -> global copies bypass the cache
  runner.run("vectorize_math_loops", vectorize_math_loops);  // exp2 / exp loops as explicit 16-lane vector code
  return runner.func();
}

}  // namespace tl
