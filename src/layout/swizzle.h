// Shared-memory layouts for tiles that warps read as 16-byte row pieces (ldmatrix, cp.async,
// 16-byte vector loads).
//
// Shared memory has 32 banks of 4 bytes; a 16-byte access touches 4 consecutive banks, so 8
// threads (one phase of a 16-byte warp access, or one 8x8 ldmatrix matrix) are conflict-free when
// their 16-byte chunks fall at 8 distinct positions (address / 16) mod 8. A row-major tile whose
// rows are 128 bytes apart puts the same column of 8 rows at the same position: an 8-way conflict.
//
// The swizzled layout permutes the eight 16-byte chunks inside every 128-byte line by XOR with a
// 3-bit phase: phase = (byte offset / max(row bytes, 128)) mod 8, i.e. the row index for rows of
// 128 bytes or more, and the line index for shorter rows (64 / 32 / 16 bytes). Every 16-byte row
// piece stays contiguous and aligned (ldmatrix-compatible), the map is a permutation inside each
// line (bijective), and the same column of any 8 consecutive rows lands on 8 distinct chunk
// positions.
#pragma once

#include <cstdint>
#include <vector>

#include "layout/layout.h"

namespace tl {

// Whether make_swizzled_layout applies to a tile of shape (rows..., cols) with `elem_bytes`:
// rows of at least 16 bytes that are a multiple of 16 bytes and either a multiple of 128 bytes
// or a divisor of 128, and a total size that is a multiple of 128 bytes.
bool swizzle_applicable(const std::vector<int64_t>& shape, int elem_bytes);
// The XOR-swizzled layout of a row-major tile (all leading dimensions are rows); the output is
// one flat element offset. Throws LayoutError when !swizzle_applicable.
Layout make_swizzled_layout(const std::vector<int64_t>& shape, int elem_bytes);

// The shared-memory layouts that Hopper's wgmma reads through matrix descriptors ("gmma" layouts).
// The tile's last dimension (the contiguous one, `cols`) is cut into panels of `swizzle_bytes`
// (128, 64 or 32); panel p holds columns [p * P, (p + 1) * P) of every row, the rows swizzle_bytes
// apart, and the panels follow each other (P = swizzle_bytes / elem_bytes). Inside a panel the
// 16-byte chunks of row r are XOR-permuted by (r / (128 / swizzle_bytes)) mod (swizzle_bytes / 16):
// the hardware's 128/64/32-byte swizzle pattern (address bits [4, 4 + log2(swizzle_bytes / 16))
// XOR bits [7, ...)) when the tile starts at a multiple of 8 * swizzle_bytes bytes. Leading
// dimensions (pipeline stages) stack whole tiles. For 128-byte rows this is make_swizzled_layout.
//
// The swizzle width for a tile whose contiguous extent is `cols` elements: 128 when cols spans a
// multiple of 128 bytes, 64 or 32 when it spans exactly that many bytes, else 0 (no gmma layout).
int gmma_swizzle_bytes(int64_t cols, int elem_bytes);
// Throws LayoutError when the shape has fewer than 2 dimensions, rows that are not a multiple of
// 8, or a last extent that gmma_swizzle_bytes does not accept with this width.
Layout make_gmma_layout(const std::vector<int64_t>& shape, int elem_bytes, int swizzle_bytes);
// Whether `layout` keeps every aligned 16-byte chunk of a row contiguous (row-major, swizzled and
// gmma layouts): 16-byte vector accesses and cp.async may then move whole chunks.
bool chunk_preserving(const Layout& layout);

// Number of shared-memory wavefronts for one warp-wide access of `access_bytes` (4, 8 or 16)
// per thread at the given byte addresses (one per thread, at most 32): the threads are served in
// phases of 128 bytes (32 / 16 / 8 threads for 4 / 8 / 16 bytes), and within a phase each bank
// serves one distinct 4-byte word per wavefront.
int shared_wavefronts(const std::vector<int64_t>& byte_addresses, int access_bytes);

// True when every 16-byte piece of a row (elements [c, c + 16/elem_bytes) with c a multiple of
// 16/elem_bytes, in the last dimension) is contiguous and 16-byte aligned under `layout`, so
// ldmatrix and 16-byte vector accesses can read it.
bool rows_vectorizable(const Layout& layout, int elem_bytes);

}  // namespace tl
