"""Multi-device kernels written with T.Scale("device") (docs/DISTRIBUTED.md).

Each function returns a @T.prim_func for one rank of a `world`-rank job; the tensors named
"symmetric" must come from tilelang.distributed.empty / zeros (peers read or write them).

- allgather_gemm: C = AllGather(A) @ B with the gather fused into the GEMM. Every rank pushes its
  rows of A to its peers tile by tile (each block of a row tile a slice of its columns) and counts
  each slice on the peer's flag of the tile; GEMM tiles start with the local rows
  and wait only for the remote tile they need, so communication overlaps computation.
- allgather_gemm_ce: the same product with the gather done by the copy engines
  (tilelang.distributed.CopyEngineAllGather) while a plain GEMM runs; its tiles wait per chunk.
- gemm_reduce_scatter: Out_r = rows r of sum_s (A_s @ B_s). Tiles owned by peers are computed
  first and pushed to their owner with a signal; a rank's own tiles come last and add the peers'
  partial tiles as they arrive.
- allreduce: Y = sum over ranks of X (two-shot: each rank reduces its chunk from all peers, then
  writes the sum into every peer's Y).

`epoch` (a scalar argument) must grow by one on every call: flags are compared with it, so they
never need resetting.
"""
import tilelang.language as T


def _chunk_raster(bx, by, gx, rows_per_chunk, panel):
    """Block (bx, by) of a grid of gx columns -> (chunk, row tile in the chunk, column tile).

    Blocks run chunk by chunk (a chunk = one rank's rows): every block of the first chunk in launch
    order comes before any block of the second, so blocks that wait for a peer never hold the
    workers / SMs that blocks they wait on (here or on the peer) need. Inside a chunk the walk
    covers `panel` row tiles at a time across all columns, so tiles of B stay in L2."""
    pid = by * gx + bx
    per_chunk = rows_per_chunk * gx
    c = pid // per_chunk
    q = pid % per_chunk
    group = panel * gx
    first = (q // group) * panel
    n_rows = T.min(rows_per_chunk - first, panel)
    return c, first + (q % group) % n_rows, (q % group) // n_rows


def allgather_gemm(M_loc, N, K, world, block_M=128, block_N=128, block_K=64, dtype="float16",
                   accum_dtype="float32", num_stages=3, threads=256, panel=8):
    """A (symmetric, [world*M_loc, K]): this rank's rows at [rank*M_loc, (rank+1)*M_loc) are filled
    by the caller, the others arrive from the peers. B: [K, N]. C: [world*M_loc, N].
    flags (symmetric, uint64, [world*M_loc // block_M])."""
    assert M_loc % block_M == 0, "M_loc must be a multiple of block_M"
    M = M_loc * world
    tiles_loc = M_loc // block_M
    tiles = M // block_M
    n_cols = (N + block_N - 1) // block_N
    k_slice = (K + n_cols - 1) // n_cols

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
             flags: T.Tensor((tiles,), "uint64"), epoch: T.int64):
        with T.Kernel(T.ceildiv(N, block_N), tiles, threads=threads) as (bx0, by0):
            with T.Scale("device") as (rank, nranks):
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
                c, row, bx = _chunk_raster(bx0, by0, T.ceildiv(N, block_N), tiles_loc, panel)
                # Local rows first (chunk 0 is this rank's), then the next ranks' chunks.
                t = ((c + rank) % nranks) * tiles_loc + row
                owner = t // tiles_loc
                if owner == rank:
                    # Every block of a local row tile pushes one slice of its columns of A to each
                    # peer and counts it on the peer's flag of that tile.
                    for i in T.serial(nranks - 1):
                        peer = (rank + 1 + i) % nranks
                        T.copy(A[t * block_M:(t + 1) * block_M, bx * k_slice:(bx + 1) * k_slice],
                               A[t * block_M:(t + 1) * block_M, bx * k_slice:(bx + 1) * k_slice], dst=peer)
                        T.signal(flags[t], 1, dst=peer, op="add")
                else:
                    T.wait(flags[t], epoch * n_cols, cmp="ge")
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[t * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[t * block_M, bx * block_N])

    return main


