/* oneDNN as a benchmark peer for the cpu GEMMs (bench/cpu_gemm.py loads it with ctypes when
 * libdnnl is installed, e.g. Debian's libdnnl-dev): a matmul primitive C[M, N] (f32) =
 * A[M, K] * B[K, N] for bf16 or f32 A and B, row-major, created once and executed on user memory. */
#include <oneapi/dnnl/dnnl.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  dnnl_memory_desc_t a_md, b_md, c_md;
  char impl[128];
} Matmul;

/* bf16 != 0: bf16 A and B; else f32. Returns NULL on failure. */
void* onednn_matmul_create(long m, long n, long k, int bf16) {
  Matmul* mm = (Matmul*)calloc(1, sizeof(Matmul));
  dnnl_dims_t a = {m, k}, b = {k, n}, c = {m, n};
  dnnl_data_type_t in = bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_matmul_desc_t desc;
  const char* impl = NULL;
  if (dnnl_engine_create(&mm->engine, dnnl_cpu, 0) != dnnl_success) goto fail;
  if (dnnl_stream_create(&mm->stream, mm->engine, dnnl_stream_default_flags) != dnnl_success) goto fail;
  if (dnnl_memory_desc_init_by_tag(&mm->a_md, 2, a, in, dnnl_ab) != dnnl_success) goto fail;
  if (dnnl_memory_desc_init_by_tag(&mm->b_md, 2, b, in, dnnl_ab) != dnnl_success) goto fail;
  if (dnnl_memory_desc_init_by_tag(&mm->c_md, 2, c, dnnl_f32, dnnl_ab) != dnnl_success) goto fail;
  if (dnnl_matmul_desc_init(&desc, &mm->a_md, &mm->b_md, NULL, &mm->c_md) != dnnl_success) goto fail;
  if (dnnl_primitive_desc_create(&mm->pd, &desc, NULL, mm->engine, NULL) != dnnl_success) goto fail;
  if (dnnl_primitive_create(&mm->prim, mm->pd) != dnnl_success) goto fail;
  if (dnnl_primitive_desc_query(mm->pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl)
    strncpy(mm->impl, impl, sizeof mm->impl - 1);
  return mm;
fail:
  free(mm);
  return NULL;
}

const char* onednn_matmul_impl(void* h) { return ((Matmul*)h)->impl; }

int onednn_matmul_run(void* h, void* a, void* b, void* c) {
  Matmul* mm = (Matmul*)h;
  dnnl_memory_t ma, mb, mc;
  dnnl_memory_create(&ma, &mm->a_md, mm->engine, a);
  dnnl_memory_create(&mb, &mm->b_md, mm->engine, b);
  dnnl_memory_create(&mc, &mm->c_md, mm->engine, c);
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
  dnnl_status_t st = dnnl_primitive_execute(mm->prim, mm->stream, 3, args);
  dnnl_stream_wait(mm->stream);
  dnnl_memory_destroy(ma);
  dnnl_memory_destroy(mb);
  dnnl_memory_destroy(mc);
  return st == dnnl_success ? 0 : 1;
}
