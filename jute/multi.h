#pragma once
// multi (14) and multiRead (22): MultiOperationRecord on the request side, MultiResponse on the
// reply side. Both are a sequence of MultiHeader + record, closed by MultiHeader{-1, true, -1}.

#include <cstdint>
#include <variant>
#include <vector>

#include "jute/archive.h"
#include "jute/requests.h"
#include "jute/responses.h"

namespace zkraft::jute {

struct MultiHeader {
  int32_t type = 0;   // op code of the entry, or -1 (op::kError) for an error result
  bool done = false;  // true only on the terminator
  int32_t err = 0;
  bool operator==(const MultiHeader&) const = default;
};

// One sub-request. `type` says which op it is, because one record serves several ops:
// CreateRequest for create (1), create2 (15) and createContainer (19).
// Invariant (kept by decode): the alternative held matches `type`.
struct MultiOp {
  using Body = std::variant<CreateRequest, CreateTTLRequest, DeleteRequest, SetDataRequest,
                            CheckVersionRequest, GetDataRequest, GetChildrenRequest>;
  int32_t type = 0;
  Body body;
  bool operator==(const MultiOp&) const = default;
};

// The request body of multi and multiRead. Decoding fails (-> kMarshallingError) on an unknown
// sub-op type, on more than limits.max_vector ops, and when read ops (getData, getChildren) are
// mixed with write ops, as ZooKeeper's MultiOperationRecord does.
struct MultiRequest {
  std::vector<MultiOp> ops;
  // True when every op is a read (getData / getChildren); an empty multi is not read-only.
  bool is_read_only() const;
  bool operator==(const MultiRequest&) const = default;
};

// One result of a multi reply. On success `type` is the sub-op's code and `err` is 0; for a failed
// (or rolled back) op `type` is -1, `err` its code, and the body an ErrorResponse{err}.
// Body by type: 1 CreateResponse; 15/19/21 Create2Response; 2 and 13 EmptyResponse;
// 5 SetDataResponse; 4 GetDataResponse; 8 GetChildrenResponse; -1 ErrorResponse.
struct MultiResult {
  using Body = std::variant<EmptyResponse, CreateResponse, Create2Response, SetDataResponse,
                            GetDataResponse, GetChildrenResponse, ErrorResponse>;
  int32_t type = 0;
  int32_t err = 0;
  Body body;
  bool operator==(const MultiResult&) const = default;

  // Builds the error result for a failed or rolled-back op.
  static MultiResult error(int32_t code) { return MultiResult{-1, code, ErrorResponse{code}}; }
};

struct MultiResponse {
  std::vector<MultiResult> results;
  bool operator==(const MultiResponse&) const = default;
};

// True for getData and getChildren, the reads a multiRead (op 22) holds. The writes a multi may
// hold: jute/opcodes.h op_is_multi_write.
bool is_multi_read_op(int32_t type);

void encode(Writer& w, const MultiHeader& v);
void encode(Writer& w, const MultiOp& v);  // header + record
void encode(Writer& w, const MultiRequest& v);
void encode(Writer& w, const MultiResult& v);  // header + record
void encode(Writer& w, const MultiResponse& v);
bool decode(Reader& r, MultiHeader& v);
bool decode(Reader& r, MultiRequest& v);
bool decode(Reader& r, MultiResponse& v);

}  // namespace zkraft::jute