def allgather_gemm_ce(M_loc, N, K, world, chunks_per_rank=1, block_M=128, block_N=256, block_K=64, dtype="float16",
                      accum_dtype="float32", num_stages=4, threads=256, panel=8):
    """C = AllGather(A) @ B with the gather done by the copy engines (tilelang.distributed.
    CopyEngineAllGather) while this GEMM runs: A (symmetric, [world*M_loc, K]) is the helper's
    buffer, flags / epoch its `flags` and the epoch start() returned. The kernel is a plain GEMM
    (same tiles and schedule as the plain GEMM: on sm_90a warp-specialized, TMA, persistent) whose
    tiles run this rank's rows first, then the next ranks' in the order the chunks arrive, and wait
    (T.wait, before the tile's loads: on sm_90a the TMA producer thread alone waits) for the chunk
    holding their rows of A. B: [K, N]. C: [world*M_loc, N]."""
    assert M_loc % (chunks_per_rank * block_M) == 0, "M_loc must be a multiple of chunks_per_rank * block_M"
    M = M_loc * world
    tiles_loc = M_loc // block_M
    tiles = M // block_M
    chunk_tiles = tiles_loc // chunks_per_rank

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype),
             flags: T.Tensor((world * chunks_per_rank,), "uint32"), epoch: T.int32):
        with T.Kernel(T.ceildiv(N, block_N), tiles, threads=threads) as (bx, by):
            with T.Scale("device") as (rank, nranks):
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
                T.use_swizzle(panel_size=panel)
                t = (by + rank * tiles_loc) % tiles  # row tile: this rank's first, then rank + 1's, ...
                T.wait(flags[t // chunk_tiles], epoch, cmp="ge")
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                    T.copy(A[t * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[t * block_M, bx * block_N])

    return main


def gemm_reduce_scatter(M, N, K_loc, world, block_M=128, block_N=128, block_K=64, dtype="float16",
                        accum_dtype="float32", num_stages=3, threads=256, panel=8, partial_dtype="float32"):
    """A: [M, K_loc], B: [K_loc, N] (this rank's slice of K). Out: [M // world, N] = this rank's rows
    of the sum over ranks. stage (symmetric, accum dtype, [M, N]): this rank's partial tiles.
    recv (symmetric, accum dtype, [world, M // world, N]): peers' partial tiles of this rank's
    rows. flags (symmetric, uint64, [M // world // block_M, ceil(N / block_N)])."""
    assert M % (world * block_M) == 0, "M must be a multiple of world * block_M"
    M_loc = M // world
    tiles_loc = M_loc // block_M
    tiles = M // block_M
    n_tiles = (N + block_N - 1) // block_N

    @T.prim_func
    def main(A: T.Tensor((M, K_loc), dtype), B: T.Tensor((K_loc, N), dtype), Out: T.Tensor((M_loc, N), dtype),
             stage: T.Tensor((M, N), partial_dtype), recv: T.Tensor((world, M_loc, N), partial_dtype),
             flags: T.Tensor((tiles_loc, n_tiles), "uint64"), epoch: T.int64):
        with T.Kernel(n_tiles, tiles, threads=threads) as (bx0, by0):
            with T.Scale("device") as (rank, nranks):
                A_shared = T.alloc_shared((block_M, block_K), dtype)
                B_shared = T.alloc_shared((block_K, block_N), dtype)
                C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
                c, row, bx = _chunk_raster(bx0, by0, n_tiles, tiles_loc, panel)
                # Peers' tiles first (the next rank's rows first), this rank's own rows last.
                t = ((c + rank + 1) % nranks) * tiles_loc + row
                owner = t // tiles_loc
                lt = t % tiles_loc
                T.clear(C_local)
                for k in T.Pipelined(T.ceildiv(K_loc, block_K), num_stages=num_stages):
                    T.copy(A[t * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                if owner != rank:
                    T.copy(C_local, stage[t * block_M, bx * block_N])
                    T.copy(stage[t * block_M:(t + 1) * block_M, bx * block_N:(bx + 1) * block_N],
                           recv[rank, lt * block_M:(lt + 1) * block_M, bx * block_N:(bx + 1) * block_N], dst=owner)
                    T.signal(flags[lt, bx], 1, dst=owner, op="add")
                else:
                    T.wait(flags[lt, bx], epoch * (nranks - 1), cmp="ge")
                    for s in T.serial(nranks):
                        if s != rank:
                            for i, j in T.Parallel(block_M, block_N):
                                C_local[i, j] += recv[s, lt * block_M + i, bx * block_N + j]
                    T.copy(C_local, Out[lt * block_M, bx * block_N])

    return main


def allreduce(N, world, num_blocks=132, block=8192, dtype="float32", threads=512):
    """X, Y (symmetric, [N]): Y = sum over ranks of X. stage (symmetric, [world, N // world]): the
    pieces of this rank's chunk sent by every rank. N must be a multiple of world * block.

    Two-shot with stores only (remote stores stream over NVLink; remote loads would wait a round
    trip each): every rank pushes piece `tile` of chunk s into rank s's stage, a barrier, then each
    rank sums its chunk's pieces and pushes the sum into every peer's Y."""
    assert N % (world * block) == 0, "N must be a multiple of world * block"
    chunk = N // world
    tiles = chunk // block
    per_block = (tiles + num_blocks - 1) // num_blocks

    @T.prim_func
    def main(X: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype), stage: T.Tensor((world, chunk), dtype)):
        with T.Kernel(num_blocks, threads=threads) as bx:
            with T.Scale("device") as (rank, nranks):
                # Reduce-scatter: piece `tile` of chunk s goes to rank s (stage[rank]).
                for it in T.serial(per_block):
                    tile = bx + it * num_blocks
                    if tile < tiles:
                        for i in T.serial(nranks):
                            s = (rank + 1 + i) % nranks
                            T.copy(X[s * chunk + tile * block:s * chunk + (tile + 1) * block],
                                   stage[rank, tile * block:(tile + 1) * block], dst=s)
                T.barrier()  # block bx of every rank pushed its pieces: they are all here
                for it in T.serial(per_block):
                    tile = bx + it * num_blocks
                    if tile < tiles:
                        base = rank * chunk + tile * block
                        for i in T.Parallel(block):
                            acc = T.alloc_var(dtype)
                            acc = stage[0, tile * block + i]
                            for s in T.serial(nranks - 1):
                                acc += stage[s + 1, tile * block + i]
                            Y[base + i] = acc
                        # All-gather: write the sum into every peer's Y.
                        for i in T.serial(nranks - 1):
                            peer = (rank + 1 + i) % nranks
                            T.copy(Y[base:base + block], Y[base:base + block], dst=peer)
                T.barrier()

    return main
