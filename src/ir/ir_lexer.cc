#include "ir/ir_lexer.h"

#include <cctype>
#include <cstdio>
#include <limits>

#include "ir/buffer.h"
#include "ir/error.h"

namespace tl::ir_text {

namespace {

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& file) : src_(text), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space_and_comments();
      Token t;
      t.line = line_;
      t.col = col_;
      if (pos_ >= src_.size()) {
        out.push_back(t);
        return out;
      }
      char c = src_[pos_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        t.kind = Tok::kIdent;
        while (pos_ < src_.size() && (ident_char(src_[pos_]) || (src_[pos_] == '.' && pos_ + 1 < src_.size() &&
                                                                 ident_char(src_[pos_ + 1]))))
          t.text += advance();
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        t.kind = Tok::kNumber;
        lex_number(&t.text);
      } else if (c == '"') {
        t.kind = Tok::kString;
        lex_string(t, &t.text);
      } else {
        t.kind = Tok::kPunct;
        static const char* two[] = {"==", "!=", "<=", ">=", "<<", ">>", "&&", "||", ":+"};
        for (const char* p : two)
          if (src_.compare(pos_, 2, p) == 0) t.text = p;
        if (t.text.empty()) {
          if (std::string("()[]{},:=<>+-*/%&|^~!@").find(c) == std::string::npos) {
            char shown[8];  // a byte that is not printable ASCII shows as \xNN
            if (c > 0x20 && c < 0x7f) std::snprintf(shown, sizeof shown, "%c", c);
            else std::snprintf(shown, sizeof shown, "\\x%02x", static_cast<unsigned char>(c));
            fail(t, std::string("unexpected character '") + shown + "'");
          }
          t.text = std::string(1, c);
        }
        for (size_t i = 0; i < t.text.size(); ++i) advance();
      }
      out.push_back(std::move(t));
    }
  }

  [[noreturn]] void fail(const Token& at, const std::string& msg) {
    throw_error<SyntaxError>(file_, ":", at.line, ":", at.col, ": ", msg);
  }

 private:
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  bool digit_at(size_t p) const { return p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p])); }

  char advance() {
    char c = src_[pos_++];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }

  void skip_space_and_comments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else if (c == '#' || (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/')) {
        while (pos_ < src_.size() && src_[pos_] != '\n') advance();
      } else {
        return;
      }
    }
  }

  // digits [. digits] [e[+-]digits] [suffix]; the suffix (i64, u8, f16, bf16, f8e4m3, ...) is
  // kept in the spelling and decoded by the parser.
  void lex_number(std::string* out) {
    while (digit_at(pos_)) *out += advance();
    if (pos_ < src_.size() && src_[pos_] == '.' && digit_at(pos_ + 1)) {
      *out += advance();
      while (digit_at(pos_)) *out += advance();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (digit_at(p)) {
        while (pos_ < p) *out += advance();
        while (digit_at(pos_)) *out += advance();
      }
    }
    while (pos_ < src_.size() && ident_char(src_[pos_])) *out += advance();
  }

  void lex_string(const Token& at, std::string* out) {
    advance();  // opening quote
    for (;;) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') fail(at, "unterminated string literal");
      char c = advance();
      if (c == '"') return;
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= src_.size()) fail(at, "unterminated string literal");
      char e = advance();
      switch (e) {
        case 'n': *out += '\n'; break;
        case 't': *out += '\t'; break;
        case 'r': *out += '\r'; break;
        case '0': *out += '\0'; break;
        case '"': *out += '"'; break;
        case '\\': *out += '\\'; break;
        case 'x': {
          auto hex = [&](char h) { return std::isxdigit(static_cast<unsigned char>(h)) != 0; };
          if (pos_ + 1 >= src_.size() || !hex(src_[pos_]) || !hex(src_[pos_ + 1]))
            fail(at, "\\x in a string needs two hex digits");
          std::string h{advance(), advance()};
          *out += static_cast<char>(std::stoi(h, nullptr, 16));
          break;
        }
        default: fail(at, std::string("unknown escape '\\") + e + "' in string literal");
      }
    }
  }

  const std::string& src_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

std::vector<Token> tokenize(const std::string& text, const std::string& file) {
  return Lexer(text, file).run();
}


bool float_suffix_type(const std::string& s, DataType* t) {
  static const std::pair<const char*, DataType> table[] = {
      {"f16", DataType::Float(16)},  {"f32", DataType::Float32()},     {"f64", DataType::Float(64)},
      {"bf16", DataType::BFloat16()}, {"f8e4m3", DataType::F8E4M3()}, {"f8e5m2", DataType::F8E5M2()},
      {"f8e8m0", DataType::F8E8M0()}, {"f4e2m1", DataType::F4E2M1()}};
  for (auto& [n, dt] : table)
    if (s == n) {
      *t = dt;
      return true;
    }
  return false;
}

bool int_suffix_type(const std::string& s, DataType* t) {
  if (s.empty()) {
    *t = DataType::Int32();
    return true;
  }
  if (s.size() < 2 || (s[0] != 'i' && s[0] != 'u')) return false;
  std::string bits = s.substr(1);
  if (bits != "8" && bits != "16" && bits != "32" && bits != "64") return false;
  *t = s[0] == 'i' ? DataType::Int(std::stoi(bits)) : DataType::UInt(std::stoi(bits));
  return true;
}

bool special_float(const std::string& word, double* value, DataType* t) {
  std::string base = word.substr(0, 3);
  if (base != "inf" && base != "nan") return false;
  if (word.size() == 3) *t = DataType::Float32();
  else if (word[3] != '_' || !float_suffix_type(word.substr(4), t)) return false;
  *value = base == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  return true;
}

size_t numeric_prefix(const std::string& s) {
  auto digit = [&](size_t p) { return p < s.size() && std::isdigit(static_cast<unsigned char>(s[p])); };
  size_t i = 0;
  while (digit(i)) ++i;
  if (i < s.size() && s[i] == '.' && digit(i + 1)) {
    ++i;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t p = i + 1;
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
    if (digit(p)) {
      i = p;
      while (digit(i)) ++i;
    }
  }
  return i;
}

bool is_scope_name(const std::string& s) {
  try {
    parse_scope(s);
    return true;
  } catch (const ValueError&) {
    return false;
  }
}

}  // namespace tl::ir_text
