// Tokens of the textual IR and the spellings of its literals (internal to the parser).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tl::ir_text {

enum class Tok { kEnd, kIdent, kNumber, kString, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // identifier, punctuation, number spelling, or the decoded string
  int line = 1, col = 1;
};

// Splits `text` into tokens; the last one is kEnd. Identifiers may contain inner dots
// ("tl.printf", "local.var"); numbers keep their suffix ("5i64", "1.5bf16"); `//` and `#` start
// comments. Raises SyntaxError "file:line:col: ..." on a malformed token.
std::vector<Token> tokenize(const std::string& text, const std::string& file);

// Literal suffixes: "f16" "f32" "f64" "bf16" "f8e4m3" "f8e5m2" / "" "i8".."i64" "u8".."u64".
bool float_suffix_type(const std::string& s, DataType* t);
bool int_suffix_type(const std::string& s, DataType* t);
// "inf", "nan", "inf_f16", "nan_bf16", ...: the non-finite float literals.
bool special_float(const std::string& word, double* value, DataType* t);
// Length of the numeric part of a number's spelling (the rest is its suffix).
size_t numeric_prefix(const std::string& s);
bool is_scope_name(const std::string& s);

}  // namespace tl::ir_text
