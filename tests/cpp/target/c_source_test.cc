#include "target/c_source.h"

#include <gtest/gtest.h>

namespace tl {
namespace {

TEST(CStringLiteral, EscapesWhatCannotStandAsItself) {
  EXPECT_EQ(c_string_literal("plain %d text"), "\"plain %d text\"");
  EXPECT_EQ(c_string_literal("a\"b\\c\n\t\r"), "\"a\\\"b\\\\c\\n\\t\\r\"");
  EXPECT_EQ(c_string_literal("??="), "\"\\?\\?=\"");  // no trigraph
  EXPECT_EQ(c_string_literal(std::string("\x01\x7f\xe2", 3)), "\"\\001\\177\\342\"");
}

}  // namespace
}  // namespace tl
