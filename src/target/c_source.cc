#include "target/c_source.h"

#include <cstdio>

#include "ir/error.h"

namespace tl {

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
