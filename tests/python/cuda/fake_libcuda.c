/* A stand-in for libcuda.so.1 used by test_driver_fake.py on machines without a GPU: it
 * implements the driver entry points tilelang resolves, with host memory as "device" memory and
 * a launch that records its arguments instead of running anything. It checks what a real driver
 * would reject (null pointers, no current context, unknown handles), so the driver layer's call
 * sequence, argument marshalling and error paths are exercised in CI. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int g_ctx_tag = 0x5eed;
static __thread void* g_current = 0; /* per thread, as the driver's current context */
static int g_inited = 0;

/* The last launch, for the test to inspect through fake_last_launch(). */
static unsigned g_grid[3], g_block[3], g_smem;
static uint64_t g_args[16];
static int g_nargs_hint = 0;

#define REQUIRE(c, err) \
  do {                  \
    if (!(c)) return err; \
  } while (0)

CUresult cuInit(unsigned flags) { g_inited = 1; return 0; }
CUresult cuDriverGetVersion(int* v) { REQUIRE(v, 1); *v = 13000; return 0; }
CUresult cuGetErrorName(CUresult r, const char** s) {
  REQUIRE(s, 1);
  *s = r == 1 ? "CUDA_ERROR_INVALID_VALUE" : r == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : r == 500 ? "CUDA_ERROR_NOT_FOUND"
     : r == 400 ? "CUDA_ERROR_INVALID_HANDLE" : r == 200 ? "CUDA_ERROR_INVALID_IMAGE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char** s) { REQUIRE(s, 1); *s = "fake driver error"; return 0; }
CUresult cuDeviceGetCount(int* n) { REQUIRE(g_inited, 3); REQUIRE(n, 1); *n = 1; return 0; }
CUresult cuDeviceGet(int* d, int ordinal) { REQUIRE(d && ordinal == 0, 101); *d = 0; return 0; }
CUresult cuDeviceGetAttribute(int* v, int attr, int dev) {
  REQUIRE(v && dev == 0, 1);
  switch (attr) {
    case 75: *v = 9; break;   /* cc major */
    case 76: *v = 0; break;
    case 16: *v = 132; break; /* SMs */
    case 1: *v = 1024; break;
    case 8: *v = 48 * 1024; break;
    case 97: *v = 227 * 1024; break;
    case 81: *v = 228 * 1024; break;
    case 12: *v = 65536; break;
    case 38: *v = 50 * 1024 * 1024; break;
    default: return 1;
  }
  return 0;
}
CUresult cuDeviceGetName(char* name, int len, int dev) { REQUIRE(name && len > 0, 1); snprintf(name, len, "Fake H200"); return 0; }
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) { REQUIRE(ctx && dev == 0, 1); *ctx = &g_ctx_tag; return 0; }
CUresult cuCtxGetCurrent(void** ctx) { REQUIRE(ctx, 1); *ctx = g_current; return 0; }
CUresult cuCtxSetCurrent(void* ctx) { g_current = ctx; return 0; }
CUresult cuCtxSynchronize(void) { REQUIRE(g_current, 201); return 0; }

typedef struct { char magic[8]; char* image; size_t size; } FakeModule;
typedef struct { char magic[8]; char name[128]; } FakeFunction;
static char g_slot[400];

