#include "jute/multi.h"

#include "jute/opcodes.h"

namespace zkraft::jute {

namespace {

// The terminator that closes both a multi request and a multi response.
constexpr MultiHeader kDone{op::kError, true, -1};

// Reads the record for one sub-request; false on an op that may not appear in a multi.
bool decode_op_body(Reader& r, int32_t type, MultiOp::Body& body) {
  auto read_as = [&r, &body](auto record) {
    if (!decode(r, record)) return false;
    body = std::move(record);
    return true;
  };
  switch (type) {
    case op::kCreate:
    case op::kCreate2:
    case op::kCreateContainer: return read_as(CreateRequest{});
    case op::kCreateTTL: return read_as(CreateTTLRequest{});
    case op::kDelete: return read_as(DeleteRequest{});
    case op::kSetData: return read_as(SetDataRequest{});
    case op::kCheck: return read_as(CheckVersionRequest{});
    case op::kGetData: return read_as(GetDataRequest{});
    case op::kGetChildren: return read_as(GetChildrenRequest{});
    default: return false;
  }
}

bool decode_result_body(Reader& r, int32_t type, MultiResult::Body& body) {
  auto read_as = [&r, &body](auto record) {
    if (!decode(r, record)) return false;
    body = std::move(record);
    return true;
  };
  switch (type) {
    case op::kCreate: return read_as(CreateResponse{});
    case op::kCreate2:
    case op::kCreateContainer:
    case op::kCreateTTL: return read_as(Create2Response{});
    case op::kDelete:
    case op::kCheck: body = EmptyResponse{}; return r.ok();
    case op::kSetData: return read_as(SetDataResponse{});
    case op::kGetData: return read_as(GetDataResponse{});
    case op::kGetChildren: return read_as(GetChildrenResponse{});
    case op::kError: return read_as(ErrorResponse{});
    default: return false;
  }
}

}  // namespace

bool is_multi_read_op(int32_t type) { return type == op::kGetData || type == op::kGetChildren; }

bool MultiRequest::is_read_only() const {
  if (ops.empty()) return false;
  for (const auto& o : ops) {
    if (!is_multi_read_op(o.type)) return false;
  }
  return true;
}

void encode(Writer& w, const MultiHeader& v) {
  w.write_int(v.type);
  w.write_bool(v.done);
  w.write_int(v.err);
}

bool decode(Reader& r, MultiHeader& v) {
  return r.read_int(v.type) && r.read_bool(v.done) && r.read_int(v.err);
}

void encode(Writer& w, const MultiOp& v) {
  // Clients send err -1 in every sub-request header.
  encode(w, MultiHeader{v.type, false, -1});
  std::visit([&w](const auto& record) { encode(w, record); }, v.body);
}

void encode(Writer& w, const MultiRequest& v) {
  for (const auto& o : v.ops) encode(w, o);
  encode(w, kDone);
}

bool decode(Reader& r, MultiRequest& v) {
  std::vector<MultiOp> ops;
  bool has_read = false;
  bool has_write = false;
  MultiHeader h;
  if (!decode(r, h)) return false;
  while (!h.done) {
    // Each op takes at least a 9-byte header, so the input bounds the count as well; the explicit
    // limit keeps a huge frame from turning into a huge vector.
    if (ops.size() >= static_cast<size_t>(r.limits().max_vector)) {
      r.fail();
      return false;
    }
    MultiOp o;
    o.type = h.type;
    if (!decode_op_body(r, h.type, o.body)) {
      r.fail();
      return false;
    }
    (is_multi_read_op(o.type) ? has_read : has_write) = true;
    if (has_read && has_write) {  // ZooKeeper rejects mixed multis while deserialising
      r.fail();
      return false;
    }
    ops.push_back(std::move(o));
    if (!decode(r, h)) return false;
  }
  v.ops = std::move(ops);
  return true;
}

void encode(Writer& w, const MultiResult& v) {
  encode(w, MultiHeader{v.type, false, v.err});
  std::visit([&w](const auto& record) { encode(w, record); }, v.body);
}

void encode(Writer& w, const MultiResponse& v) {
  for (const auto& res : v.results) encode(w, res);
  encode(w, kDone);
}

bool decode(Reader& r, MultiResponse& v) {
  std::vector<MultiResult> results;
  MultiHeader h;
  if (!decode(r, h)) return false;
  while (!h.done) {
    if (results.size() >= static_cast<size_t>(r.limits().max_vector)) {
      r.fail();
      return false;
    }
    MultiResult res;
    res.type = h.type;
    res.err = h.err;
    if (!decode_result_body(r, h.type, res.body)) {
      r.fail();
      return false;
    }
    results.push_back(std::move(res));
    if (!decode(r, h)) return false;
  }
  v.results = std::move(results);
  return true;
}

}  // namespace zkraft::jute
