#pragma once
// Every server reply record (the body after a ReplyHeader with err == 0) and the watch event,
// one plain struct per record with encode/decode overloads. Field order is wire order.

#include <cstdint>
#include <string>
#include <vector>

#include "jute/archive.h"
#include "jute/data.h"

namespace zkraft::jute {

// create (1): the actual path, including any sequential suffix.
struct CreateResponse {
  std::string path;
  bool operator==(const CreateResponse&) const = default;
};

// create2 (15), createContainer (19), createTTL (21).
struct Create2Response {
  std::string path;
  Stat stat;
  bool operator==(const Create2Response&) const = default;
};

struct ExistsResponse {
  Stat stat;
  bool operator==(const ExistsResponse&) const = default;
};

// getData (4); also the reply of reconfig (16), carrying the new config text.
struct GetDataResponse {
  Buffer data;
  Stat stat;
  bool operator==(const GetDataResponse&) const = default;
};

// setData (5); also the reply of a standalone check (13).
struct SetDataResponse {
  Stat stat;
  bool operator==(const SetDataResponse&) const = default;
};

struct GetACLResponse {
  std::vector<ACL> acl;
  Stat stat;
  bool operator==(const GetACLResponse&) const = default;
};

struct SetACLResponse {
  Stat stat;
  bool operator==(const SetACLResponse&) const = default;
};

// getChildren (8): names relative to the parent, in no particular order.
struct GetChildrenResponse {
  std::vector<std::string> children;
  bool operator==(const GetChildrenResponse&) const = default;
};

struct GetChildren2Response {
  std::vector<std::string> children;
  Stat stat;
  bool operator==(const GetChildren2Response&) const = default;
};

struct SyncResponse {
  std::string path;
  bool operator==(const SyncResponse&) const = default;
};

// The body of an error result inside a multi reply, and of the addWatch (106) reply (err 0).
struct ErrorResponse {
  int32_t err = 0;
  bool operator==(const ErrorResponse&) const = default;
};

// sasl (102) reply.
struct SetSASLResponse {
  Buffer token;
  bool operator==(const SetSASLResponse&) const = default;
};

struct GetEphemeralsResponse {
  std::vector<std::string> ephemerals;
  bool operator==(const GetEphemeralsResponse&) const = default;
};

struct GetAllChildrenNumberResponse {
  int32_t total_number = 0;
  bool operator==(const GetAllChildrenNumberResponse&) const = default;
};

// One authenticated identity of a connection, e.g. {"ip", "127.0.0.1"}.
struct ClientInfo {
  std::string auth_scheme;
  std::string user;
  bool operator==(const ClientInfo&) const = default;
};

// whoAmI (107) reply.
struct WhoAmIResponse {
  std::vector<ClientInfo> client_info;
  bool operator==(const WhoAmIResponse&) const = default;
};

// A watch notification, sent with xid -1 (jute/constants.h event / keeper_state).
struct WatcherEvent {
  int32_t type = 0;
  int32_t state = 0;
  std::string path;
  bool operator==(const WatcherEvent&) const = default;
};

// The body of replies that carry none: delete, setWatches, auth, closeSession, ping, check in
// multi, checkWatches, removeWatches, and every reply whose header err != 0.
struct EmptyResponse {
  bool operator==(const EmptyResponse&) const = default;
};

void encode(Writer& w, const CreateResponse& v);
void encode(Writer& w, const Create2Response& v);
void encode(Writer& w, const ExistsResponse& v);
void encode(Writer& w, const GetDataResponse& v);
void encode(Writer& w, const SetDataResponse& v);
void encode(Writer& w, const GetACLResponse& v);
void encode(Writer& w, const SetACLResponse& v);
void encode(Writer& w, const GetChildrenResponse& v);
void encode(Writer& w, const GetChildren2Response& v);
void encode(Writer& w, const SyncResponse& v);
void encode(Writer& w, const ErrorResponse& v);
void encode(Writer& w, const SetSASLResponse& v);
void encode(Writer& w, const GetEphemeralsResponse& v);
void encode(Writer& w, const GetAllChildrenNumberResponse& v);
void encode(Writer& w, const ClientInfo& v);
void encode(Writer& w, const WhoAmIResponse& v);
void encode(Writer& w, const WatcherEvent& v);
void encode(Writer& w, const EmptyResponse& v);

bool decode(Reader& r, CreateResponse& v);
bool decode(Reader& r, Create2Response& v);
bool decode(Reader& r, ExistsResponse& v);
bool decode(Reader& r, GetDataResponse& v);
bool decode(Reader& r, SetDataResponse& v);
bool decode(Reader& r, GetACLResponse& v);
bool decode(Reader& r, SetACLResponse& v);
bool decode(Reader& r, GetChildrenResponse& v);
bool decode(Reader& r, GetChildren2Response& v);
bool decode(Reader& r, SyncResponse& v);
bool decode(Reader& r, ErrorResponse& v);
bool decode(Reader& r, SetSASLResponse& v);
bool decode(Reader& r, GetEphemeralsResponse& v);
bool decode(Reader& r, GetAllChildrenNumberResponse& v);
bool decode(Reader& r, ClientInfo& v);
bool decode(Reader& r, WhoAmIResponse& v);
bool decode(Reader& r, WatcherEvent& v);
bool decode(Reader& r, EmptyResponse& v);

}  // namespace zkraft::jute
