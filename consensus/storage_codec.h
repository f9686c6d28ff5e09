#pragma once
// The on-disk layout of LogStorage inside its LevelDB database: key names and value encodings.
// Internal to consensus/ storage (tests and inspection tools may use it to read or damage a log).
//
// Keys (one prefix byte, then big-endian integers so LevelDB's bytewise order is numeric order):
//   "V"                          format marker, value kFormatV2
//   "F"                          the first-index marker: first index kept + term of the entry before
//   "M"                          the snapshot metadata (points at its data generation)
//   "e" + index(8)               a log entry
//   "e" + index(8) + "h"         the hard state, written when the log ended at `index`; the one
//                                at the highest index is the current one
//   "s" + generation(8) + n(8)   chunk n of the snapshot data written as `generation` (the
//                                layout before snapshot files; still read, no longer written)
// Beside the LevelDB files: "snapshot-<generation>.data", a snapshot's data (snapshot_file_name).
// Every value ends or starts with a CRC-32C, so a flipped or torn value is detected, not trusted.
// An entry's CRC also covers its index, so a value stored under the wrong key is caught too.
//
// Why the hard state sits among the entries and the other records sort before them: every write
// of the log's steady state (entries and the hard state riding with them) then falls in the
// key range just past the previous write's. LevelDB places the table of such a memtable below
// level 0 as it is, and never merges it with its neighbours again. A fixed key written with every
// batch ("h" in v1) made each table's range reach back over all the others, so each one went to
// level 0 and was merged and rewritten: ~110 bytes of compaction output per create under load,
// 19% of the server's CPU (docs/benchmarks.md, "LevelDB's compactions").
//
// v1 (until 2026-12): "v" marker, "h" hard state, "f" first index, "m" snapshot metadata, values
// as above. open() moves a v1 database to v2 in one synced batch.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "consensus/types.h"

namespace zkraft::consensus::storage {

inline constexpr char kEntryPrefix = 'e';
inline constexpr char kSnapshotChunkPrefix = 's';
inline constexpr std::string_view kFormatKey = "V";
inline constexpr std::string_view kFirstIndexKey = "F";
inline constexpr std::string_view kSnapshotMetaKey = "M";
inline constexpr std::string_view kFormatV2 = "zkraft-log-v2";
inline constexpr char kHardStateSuffix = 'h';

// The v1 layout's keys, read only to move a v1 database to v2.
namespace v1 {
inline constexpr std::string_view kFormatKey = "v";
inline constexpr std::string_view kFormat = "zkraft-log-v1";
inline constexpr std::string_view kHardStateKey = "h";
inline constexpr std::string_view kFirstIndexKey = "f";
inline constexpr std::string_view kSnapshotMetaKey = "m";
}  // namespace v1
inline constexpr std::string_view kSnapshotFilePrefix = "snapshot-";
inline constexpr std::string_view kSnapshotFileSuffix = ".data";

void put_u64(std::string& out, uint64_t v);
void put_u32(std::string& out, uint32_t v);
uint64_t get_u64(const char* p);
uint32_t get_u32(const char* p);

std::string entry_key(Index index);
// The index in an entry key, or nullopt if `key` is not a well-formed entry key.
std::optional<Index> parse_entry_key(std::string_view key);

// The key of the hard state written when the log ended at `log_end` (it sorts right after that
// entry's key), and its inverse: log_end, or nullopt if `key` is not a hard-state key.
std::string hard_state_key(Index log_end);
std::optional<Index> parse_hard_state_key(std::string_view key);

std::string snapshot_chunk_key(uint64_t generation, uint64_t chunk);
// Prefix of every chunk of one generation (for range deletes).
std::string snapshot_generation_prefix(uint64_t generation);
// Parses a chunk key into its generation; nullopt if malformed.
std::optional<uint64_t> parse_snapshot_chunk_generation(std::string_view key);

// The name (in the storage directory) of the file holding the data of snapshot `generation`, and
// its inverse: the generation, or nullopt for any other name. LevelDB ignores names it does not
// recognise, so the files can live in its directory.
std::string snapshot_file_name(uint64_t generation);
std::optional<uint64_t> parse_snapshot_file_name(std::string_view name);

// Entry value: crc32c(4, over index|rest) | term(8) | type(1) | data.
std::string encode_entry_value(const Entry& e);
// Fills `out` (including out.index = index) if the value is well formed and its CRC matches.
bool decode_entry_value(Index index, std::string_view value, Entry* out);
// Fast path for term(): the term only, still CRC-checked.
bool decode_entry_term(Index index, std::string_view value, Term* out);

// Hard state value: term(8) | vote(8) | commit(8) | crc32c(4).
std::string encode_hard_state(const HardState& hs);
bool decode_hard_state(std::string_view value, HardState* out);

// First-index marker: first_index(8) | prev_term(8) | crc32c(4). prev_term is the term of entry
// first_index - 1, which compaction deleted but Raft still needs for its consistency check.
struct FirstIndexMarker {
  Index first_index = 1;
  Term prev_term = 0;
};
std::string encode_first_index(const FirstIndexMarker& m);
bool decode_first_index(std::string_view value, FirstIndexMarker* out);

// Snapshot record: the public metadata plus where and how big the data is.
// meta | generation(8) | data_size(8) | chunk_count(8) | data_crc(4) | in_file(1) | crc32c(4);
// a record without the in_file byte (written before snapshot files) has its data in chunks.
struct SnapshotRecord {
  SnapshotMeta meta;
  uint64_t generation = 0;   // names the data: its file, or its chunk keys
  uint64_t data_size = 0;
  uint64_t chunk_count = 0;  // chunks only
  uint32_t data_crc = 0;     // crc32c of the whole data
  bool in_file = false;      // the data is the file snapshot_file_name(generation)
  // Of data_size, the bytes written when the file was made; the rest were appended since
  // (SnapshotFileTarget). Records from before appends existed decode with data_size.
  uint64_t full_size = 0;
};
std::string encode_snapshot_record(const SnapshotRecord& r);
bool decode_snapshot_record(std::string_view value, SnapshotRecord* out);

}  // namespace zkraft::consensus::storage
