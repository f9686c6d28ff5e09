#pragma once
// Every client request record (the body after a RequestHeader), one plain struct per record,
// with encode/decode overloads in the style of jute/data.h. Field order is wire order.
//
// Strings: a -1 length decodes as "" (kazoo sends -1 for empty strings); they encode with their
// real length. Buffers keep null (-1) distinct from empty.
// decode() returns false on malformed or truncated input; the output may then be partly written
// (as in jute/data.h), so callers decode into a fresh value, as decode_request does.

#include <cstdint>
#include <string>
#include <vector>

#include "jute/archive.h"
#include "jute/data.h"

namespace zkraft::jute {

// create (1), create2 (15), createContainer (19, flags 4).
struct CreateRequest {
  std::string path;
  Buffer data;
  std::vector<ACL> acl;
  int32_t flags = 0;  // jute/constants.h create_mode
  bool operator==(const CreateRequest&) const = default;
};

// createTTL (21): CreateRequest plus the TTL in ms.
struct CreateTTLRequest {
  std::string path;
  Buffer data;
  std::vector<ACL> acl;
  int32_t flags = 0;
  int64_t ttl = 0;
  bool operator==(const CreateTTLRequest&) const = default;
};

// delete (2). version -1 matches any version.
struct DeleteRequest {
  std::string path;
  int32_t version = -1;
  bool operator==(const DeleteRequest&) const = default;
};

// deleteContainer (20): server-internal in ZooKeeper (container/TTL reaper); only a path.
struct DeleteContainerRequest {
  std::string path;
  bool operator==(const DeleteContainerRequest&) const = default;
};

struct ExistsRequest {
  std::string path;
  bool watch = false;
  bool operator==(const ExistsRequest&) const = default;
};

struct GetDataRequest {
  std::string path;
  bool watch = false;
  bool operator==(const GetDataRequest&) const = default;
};

struct SetDataRequest {
  std::string path;
  Buffer data;
  int32_t version = -1;
  bool operator==(const SetDataRequest&) const = default;
};

struct GetACLRequest {
  std::string path;
  bool operator==(const GetACLRequest&) const = default;
};

// setACL (7). version is compared with the node's aversion.
struct SetACLRequest {
  std::string path;
  std::vector<ACL> acl;
  int32_t version = -1;
  bool operator==(const SetACLRequest&) const = default;
};

struct GetChildrenRequest {
  std::string path;
  bool watch = false;
  bool operator==(const GetChildrenRequest&) const = default;
};

struct GetChildren2Request {
  std::string path;
  bool watch = false;
  bool operator==(const GetChildren2Request&) const = default;
};

struct SyncRequest {
  std::string path;
  bool operator==(const SyncRequest&) const = default;
};

// check (13), mostly as a multi sub-op.
struct CheckVersionRequest {
  std::string path;
  int32_t version = -1;
  bool operator==(const CheckVersionRequest&) const = default;
};

// reconfig (16). Java clients send null (-1) for unused strings; they decode as "".
struct ReconfigRequest {
  std::string joining_servers;
  std::string leaving_servers;
  std::string new_members;
  int64_t cur_config_id = -1;
  bool operator==(const ReconfigRequest&) const = default;
};

// checkWatches (17). type: jute/constants.h watcher_type.
struct CheckWatchesRequest {
  std::string path;
  int32_t type = 0;
  bool operator==(const CheckWatchesRequest&) const = default;
};

// removeWatches (18). type: jute/constants.h watcher_type.
struct RemoveWatchesRequest {
  std::string path;
  int32_t type = 0;
  bool operator==(const RemoveWatchesRequest&) const = default;
};

// addWatch (106). mode: jute/constants.h add_watch_mode.
struct AddWatchRequest {
  std::string path;
  int32_t mode = 0;
  bool operator==(const AddWatchRequest&) const = default;
};

// auth (100), sent with xid -4. type is always 0.
struct AuthPacket {
  int32_t type = 0;
  std::string scheme;
  Buffer auth;
  bool operator==(const AuthPacket&) const = default;
};

// setWatches (101), sent with xid -8 on reconnect. relative_zxid is the client's last zxid.
struct SetWatches {
  int64_t relative_zxid = 0;
  std::vector<std::string> data_watches;
  std::vector<std::string> exist_watches;
  std::vector<std::string> child_watches;
  bool operator==(const SetWatches&) const = default;
};

// setWatches2 (105): SetWatches plus persistent and persistent-recursive watches.
struct SetWatches2 {
  int64_t relative_zxid = 0;
  std::vector<std::string> data_watches;
  std::vector<std::string> exist_watches;
  std::vector<std::string> child_watches;
  std::vector<std::string> persistent_watches;
  std::vector<std::string> persistent_recursive_watches;
  bool operator==(const SetWatches2&) const = default;
};

// sasl (102).
struct GetSASLRequest {
  Buffer token;
  bool operator==(const GetSASLRequest&) const = default;
};

// getEphemerals (103). "" or "/" means all of the caller's ephemerals.
struct GetEphemeralsRequest {
  std::string prefix_path;
  bool operator==(const GetEphemeralsRequest&) const = default;
};

struct GetAllChildrenNumberRequest {
  std::string path;
  bool operator==(const GetAllChildrenNumberRequest&) const = default;
};

// The body of ops that carry none: ping (11), closeSession (-11), whoAmI (107).
struct EmptyRequest {
  bool operator==(const EmptyRequest&) const = default;
};

void encode(Writer& w, const CreateRequest& v);
void encode(Writer& w, const CreateTTLRequest& v);
void encode(Writer& w, const DeleteRequest& v);
void encode(Writer& w, const DeleteContainerRequest& v);
void encode(Writer& w, const ExistsRequest& v);
void encode(Writer& w, const GetDataRequest& v);
void encode(Writer& w, const SetDataRequest& v);
void encode(Writer& w, const GetACLRequest& v);
void encode(Writer& w, const SetACLRequest& v);
void encode(Writer& w, const GetChildrenRequest& v);
void encode(Writer& w, const GetChildren2Request& v);
void encode(Writer& w, const SyncRequest& v);
void encode(Writer& w, const CheckVersionRequest& v);
void encode(Writer& w, const ReconfigRequest& v);
void encode(Writer& w, const CheckWatchesRequest& v);
void encode(Writer& w, const RemoveWatchesRequest& v);
void encode(Writer& w, const AddWatchRequest& v);
void encode(Writer& w, const AuthPacket& v);
void encode(Writer& w, const SetWatches& v);
void encode(Writer& w, const SetWatches2& v);
void encode(Writer& w, const GetSASLRequest& v);
void encode(Writer& w, const GetEphemeralsRequest& v);
void encode(Writer& w, const GetAllChildrenNumberRequest& v);
void encode(Writer& w, const EmptyRequest& v);

bool decode(Reader& r, CreateRequest& v);
bool decode(Reader& r, CreateTTLRequest& v);
bool decode(Reader& r, DeleteRequest& v);
bool decode(Reader& r, DeleteContainerRequest& v);
bool decode(Reader& r, ExistsRequest& v);
bool decode(Reader& r, GetDataRequest& v);
bool decode(Reader& r, SetDataRequest& v);
bool decode(Reader& r, GetACLRequest& v);
bool decode(Reader& r, SetACLRequest& v);
bool decode(Reader& r, GetChildrenRequest& v);
bool decode(Reader& r, GetChildren2Request& v);
bool decode(Reader& r, SyncRequest& v);
bool decode(Reader& r, CheckVersionRequest& v);
bool decode(Reader& r, ReconfigRequest& v);
bool decode(Reader& r, CheckWatchesRequest& v);
bool decode(Reader& r, RemoveWatchesRequest& v);
bool decode(Reader& r, AddWatchRequest& v);
bool decode(Reader& r, AuthPacket& v);
bool decode(Reader& r, SetWatches& v);
bool decode(Reader& r, SetWatches2& v);
bool decode(Reader& r, GetSASLRequest& v);
bool decode(Reader& r, GetEphemeralsRequest& v);
bool decode(Reader& r, GetAllChildrenNumberRequest& v);
bool decode(Reader& r, EmptyRequest& v);

}  // namespace zkraft::jute
