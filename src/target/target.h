// Moved to ir/target.h (the target description is used by every layer; issue 14). This forwarder
// keeps branches written before the move compiling; new code includes "ir/target.h".
#pragma once

#include "ir/target.h"
