// Spellings of values in the C++ source that the cpu and cuda code generators emit.
#pragma once

#include <set>
#include <string>

namespace tl {

// A C/C++ string literal holding `s`: quotes, backslashes, \n \t \r as themselves, other control
// and non-ASCII bytes as octal escapes, and '?' escaped so that no trigraph can form.
std::string c_string_literal(const std::string& s);

// `s` made safe to follow `//` on one line of emitted C++: printable ASCII stays, every other byte
// (newlines, carriage returns, NUL, non-ASCII) and the backslash become `\xNN`, and the second `?`
// of `??` becomes `\x3f`. So no user text (a kernel name, a file path) can end the comment, splice
// the next line into it (a trailing backslash, the trigraph `??/`) or start a preprocessor line.
std::string c_comment_text(const std::string& s);

// Names no identifier of the emitted C++ / CUDA C++ may take: the C++20 keywords, the alternative
// operator spellings (and, xor_eq, ...), the predefined NULL / nullptr, and the macros and functions
// of the C and C++ standard headers the generated code includes (errno, assert, printf, sqrt, ...).
// The single list both code generators use (each adds the names of its own runtime).
const std::set<std::string>& cxx_reserved_words();

// Throws tl::Error (an internal error) when `line` — one line of emitted code, without its
// terminator — contains a line break: the code generators build every line through this check.
void check_single_line(const std::string& line);

}  // namespace tl
