#include "target/c_source.h"

#include <cstdio>

#include "ir/error.h"

namespace tl {

const std::set<std::string>& cxx_reserved_words() {
  static const std::set<std::string> r = {
      // C++20 keywords
      "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "concept", "const", "consteval", "constexpr", "constinit", "const_cast", "continue",
      "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double", "dynamic_cast", "else",
      "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline", "int",
      "long", "mutable", "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected", "public",
      "register", "reinterpret_cast", "requires", "return", "short", "signed", "sizeof", "static", "static_assert",
      "static_cast", "struct", "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef",
      "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while",
      // identifiers with special meaning, alternative operator spellings
      "final", "override", "import", "module", "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or",
      "or_eq", "xor", "xor_eq",
      // macros and names of the C / C++ standard library headers
      "NULL", "EOF", "EXIT_SUCCESS", "EXIT_FAILURE", "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "FLT_MAX",
      "FLT_MIN", "DBL_MAX", "DBL_MIN", "INT_MAX", "INT_MIN", "UINT_MAX", "LLONG_MAX", "LLONG_MIN", "CHAR_BIT",
      "stdin", "stdout", "stderr", "errno", "assert", "offsetof", "va_list", "va_start", "va_end", "va_arg",
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t",
      "uintptr_t", "size_t", "ptrdiff_t", "std", "main", "printf", "fprintf", "snprintf", "sprintf", "puts",
      "malloc", "calloc", "realloc", "free", "memcpy", "memset", "memmove", "abort", "exit", "abs", "fabs", "min",
      "max", "fmin", "fmax", "exp", "exp2", "expf", "log", "log2", "logf", "sqrt", "sqrtf", "rsqrt", "pow", "powf",
      "sin", "cos", "tan", "sinf", "cosf", "tanh", "tanhf", "floor", "ceil", "round", "trunc", "fmod", "isnan",
      "isinf", "isfinite", "signbit", "copysign",
  };
  return r;
}

std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '?': out += "\\?"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string c_comment_text(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool plain = c >= 0x20 && c < 0x7f && c != '\\' && !(c == '?' && i > 0 && s[i - 1] == '?');
    if (plain) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

void check_single_line(const std::string& line) {
  if (line.find_first_of("\n\r") != std::string::npos)
    throw_error<Error>("internal error: a line of generated code contains a line break (user text must reach "
                       "emitted code only through c_string_literal or c_comment_text): ",
                       c_string_literal(line.substr(0, 200)));
}

}  // namespace tl
