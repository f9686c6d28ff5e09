#pragma once
// ask_four_letter_word: sends a four-letter word to a zkraft (or ZooKeeper) client port and
// returns the whole answer, read until the server closes; nullopt (with *error) when the server
// cannot be reached or does not answer within timeout_ms.

#include <optional>
#include <string>

#include "tools/load_bench/zk_connection.h"

namespace zkraft::tools {

std::optional<std::string> ask_four_letter_word(const HostPort& server, const std::string& word,
                                                int timeout_ms, std::string* error);

}  // namespace zkraft::tools
