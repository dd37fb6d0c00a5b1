// C++ source for a function lowered by lower_cpu, following include/tl/cpu/abi.h.
#pragma once

#include <string>

#include "ir/stmt.h"

namespace tl {

std::string codegen_cpu(const PrimFunc& lowered);

}  // namespace tl
