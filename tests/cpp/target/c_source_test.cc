#include "target/c_source.h"

#include <gtest/gtest.h>

#include "ir/error.h"

namespace tl {
namespace {

TEST(CStringLiteral, EscapesWhatCannotStandAsItself) {
  EXPECT_EQ(c_string_literal("plain %d text"), "\"plain %d text\"");
  EXPECT_EQ(c_string_literal("a\"b\\c\n\t\r"), "\"a\\\"b\\\\c\\n\\t\\r\"");
  EXPECT_EQ(c_string_literal("??="), "\"\\?\\?=\"");  // no trigraph
  EXPECT_EQ(c_string_literal(std::string("\x01\x7f\xe2", 3)), "\"\\001\\177\\342\"");
}

TEST(CCommentText, NothingEndsOrSplicesTheComment) {
  EXPECT_EQ(c_comment_text("kernel main at k.py:3:5"), "kernel main at k.py:3:5");
  EXPECT_EQ(c_comment_text("a\n#error x"), "a\\x0a#error x");
  EXPECT_EQ(c_comment_text("a\r"), "a\\x0d");
  EXPECT_EQ(c_comment_text("ends with \\"), "ends with \\x5c");  // no line splice
  EXPECT_EQ(c_comment_text("t?\?/"), "t?\\x3f/");                  // no trigraph (question marks, slash)
  EXPECT_EQ(c_comment_text(std::string("n\0\xe2\x80\xa8", 5)), "n\\x00\\xe2\\x80\\xa8");
}

TEST(CheckSingleLine, RejectsLineBreaks) {
  EXPECT_NO_THROW(check_single_line("int x = 1;  // ok"));
  EXPECT_THROW(check_single_line("// a\n#error"), Error);
  EXPECT_THROW(check_single_line("// a\r#error"), Error);
}

}  // namespace
}  // namespace tl
