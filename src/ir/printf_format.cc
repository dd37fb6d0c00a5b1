#include "ir/printf_format.h"

#include <cstdio>
#include <cstring>

#include "ir/error.h"
#include "ir/printer.h"

namespace tl {

namespace {

constexpr int kMaxWidth = 1024;

// One conversion of a format: text[begin, end) is `%...conv`; `spec` is the flags, width and
// precision (without length modifier) as written.
struct Conversion {
  size_t begin = 0, end = 0;
  std::string spec;
  char conv = 0;
};

// Text quoted and escaped for a message (a format may hold newlines and other control characters).
std::string quoted(const std::string& text) { return print_attr(Attr(text)); }

std::string shown(const std::string& fmt, const Conversion& c) { return quoted(fmt.substr(c.begin, c.end - c.begin)); }

// Parses the conversion starting at fmt[i] == '%' (not "%%"). Throws ValueError for malformed ones.
Conversion parse_conversion(const std::string& fmt, size_t i) {
  Conversion c;
  c.begin = i;
  size_t j = i + 1;
  auto fail = [&](const std::string& why) {
    std::string seen = fmt.substr(i, std::min<size_t>(j + 1, fmt.size()) - i);
    throw_error<ValueError>("T.printf: conversion ", quoted(seen), " in the format ", quoted(fmt), ": ", why);
  };
  while (j < fmt.size() && std::strchr("-+ #0", fmt[j])) ++j;
  auto digits = [&]() {
    size_t start = j;
    while (j < fmt.size() && fmt[j] >= '0' && fmt[j] <= '9') ++j;
    if (j - start > 4 || (j > start && std::stoi(fmt.substr(start, j - start)) > kMaxWidth))
      fail("widths and precisions are limited to " + std::to_string(kMaxWidth));
  };
  digits();
  if (j < fmt.size() && fmt[j] == '$') fail("positional arguments (%1$d) are not supported");
  if (j < fmt.size() && fmt[j] == '*') fail("'*' widths are not supported; write the width as a number");
  if (j < fmt.size() && fmt[j] == '.') {
    ++j;
    if (j < fmt.size() && fmt[j] == '*') fail("'*' precisions are not supported; write the precision as a number");
    digits();
  }
  c.spec = fmt.substr(i + 1, j - i - 1);
  while (j < fmt.size() && std::strchr("hljztLq", fmt[j])) ++j;
  if (j >= fmt.size()) {
    j = fmt.size() - 1;
    fail("the format ends inside a conversion; write '%%' for a percent sign");
  }
  c.conv = fmt[j];
  c.end = j + 1;
  if (c.conv == 'n') fail("%n is not allowed (it writes to memory)");
  if (c.conv == 's')
    fail("%s is not supported: T.printf arguments are numbers; write text into the format itself");
  if (!std::strchr("diouxXceEfFgGaAp", c.conv) || c.conv == 0)
    fail("unknown conversion; use one of d i u o x X c e f g a p (or %% for a percent sign)");
  return c;
}

std::vector<Conversion> parse_format(const std::string& fmt) {
  if (fmt.find('\0') != std::string::npos)
    throw_error<ValueError>("T.printf: the format contains a NUL character");
  std::vector<Conversion> out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') continue;
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      ++i;
      continue;
    }
    if (i + 1 >= fmt.size())
      throw_error<ValueError>("T.printf: the format ", quoted(fmt), " ends with a lone '%'; write '%%' for a percent sign");
    Conversion c = parse_conversion(fmt, i);
    out.push_back(c);
    i = c.end - 1;
  }
  return out;
}

bool is_integer_conv(char c) { return std::strchr("diouxX", c) != nullptr; }
bool is_float_conv(char c) { return std::strchr("eEfFgGaA", c) != nullptr; }

}  // namespace

std::string escape_printf_percent(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\0') {
      out += "\\0";  // a format ends at NUL: the two characters `\0` stand for it
      continue;
    }
    if (c == '%') out += '%';
    out += c;
  }
  return out;
}

PrintfFormat check_printf_format(const std::string& fmt, const std::vector<DataType>& types) {
  std::vector<Conversion> convs = parse_format(fmt);
  if (convs.size() != types.size())
    throw_error<TypeError>("T.printf: the format ", quoted(fmt), " has ", convs.size(), " conversion(s) but ",
                           types.size(), " argument(s) were given");
  PrintfFormat out;
  size_t pos = 0;
  for (size_t k = 0; k < convs.size(); ++k) {
    const Conversion& c = convs[k];
    DataType t = types[k];
    std::string what = "argument " + std::to_string(k + 1) + " (" + t.str() + ") for conversion " + shown(fmt, c);
    std::string length;
    if (is_integer_conv(c.conv) || c.conv == 'c') {
      if (!t.is_integer() && !t.is_bool())
        throw_error<TypeError>("T.printf: ", what, " must be an integer or bool",
                               t.is_float() ? "; use %f/%g for floating-point values or cast with T.cast" : "");
      if (c.conv == 'c') {
        out.args.push_back(PrintfArg::kChar);
      } else {
        out.args.push_back(t.is_uint() ? PrintfArg::kUnsigned : PrintfArg::kSigned);
        length = "ll";
      }
    } else if (is_float_conv(c.conv)) {
      if (!t.is_float())
        throw_error<TypeError>("T.printf: ", what, " must be floating-point; use %d for integers or cast with T.cast");
      out.args.push_back(PrintfArg::kFloat);
    } else {  // 'p'
      if (!t.is_handle()) throw_error<TypeError>("T.printf: ", what, " must be a pointer (handle)");
      out.args.push_back(PrintfArg::kPointer);
    }
    out.format += fmt.substr(pos, c.begin - pos) + "%" + c.spec + length + c.conv;
    pos = c.end;
  }
  out.format += fmt.substr(pos);
  return out;
}

std::string render_printf(const std::string& fmt, const std::vector<PrintfValue>& values) {
  std::string out;
  size_t k = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    if (i + 1 < fmt.size() && fmt[i + 1] == '%') {
      out += '%';
      ++i;
      continue;
    }
    Conversion c;
    try {
      c = parse_conversion(fmt, i);
    } catch (const Error&) {
      out += "<?>";
      break;
    }
    i = c.end - 1;
    if (k >= values.size() || c.conv == 'p') {
      out += "<?>";
      ++k;
      continue;
    }
    const PrintfValue& v = values[k++];
    if (v.is_float != is_float_conv(c.conv)) {  // check_printf_format rules this out
      out += "<?>";
      continue;
    }
    // Only conversions parse_conversion accepted reach the C library, with their own argument type.
    char buf[2 * kMaxWidth + 64];
    std::string spec = "%" + c.spec;
    if (is_float_conv(c.conv)) std::snprintf(buf, sizeof buf, (spec + c.conv).c_str(), v.f);
    else if (c.conv == 'c') std::snprintf(buf, sizeof buf, (spec + 'c').c_str(), static_cast<int>(v.i));
    else if (c.conv == 'd' || c.conv == 'i') std::snprintf(buf, sizeof buf, (spec + "ll" + c.conv).c_str(), v.i);
    else std::snprintf(buf, sizeof buf, (spec + "ll" + c.conv).c_str(), static_cast<unsigned long long>(v.i));
    out += buf;
  }
  return out;
}

}  // namespace tl
