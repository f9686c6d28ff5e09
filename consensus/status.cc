#include "consensus/status.h"

namespace zkraft::consensus {

const char* to_string(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "ok";
    case Status::Code::kCompacted: return "compacted";
    case Status::Code::kUnavailable: return "unavailable";
    case Status::Code::kSnapshotOutOfDate: return "snapshot out of date";
    case Status::Code::kInvalidArgument: return "invalid argument";
    case Status::Code::kCorruption: return "corruption";
    case Status::Code::kIOError: return "io error";
    case Status::Code::kClosed: return "closed";
    case Status::Code::kNoSpace: return "no space";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(consensus::to_string(code_)) + ": " + message_;
}

}  // namespace zkraft::consensus
