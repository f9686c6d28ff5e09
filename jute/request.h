#pragma once
// The one request decoder the server and the fuzzer share: a frame body (the bytes after the
// 4-byte length) -> RequestHeader + the record its op code calls for.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "jute/archive.h"
#include "jute/connect.h"
#include "jute/headers.h"
#include "jute/multi.h"
#include "jute/requests.h"

namespace zkraft::jute {

// Any request record. EmptyRequest is the body of ping, closeSession and whoAmI.
using RequestBody =
    std::variant<EmptyRequest, CreateRequest, CreateTTLRequest, DeleteRequest,
                 DeleteContainerRequest, ExistsRequest, GetDataRequest, SetDataRequest,
                 GetACLRequest, SetACLRequest, GetChildrenRequest, GetChildren2Request, SyncRequest,
                 CheckVersionRequest, MultiRequest, ReconfigRequest, CheckWatchesRequest,
                 RemoveWatchesRequest, AddWatchRequest, AuthPacket, SetWatches, SetWatches2,
                 GetSASLRequest, GetEphemeralsRequest, GetAllChildrenNumberRequest>;

// Invariant after a successful decode: body holds the record that header.type calls for
// (create/create2/createContainer -> CreateRequest, multi/multiRead -> MultiRequest, ...).
struct DecodedRequest {
  RequestHeader header;
  RequestBody body;
  bool operator==(const DecodedRequest&) const = default;
};

// Decodes the record of `op` from r into out.
// Returns err::kOk, err::kMarshallingError for malformed or truncated input, or
// err::kUnimplemented for an op a client may not send (unknown codes, 0, 10, -1, -10).
int32_t decode_request_body(int32_t op, Reader& r, RequestBody& out);

// multi (14) and multiRead (22) both decode to MultiRequest, whichever kind of sub-ops they hold
// (mixing kinds inside one is a decode error); whether the kind fits the op code is for the
// server to check with MultiRequest::is_read_only().
//
// Decodes a whole request frame body. On kUnimplemented and on a malformed record the header is
// still filled in when it could be read (so the server can answer with the right xid).
// Bytes after the record are ignored, as ZooKeeper does.
int32_t decode_request(std::string_view frame, const Limits& limits, DecodedRequest& out);

// The handshake frame bodies. Return err::kOk or err::kMarshallingError (out is then untouched).
int32_t decode_connect_request(std::string_view frame, const Limits& limits, ConnectRequest& out);
int32_t decode_connect_response(std::string_view frame, const Limits& limits,
                                ConnectResponse& out);

// Header + record, without the length prefix. The exact inverse of decode_request for every
// frame a real client sends (strings that arrived as -1 come back with length 0).
void encode(Writer& w, const RequestBody& v);
std::string encode_request(const DecodedRequest& v);

}  // namespace zkraft::jute
