#include "tree/path.h"

#include <gtest/gtest.h>

#include <string>

namespace zkraft::tree {
namespace {

struct PathCase {
  std::string path;
  bool valid;
};

TEST(PathTest, ValidationTable) {
  const PathCase cases[] = {
      {"/", true},
      {"/a", true},
      {"/a/b/c", true},
      {"/zookeeper", true},
      {"/a.b", true},
      {"/...", true},
      {"/a/.b", true},
      {"/a/b..", true},
      {"/with space", true},
      {"/caf\xc3\xa9", true},           // U+00E9
      {"/\xe4\xb8\xad", true},          // U+4E2D
      {"", false},
      {"a", false},
      {"a/b", false},
      {"/a/", false},
      {"//", false},
      {"/a//b", false},
      {"/.", false},
      {"/..", false},
      {"/a/./b", false},
      {"/a/../b", false},
      {"/a/.", false},
      {"/a/..", false},
      {std::string("/a\0b", 4), false},
      {"/a\x01", false},
      {"/a\x1f", false},
      {"/a\x7f", false},
      {"/a\xc2\x80", false},            // U+0080
      {"/a\xc2\x9f", false},            // U+009F
      {"/a\xc2\xa0", true},             // U+00A0
      {"/a\xee\x80\x80", false},        // U+E000 (private use, inside D800-F8FF)
      {"/a\xef\xa3\xbf", false},        // U+F8FF
      {"/a\xef\xa4\x80", true},         // U+F900
      {"/a\xef\xbf\xb0", false},        // U+FFF0
      {"/a\xef\xbf\xbd", false},        // U+FFFD
      {"/a\xf0\x9f\x98\x80", false},    // U+1F600: a surrogate pair in Java
      {"/a\xff", false},                // malformed UTF-8
      {"/a\xc0\xaf", false},            // overlong '/'
      {"/a\xed\xa0\x80", false},        // encoded surrogate
  };
  for (const auto& c : cases) {
    EXPECT_EQ(validate_path(c.path), c.valid) << "path: " << c.path;
  }
}

TEST(PathTest, ParentAndName) {
  EXPECT_EQ(parent_of("/a/b"), "/a");
  EXPECT_EQ(parent_of("/a"), "");
  EXPECT_EQ(name_of("/a/b"), "b");
  EXPECT_EQ(name_of("/a"), "a");
}

TEST(PathTest, SpecialPaths) {
  EXPECT_TRUE(is_special_path("/"));
  EXPECT_TRUE(is_special_path("/zookeeper"));
  EXPECT_TRUE(is_special_path("/zookeeper/quota"));
  EXPECT_TRUE(is_special_path("/zookeeper/config"));
  EXPECT_FALSE(is_special_path("/zookeeper/other"));
  EXPECT_FALSE(is_special_path("/a"));
}

}  // namespace
}  // namespace zkraft::tree
