#pragma once
// Znode path rules: ZooKeeper's PathUtils.validatePath, and the parent/name split every write uses.

#include <string_view>

namespace zkraft::tree {

// True if `path` is a valid absolute znode path by ZooKeeper's rules: starts with '/', does not end
// with '/' (except "/" itself), no empty, "." or ".." segments, no NUL, no control characters
// U+0001-001F / U+007F-009F, nothing in U+D800-F8FF or U+FFF0-FFFF. Paths are UTF-8; malformed
// UTF-8 and characters outside the BMP are rejected, as Java sees them as U+FFFD or surrogates.
bool validate_path(std::string_view path);

// The part before the last '/': "/a/b" -> "/a", "/a" -> "" (ZooKeeper's name for the root).
// Precondition: path contains a '/'.
std::string_view parent_of(std::string_view path);

// The part after the last '/': "/a/b" -> "b".
std::string_view name_of(std::string_view path);

// /, /zookeeper, /zookeeper/quota and /zookeeper/config: never deleted by clients.
bool is_special_path(std::string_view path);

}  // namespace zkraft::tree
