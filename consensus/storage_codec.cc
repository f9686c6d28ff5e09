#include "consensus/storage_codec.h"

#include <cstdint>

#include "consensus/storage_crc32c.h"

namespace zkraft::consensus::storage {

void put_u64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

void put_u32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xFF));
}

uint64_t get_u64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

std::string entry_key(Index index) {
  std::string k(1, kEntryPrefix);
  put_u64(k, index);
  return k;
}

std::optional<Index> parse_entry_key(std::string_view key) {
  if (key.size() != 9 || key[0] != kEntryPrefix) return std::nullopt;
  return get_u64(key.data() + 1);
}

std::string hard_state_key(Index log_end) {
  std::string k = entry_key(log_end);
  k.push_back(kHardStateSuffix);
  return k;
}

std::optional<Index> parse_hard_state_key(std::string_view key) {
  if (key.size() != 10 || key[0] != kEntryPrefix || key[9] != kHardStateSuffix) return std::nullopt;
  return get_u64(key.data() + 1);
}

std::string snapshot_generation_prefix(uint64_t generation) {
  std::string k(1, kSnapshotChunkPrefix);
  put_u64(k, generation);
  return k;
}

std::string snapshot_chunk_key(uint64_t generation, uint64_t chunk) {
  std::string k = snapshot_generation_prefix(generation);
  put_u64(k, chunk);
  return k;
}

std::optional<uint64_t> parse_snapshot_chunk_generation(std::string_view key) {
  if (key.size() != 17 || key[0] != kSnapshotChunkPrefix) return std::nullopt;
  return get_u64(key.data() + 1);
}

std::string snapshot_file_name(uint64_t generation) {
  return std::string(kSnapshotFilePrefix) + std::to_string(generation) + std::string(kSnapshotFileSuffix);
}

std::optional<uint64_t> parse_snapshot_file_name(std::string_view name) {
  if (name.size() <= kSnapshotFilePrefix.size() + kSnapshotFileSuffix.size() ||
      !name.starts_with(kSnapshotFilePrefix) || !name.ends_with(kSnapshotFileSuffix)) {
    return std::nullopt;
  }
  name.remove_prefix(kSnapshotFilePrefix.size());
  name.remove_suffix(kSnapshotFileSuffix.size());
  // Digits only, no leading zero: exactly the names snapshot_file_name writes.
  if (name.size() > 20 || (name.size() > 1 && name[0] == '0')) return std::nullopt;
  uint64_t g = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (g > (UINT64_MAX - d) / 10) return std::nullopt;
    g = g * 10 + d;
  }
  return g;
}

namespace {

uint32_t entry_crc(Index index, std::string_view rest) {
  char idx[8];
  for (int i = 0; i < 8; ++i) idx[i] = static_cast<char>((index >> (56 - 8 * i)) & 0xFF);
  return crc32c_extend(crc32c_extend(0, idx, 8), rest.data(), rest.size());
}

// Appends crc32c(value so far) as the trailing 4 bytes.
void seal(std::string& out) { put_u32(out, crc32c(out)); }

// Checks and strips a trailing CRC; returns the body or nullopt.
std::optional<std::string_view> unseal(std::string_view value) {
  if (value.size() < 4) return std::nullopt;
  std::string_view body = value.substr(0, value.size() - 4);
  if (crc32c(body) != get_u32(value.data() + body.size())) return std::nullopt;
  return body;
}

}  // namespace

std::string encode_entry_value(const Entry& e) {
  std::string v(4, '\0');
  v.reserve(4 + 9 + e.data.size());
  put_u64(v, e.term);
  v.push_back(static_cast<char>(e.type));
  v.append(e.data);
  uint32_t crc = entry_crc(e.index, std::string_view(v).substr(4));
  for (int i = 0; i < 4; ++i) v[i] = static_cast<char>((crc >> (24 - 8 * i)) & 0xFF);
  return v;
}

static bool check_entry(Index index, std::string_view value) {
  if (value.size() < 13) return false;
  if (get_u32(value.data()) != entry_crc(index, value.substr(4))) return false;
  uint8_t type = static_cast<uint8_t>(value[12]);
  return type == static_cast<uint8_t>(EntryType::kNormal) ||
         type == static_cast<uint8_t>(EntryType::kConfChange);
}

