#pragma once
// LoadOp and Mix: what zk_load asks of a server. An op names one request kind (or, for churn and
// watch, one cycle of several requests); a Mix is the weighted choice the mixed workload draws
// from for every request it sends. Pure: no I/O, no randomness (the caller passes the draw).
//
// Invariant: a Mix from parse_mix has a positive total and only single-request ops.

#include <optional>
#include <string>

namespace zkraft::tools {

enum class LoadOp {
  kCreate,     // persistent create, a new name each time
  kCreateSeq,  // persistent sequential create under the root
  kSet,        // setData of the session's own node
  kGet,        // getData of the session's own node
  kExists,     // exists of the session's own node
  kList,       // getChildren of the node with 100 children
  kDelete,     // delete of a node the tool created before the run
  kMixed,      // a draw from the Mix for every request
  kChurn,      // connect, create an ephemeral, close: one cycle is one op
  kWatch,      // W sessions watch one node, one writer sets it: one round is one op
};

const char* op_name(LoadOp op);
std::optional<LoadOp> parse_op(const std::string& name);

// Weights (any non-negative integers; the mix is in percent).
struct Mix {
  int create = 1, set = 8, get = 45, list = 45, del = 1, exists = 0;
  int total() const { return create + set + get + list + del + exists; }
};

// "create=1,set=8,get=45,list=45,delete=1" (any order, missing ones are 0); nullopt (why set) on
// an unknown name, a bad number or an all-zero mix.
std::optional<Mix> parse_mix(const std::string& spec, std::string& why);

// The op for a draw in [0, total): the weights laid end to end in the order create, set, get,
// list, delete, exists.
LoadOp pick(const Mix& mix, int draw);

}  // namespace zkraft::tools
