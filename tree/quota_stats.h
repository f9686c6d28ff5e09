#pragma once
// ZooKeeper's quota bookkeeping text (StatsTrack): the data of /zookeeper/quota/<path>/zookeeper_stats
// ("count=5,bytes=9") and .../zookeeper_limits ("count=10,bytes=-1=;byteHardLimit=-1;countHardLimit=-1").
// The server keeps the stats node current as nodes under a quota'd path change (DataTree.updateQuotaStat).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace zkraft::tree {

inline constexpr std::string_view kQuotaRoot = "/zookeeper/quota";
inline constexpr std::string_view kQuotaLimitNode = "zookeeper_limits";
inline constexpr std::string_view kQuotaStatNode = "zookeeper_stats";

// Parsed key=value pairs; nullopt where Java's StatsTrack constructor would throw.
std::optional<std::map<std::string, int64_t>> parse_quota_stats(std::string_view text);
// StatsTrack.toString: "count=C,bytes=B", then (if other keys) "=" and ";key=value" sorted by key.
std::string format_quota_stats(const std::map<std::string, int64_t>& stats);

}  // namespace zkraft::tree
