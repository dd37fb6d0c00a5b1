// Moved to ir/tile_op.h (the tile-op registry is the IR's extension point, used below op by the
// verifier and the access analysis; issue 14). This forwarder keeps branches written before the
// move compiling; new code includes "ir/tile_op.h".
#pragma once

#include "ir/tile_op.h"
