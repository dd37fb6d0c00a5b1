// The format string of T.printf (the IR call tl.printf): checked against its arguments when the
// kernel is built, and normalized so that every target passes each argument as one C type.
//
// A format is text with conversions `%[flags][width][.precision][length]conv`:
//   flags `-+ #0`; width and precision decimal (at most 1024); length modifiers (h, hh, l, ll, j, z,
//   t, L, q) are accepted and replaced by the argument's own;
//   d i u o x X c  take an integer or bool argument      e E f F g G a A  take a floating-point one
//   p              takes a handle                          %%               prints a percent sign.
// Rejected, with the conversion named: %s (arguments are numbers: write text into the format),
// %n (it writes to memory), `*` widths, positional `%1$d`, unknown conversions, a lone trailing
// `%`, a NUL character, and a conversion count that differs from the argument count. The user's
// text is therefore never able to read or write memory through printf.
#pragma once

#include <string>
#include <vector>

#include "ir/dtype.h"

namespace tl {

// How an argument is passed to printf after normalization.
enum class PrintfArg {
  kSigned,    // long long        (%lld %lli %llx ...; signed integers and bool)
  kUnsigned,  // unsigned long long (%llu %llx ...; unsigned integers)
  kChar,      // int              (%c)
  kFloat,     // double           (%e %f %g %a)
  kPointer,   // const void*      (%p)
};

struct PrintfFormat {
  std::string format;           // normalized: "ll" on integer conversions, no modifier elsewhere
  std::vector<PrintfArg> args;  // one per argument, in order
};

// Checks `format` against the argument types; throws TypeError (argument/conversion mismatch or
// count) or ValueError (a malformed or forbidden conversion), the message naming the conversion.
PrintfFormat check_printf_format(const std::string& format, const std::vector<DataType>& arg_types);

// A host-side value for render_printf: integer arguments in `i`, floating-point ones in `f`.
struct PrintfValue {
  bool is_float = false;
  long long i = 0;
  double f = 0;
};

// Formats a normalized format (check_printf_format's output) with host values (the Ascend
// simulator's T.printf). A conversion without a value, or one outside the checked set, prints as
// `<?>`: this never passes user text to the C library as a format.
std::string render_printf(const std::string& format, const std::vector<PrintfValue>& values);

// `text` with every '%' doubled (and NUL written as the two characters `\0`): a message used as a
// printf format prints as itself and reads no argument.
std::string escape_printf_percent(const std::string& text);

}  // namespace tl
