// Spellings of values in the C++ source that the cpu and cuda code generators emit.
#pragma once

#include <string>

namespace tl {

// A C/C++ string literal holding `s`: quotes, backslashes, \n \t \r as themselves, other control
// and non-ASCII bytes as octal escapes, and '?' escaped so that no trigraph can form.
std::string c_string_literal(const std::string& s);

}  // namespace tl
