// resolve_buffer_views: T.reshape / T.view (same dtype) as accesses of one buffer.
//
// The frontend gives every view its own buffer (allocated where T.reshape ran) and the list of
// (view, base) pairs. The IR has no aliasing, so each group {base, its views} is folded into one
// canonical buffer:
//   - the canonical buffer is the base when it is a kernel parameter or a tile op uses it;
//     otherwise the (first) view a tile op uses — TileLang's im2col puzzle writes a 3-D shared
//     tile element by element and hands its 2-D reshape to T.gemm, so the tile is allocated 2-D;
//   - element accesses of the other members are rewritten through the row-major linear index
//     (A_view[i, j] -> A[(i * n + j) // m, (i * n + j) % m]), which the simplifier folds;
//   - tile-op regions of the other members map to the canonical buffer when they are the whole
//     buffer with the same squeezed shape (the op sees the same tile) or a single element; a copy
//     or fill whose view operand does not map becomes its element loop (T.Parallel);
//   - the other members' allocations disappear (a view that becomes canonical takes the base's
//     place).
// Anything else (a sub-region of a view in a tile op, views of different sizes) raises
// NotImplemented naming T.reshape and the buffers.
#pragma once

#include <utility>
#include <vector>

#include "ir/stmt.h"

namespace tl {

// `views`: (view, base) pairs; a base may itself be a view.
PrimFunc resolve_buffer_views(const PrimFunc& f, const std::vector<std::pair<Buffer, Buffer>>& views);

}  // namespace tl
