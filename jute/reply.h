#pragma once
// Replies as a whole: ReplyHeader + the record that the answered op calls for. Used by the server
// to write replies, and by tests and tools to read them.

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "jute/archive.h"
#include "jute/frame.h"
#include "jute/headers.h"
#include "jute/multi.h"
#include "jute/responses.h"

namespace zkraft::jute {

using ResponseBody =
    std::variant<EmptyResponse, CreateResponse, Create2Response, ExistsResponse, GetDataResponse,
                 SetDataResponse, GetACLResponse, SetACLResponse, GetChildrenResponse,
                 GetChildren2Response, SyncResponse, ErrorResponse, SetSASLResponse,
                 GetEphemeralsResponse, GetAllChildrenNumberResponse, WhoAmIResponse,
                 WatcherEvent, MultiResponse>;

struct DecodedReply {
  ReplyHeader header;
  ResponseBody body;
  bool operator==(const DecodedReply&) const = default;
};

// Decodes a reply frame body. `op` is the op code of the request it answers; it is not consulted
// when header.xid is -1 (a WatcherEvent follows) or header.err != 0 (no body follows).
// Returns err::kOk or err::kMarshallingError.
int32_t decode_reply(std::string_view frame, int32_t op, const Limits& limits, DecodedReply& out);

void encode(Writer& w, const ResponseBody& v);
std::string encode_reply(const DecodedReply& v);  // no length prefix

// A complete length-prefixed reply frame: header, then the body (pass EmptyResponse{} for none).
template <class Body>
std::string reply_frame(const ReplyHeader& header, const Body& body) {
  Writer w;
  size_t at = begin_frame(w);
  encode(w, header);
  encode(w, body);
  end_frame(w, at);
  return w.take();
}

}  // namespace zkraft::jute
