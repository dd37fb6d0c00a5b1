// The one header generated CUDA code includes.
#pragma once

#include "tl/cuda/common.h"
#include "tl/cuda/types.h"
#include "tl/cuda/math.h"
#include "tl/cuda/atomic.h"
#include "tl/cuda/copy.h"
#include "tl/cuda/ldmatrix.h"
#include "tl/cuda/mma.h"
#include "tl/cuda/reduce.h"
#include "tl/cuda/debug.h"
#include "tl/cuda/gemm.h"
#include "tl/cuda/wgmma.h"
#include "tl/cuda/tma.h"
#include "tl/cuda/rasterize.h"
