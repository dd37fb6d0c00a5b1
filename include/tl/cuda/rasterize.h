// Thread-block rasterization (T.use_swizzle(panel, order)): remaps the 2-D block index so that
// consecutive blocks work on tiles that share operands in L2. With order "row", blocks walk groups
// of `panel` tile rows (the y index) column by column; "col" swaps the roles of x and y. The map is
// a bijection of the grid for any grid size and panel.
#pragma once

#include "tl/cuda/common.h"

namespace tl {

template <bool kRowOrder>
TL_DEVICE void rasterize2d(int panel, int* bx, int* by) {
  const int gx = static_cast<int>(gridDim.x), gy = static_cast<int>(gridDim.y);
  const int pid = static_cast<int>(blockIdx.y) * gx + static_cast<int>(blockIdx.x);
  if (panel < 1) panel = 1;
  if (kRowOrder) {
    const int group = panel * gx;
    const int first = (pid / group) * panel;
    const int rows = gy - first < panel ? gy - first : panel;
    *by = first + (pid % group) % rows;
    *bx = (pid % group) / rows;
  } else {
    const int group = panel * gy;
    const int first = (pid / group) * panel;
    const int cols = gx - first < panel ? gx - first : panel;
    *bx = first + (pid % group) % cols;
    *by = (pid % group) / cols;
  }
}

}  // namespace tl