bool decode_entry_value(Index index, std::string_view value, Entry* out) {
  if (!check_entry(index, value)) return false;
  out->index = index;
  out->term = get_u64(value.data() + 4);
  out->type = static_cast<EntryType>(static_cast<uint8_t>(value[12]));
  out->data.assign(value.data() + 13, value.size() - 13);
  return true;
}

bool decode_entry_term(Index index, std::string_view value, Term* out) {
  if (!check_entry(index, value)) return false;
  *out = get_u64(value.data() + 4);
  return true;
}

std::string encode_hard_state(const HardState& hs) {
  std::string v;
  put_u64(v, hs.term);
  put_u64(v, hs.vote);
  put_u64(v, hs.commit);
  seal(v);
  return v;
}

bool decode_hard_state(std::string_view value, HardState* out) {
  auto body = unseal(value);
  if (!body || body->size() != 24) return false;
  out->term = get_u64(body->data());
  out->vote = get_u64(body->data() + 8);
  out->commit = get_u64(body->data() + 16);
  return true;
}

std::string encode_first_index(const FirstIndexMarker& m) {
  std::string v;
  put_u64(v, m.first_index);
  put_u64(v, m.prev_term);
  seal(v);
  return v;
}

bool decode_first_index(std::string_view value, FirstIndexMarker* out) {
  auto body = unseal(value);
  if (!body || body->size() != 16) return false;
  out->first_index = get_u64(body->data());
  out->prev_term = get_u64(body->data() + 8);
  return out->first_index >= 1;
}

namespace {

void put_ids(std::string& out, const std::vector<NodeId>& ids) {
  put_u32(out, static_cast<uint32_t>(ids.size()));
  for (NodeId id : ids) put_u64(out, id);
}

bool get_ids(std::string_view& in, std::vector<NodeId>* ids) {
  if (in.size() < 4) return false;
  uint32_t n = get_u32(in.data());
  in.remove_prefix(4);
  if (in.size() / 8 < n) return false;
  ids->clear();
  for (uint32_t i = 0; i < n; ++i) {
    ids->push_back(get_u64(in.data()));
    in.remove_prefix(8);
  }
  return true;
}

}  // namespace

std::string encode_snapshot_record(const SnapshotRecord& r) {
  std::string v;
  put_u64(v, r.meta.index);
  put_u64(v, r.meta.term);
  put_ids(v, r.meta.membership.voters);
  put_ids(v, r.meta.membership.learners);
  put_u64(v, r.generation);
  put_u64(v, r.data_size);
  put_u64(v, r.chunk_count);
  put_u32(v, r.data_crc);
  v.push_back(r.in_file ? 1 : 0);
  put_u64(v, r.full_size);
  seal(v);
  return v;
}

bool decode_snapshot_record(std::string_view value, SnapshotRecord* out) {
  auto body = unseal(value);
  if (!body) return false;
  std::string_view in = *body;
  if (in.size() < 16) return false;
  out->meta.index = get_u64(in.data());
  out->meta.term = get_u64(in.data() + 8);
  in.remove_prefix(16);
  if (!get_ids(in, &out->meta.membership.voters)) return false;
  if (!get_ids(in, &out->meta.membership.learners)) return false;
  if (in.size() != 28 && in.size() != 29 && in.size() != 37) return false;
  out->generation = get_u64(in.data());
  out->data_size = get_u64(in.data() + 8);
  out->chunk_count = get_u64(in.data() + 16);
  out->data_crc = get_u32(in.data() + 24);
  out->in_file = false;
  out->full_size = out->data_size;
  if (in.size() >= 29) {
    if (in[28] != 0 && in[28] != 1) return false;
    out->in_file = in[28] == 1;
  }
  if (in.size() == 37) {
    out->full_size = get_u64(in.data() + 29);
    if (out->full_size > out->data_size) return false;
  }
  return true;
}

}  // namespace zkraft::consensus::storage
