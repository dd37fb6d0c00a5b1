// The version of tilelang these device headers belong to. The runtime compiles kernels only against
// headers whose version is its own (src/runtime/paths.cc): a TILELANG_INCLUDE_DIR pointing at another
// version's headers (a stale install) is a ValueError naming the variable, not a compile error
// blamed on the code generator. Equal to CMakeLists.txt's project VERSION (checked at configure time).
#pragma once

#define TL_HEADERS_VERSION "0.1.0"
