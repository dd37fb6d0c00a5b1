#include "ir/printf_format.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tl {
namespace {

TEST(PrintfFormat, NormalizesLengthModifiersToTheArgumentTypes) {
  PrintfFormat f = check_printf_format("i=%d u=%lu x=%#08hx c=%c f=%6.2Lf p=%p %%d\n",
                                       {DataType::Int(32), DataType::UInt(32), DataType::Int(16), DataType::Int(8),
                                        DataType::Float(16), DataType::Handle()});
  EXPECT_EQ(f.format, "i=%lld u=%llu x=%#08llx c=%c f=%6.2f p=%p %%d\n");
  std::vector<PrintfArg> want = {PrintfArg::kSigned, PrintfArg::kUnsigned, PrintfArg::kSigned,
                                 PrintfArg::kChar,   PrintfArg::kFloat,    PrintfArg::kPointer};
  EXPECT_EQ(f.args, want);
  EXPECT_EQ(check_printf_format("%d", {DataType::Bool()}).args[0], PrintfArg::kSigned);
}

TEST(PrintfFormat, RefusesWhatWouldReadOrWriteMemory) {
  EXPECT_THROW(check_printf_format("%s", {DataType::Int(32)}), ValueError);
  EXPECT_THROW(check_printf_format("%n", {DataType::Int(32)}), ValueError);
  EXPECT_THROW(check_printf_format("%*d", {DataType::Int(32), DataType::Int(32)}), ValueError);
  EXPECT_THROW(check_printf_format("%2$d", {DataType::Int(32)}), ValueError);
  EXPECT_THROW(check_printf_format("%d", {}), TypeError);
  EXPECT_THROW(check_printf_format("", {DataType::Int(32)}), TypeError);
  EXPECT_THROW(check_printf_format("%d", {DataType::Float(32)}), TypeError);
  EXPECT_THROW(check_printf_format("%g", {DataType::Int(64)}), TypeError);
  EXPECT_THROW(check_printf_format("%5000d", {DataType::Int(32)}), ValueError);
  EXPECT_THROW(check_printf_format("%", {}), ValueError);
  EXPECT_THROW(check_printf_format(std::string("%d\0%d", 5), {DataType::Int(32), DataType::Int(32)}), ValueError);
}

TEST(PrintfFormat, RendersOnlyCheckedConversions) {
  PrintfValue i, f;
  i.i = -42;
  f.is_float = true;
  f.f = 2.5;
  EXPECT_EQ(render_printf("a=%lld b=%.2f %% c=%c\n", {i, f, [] { PrintfValue c; c.i = 'Z'; return c; }()}),
            "a=-42 b=2.50 % c=Z\n");
  EXPECT_EQ(render_printf("%s %n", {i, i}), "<?>");          // never handed to the C library
  EXPECT_EQ(render_printf("%lld %lld", {i}), "-42 <?>");     // a missing value
  EXPECT_EQ(render_printf("%f", {i}), "<?>");                // a value of the wrong kind
}

TEST(PrintfFormat, EscapedMessagesPrintThemselves) {
  EXPECT_EQ(escape_printf_percent("100% %s"), "100%% %%s");
  EXPECT_EQ(render_printf(escape_printf_percent("100% %s"), {}), "100% %s");
  EXPECT_EQ(check_printf_format(escape_printf_percent("%n%s%d"), {}).format, "%%n%%s%%d");
}

}  // namespace
}  // namespace tl
