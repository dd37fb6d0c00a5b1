// Thread-block rasterization (T.use_swizzle(panel, order)): remaps the 2-D block index so that
// consecutive blocks work on tiles that share operands in L2. With order "row", blocks walk groups
// of `panel` tile rows (the y index) column by column; "col" swaps the roles of x and y. The map is
// a bijection of the grid for any grid size and panel.
#pragma once

#include "tl/cuda/common.h"

namespace tl {

// In thread-block clusters of `cluster` CTAs along x, the map applies to the grid of clusters and
// the CTAs of a cluster keep consecutive x indices (they share the y index, so the tiles whose
// operands they multicast).
template <bool kRowOrder>
TL_DEVICE void rasterize2d(int panel, int* bx, int* by, int cluster = 1) {
  const int gx = static_cast<int>(gridDim.x) / cluster, gy = static_cast<int>(gridDim.y);
  const int pid = static_cast<int>(blockIdx.y) * gx + static_cast<int>(blockIdx.x) / cluster;
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
  if (cluster > 1) *bx = *bx * cluster + static_cast<int>(blockIdx.x) % cluster;
}

}  // namespace tl