CUresult cuModuleLoadDataEx(void** mod, const void* image, unsigned n, int* opts, void** vals) {
  REQUIRE(g_current, 201);
  REQUIRE(mod && image, 1);
  const unsigned char* p = (const unsigned char*)image;
  if (!(p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')) return 200;
  uint64_t shoff, shnum = 0, shentsize = 0;
  memcpy(&shoff, p + 40, 8);
  memcpy(&shentsize, p + 58, 2);
  memcpy(&shnum, p + 60, 2);
  size_t size = shoff + shentsize * shnum;
  FakeModule* m = calloc(1, sizeof(FakeModule));
  memcpy(m->magic, "fakemod", 8);
  m->image = malloc(size);
  memcpy(m->image, image, size); /* reads the whole image: a bad pointer crashes here too */
  m->size = size;
  for (unsigned i = 0; i < n; ++i)
    if (opts[i] == 5 && vals[i]) ((char*)vals[i])[0] = 0;
  *mod = m;
  return 0;
}
/* What an exported library (docs/AOT.md) calls by name with dlsym. */
CUresult cuModuleLoadData(void** mod, const void* image) { return cuModuleLoadDataEx(mod, image, 0, 0, 0); }
CUresult cuCtxGetDevice(int* dev) { REQUIRE(g_current, 201); REQUIRE(dev, 1); *dev = 0; return 0; }
static int has_string(const FakeModule* m, const char* s) {
  size_t n = strlen(s);
  for (size_t i = 0; i + n < m->size; ++i)
    if (memcmp(m->image + i, s, n) == 0 && m->image[i + n] == 0 && (i == 0 || m->image[i - 1] == 0)) return 1;
  return 0;
}
CUresult cuModuleUnload(void* mod) {
  REQUIRE(g_current, 201);
  FakeModule* m = mod;
  REQUIRE(m && memcmp(m->magic, "fakemod", 8) == 0, 400);
  memset(m->magic, 0, 8);
  free(m->image);
  free(m);
  return 0;
}
CUresult cuModuleGetFunction(void** fn, void* mod, const char* name) {
  FakeModule* m = mod;
  REQUIRE(fn && name && m && memcmp(m->magic, "fakemod", 8) == 0, 400);
  if (!has_string(m, name)) return 500;
  FakeFunction* f = calloc(1, sizeof(FakeFunction));
  memcpy(f->magic, "fakefn", 7);
  snprintf(f->name, sizeof(f->name), "%s", name);
  *fn = f;
  return 0;
}
CUresult cuModuleGetGlobal_v2(CUdeviceptr* p, size_t* bytes, void* mod, const char* name) {
  FakeModule* m = mod;
  REQUIRE(m && memcmp(m->magic, "fakemod", 8) == 0, 400);
  if (strcmp(name, "tl_device_error") != 0 || !has_string(m, name)) return 500;
  *p = (CUdeviceptr)(uintptr_t)g_slot;
  *bytes = sizeof(g_slot);
  return 0;
}
CUresult cuFuncSetAttribute(void* fn, int attr, int v) { REQUIRE(fn, 400); return v > 227 * 1024 ? 1 : 0; }
CUresult cuFuncGetAttribute(int* v, int attr, void* fn) { REQUIRE(v && fn, 1); *v = attr == 4 ? 32 : 0; return 0; }
CUresult cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void* stream, void** params, void** extra) {
  REQUIRE(g_current, 201);
  FakeFunction* f = fn;
  REQUIRE(f && memcmp(f->magic, "fakefn", 7) == 0, 400);
  REQUIRE(bx * by * bz <= 1024 && gx && gy && gz && bx && by && bz, 1);
  g_grid[0] = gx; g_grid[1] = gy; g_grid[2] = gz;
  g_block[0] = bx; g_block[1] = by; g_block[2] = bz;
  g_smem = smem;
  for (int i = 0; i < g_nargs_hint && i < 16; ++i) memcpy(&g_args[i], params[i], 8); /* reads every slot */
  return 0;
}
CUresult cuStreamSynchronize(void* s) { REQUIRE(g_current, 201); return 0; }
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) { REQUIRE(g_current, 201); REQUIRE(p, 1); *p = (CUdeviceptr)(uintptr_t)calloc(1, n); return 0; }
CUresult cuMemFree_v2(CUdeviceptr p) { REQUIRE(g_current, 201); free((void*)(uintptr_t)p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void* s, size_t n) { REQUIRE(g_current, 201); memcpy((void*)(uintptr_t)d, s, n); return 0; }
CUresult cuMemcpyDtoH_v2(void* d, CUdeviceptr s, size_t n) { REQUIRE(g_current, 201); memcpy(d, (void*)(uintptr_t)s, n); return 0; }
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { REQUIRE(g_current, 201); memset((void*)(uintptr_t)d, v, n); return 0; }
CUresult cuPointerGetAttribute(void* out, int attr, CUdeviceptr p) { return 1; }
/* Tensor maps: the first 8 bytes hold the global address (what a launch records of the parameter),
 * then the two innermost dims and the number of this encode. */
static int g_tmap_encodes = 0;
CUresult cuTensorMapEncodeTiled(void* map, int dtype, unsigned rank, void* addr, const unsigned long long* dims,
                                const unsigned long long* strides, const unsigned* box, const unsigned* es,
                                int interleave, int swizzle, int l2, int oob) {
  REQUIRE(g_current, 201); /* the real driver encodes in the current context */
  REQUIRE(map && ((uintptr_t)map % 64) == 0 && addr && rank >= 1 && rank <= 5 && dims && box && es, 1);
  REQUIRE(rank == 1 || strides, 1);
  uint64_t* w = map;
  memset(map, 0, 128);
  w[0] = (uint64_t)(uintptr_t)addr;
  w[1] = dims[0];
  w[2] = rank > 1 ? dims[1] : 0;
  w[3] = (uint64_t)++g_tmap_encodes;
  return 0;
}

/* The 12.0 ABI of every entry point, as a real driver hands it out. */
CUresult cuGetProcAddress_v2(const char* sym, void** pfn, int version, unsigned long long flags, int* status) {
  static const struct { const char* base; void* fn; } table[] = {
      {"cuDeviceGetCount", (void*)cuDeviceGetCount}, {"cuDeviceGet", (void*)cuDeviceGet},
      {"cuDeviceGetAttribute", (void*)cuDeviceGetAttribute}, {"cuDeviceGetName", (void*)cuDeviceGetName},
      {"cuDevicePrimaryCtxRetain", (void*)cuDevicePrimaryCtxRetain}, {"cuCtxGetCurrent", (void*)cuCtxGetCurrent},
      {"cuCtxSetCurrent", (void*)cuCtxSetCurrent}, {"cuCtxSynchronize", (void*)cuCtxSynchronize},
      {"cuModuleLoadDataEx", (void*)cuModuleLoadDataEx}, {"cuModuleUnload", (void*)cuModuleUnload},
      {"cuModuleGetFunction", (void*)cuModuleGetFunction}, {"cuModuleGetGlobal", (void*)cuModuleGetGlobal_v2},
      {"cuFuncSetAttribute", (void*)cuFuncSetAttribute}, {"cuFuncGetAttribute", (void*)cuFuncGetAttribute},
      {"cuLaunchKernel", (void*)cuLaunchKernel}, {"cuStreamSynchronize", (void*)cuStreamSynchronize},
      {"cuMemAlloc", (void*)cuMemAlloc_v2}, {"cuMemFree", (void*)cuMemFree_v2},
      {"cuMemcpyHtoD", (void*)cuMemcpyHtoD_v2}, {"cuMemcpyDtoH", (void*)cuMemcpyDtoH_v2},
      {"cuMemsetD8", (void*)cuMemsetD8_v2}, {"cuPointerGetAttribute", (void*)cuPointerGetAttribute},
      {"cuTensorMapEncodeTiled", (void*)cuTensorMapEncodeTiled},
  };
  REQUIRE(sym && pfn && version >= 12000, 1);
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); ++i)
    if (strcmp(table[i].base, sym) == 0) {
      *pfn = table[i].fn;
      if (status) *status = 0;
      return 0;
    }
  *pfn = 0;
  if (status) *status = 1;
  return 500;
}

/* Test hooks. */
void fake_set_nargs(int n) { g_nargs_hint = n; }
int fake_tmap_encodes(void) { return g_tmap_encodes; }
void fake_last_launch(unsigned* grid, unsigned* block, unsigned* smem, uint64_t* args) {
  memcpy(grid, g_grid, sizeof(g_grid));
  memcpy(block, g_block, sizeof(g_block));
  *smem = g_smem;
  memcpy(args, g_args, sizeof(g_args));
}
void fake_fail_next_assert(int line) { /* simulate device_assert: the flag word, then the line */
  unsigned flag = 1;
  memcpy(g_slot, &flag, 4);
  memcpy(g_slot + 4, &line, 4);
  snprintf(g_slot + 32, 128, "fake.py");
  snprintf(g_slot + 160, 240, "fake failure");
}
