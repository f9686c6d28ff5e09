#pragma once
// Status: the error value returned across the consensus storage and transport boundaries.
//
// A Status is either ok or carries a code and a human-readable message. The codes let a caller
// (the Raft core's driver) react to the expected cases, e.g. kCompacted means "ask for a snapshot",
// kUnavailable means "not in the log yet"; everything else is a real failure to log and surface.

#include <string>
#include <utility>

namespace zkraft::consensus {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kCompacted,          // the requested index was dropped by compaction (covered by a snapshot)
    kUnavailable,        // the requested index is beyond the last entry
    kSnapshotOutOfDate,  // a snapshot older than the one already stored
    kInvalidArgument,    // the caller broke a precondition (non-contiguous entries, ...)
    kCorruption,         // stored bytes failed a checksum or could not be parsed
    kIOError,            // the disk or LevelDB reported a failure
    kNoSpace,            // the disk is full (ENOSPC): nothing was written; may succeed later
    kClosed,             // the component was stopped
  };

  Status() = default;
  static Status ok() { return Status(); }
  static Status error(Code code, std::string message) { return Status(code, std::move(message)); }
  static Status compacted(std::string m) { return error(Code::kCompacted, std::move(m)); }
  static Status unavailable(std::string m) { return error(Code::kUnavailable, std::move(m)); }
  static Status invalid_argument(std::string m) { return error(Code::kInvalidArgument, std::move(m)); }
  static Status corruption(std::string m) { return error(Code::kCorruption, std::move(m)); }
  static Status io_error(std::string m) { return error(Code::kIOError, std::move(m)); }
  static Status closed(std::string m) { return error(Code::kClosed, std::move(m)); }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok" or "<code name>: <message>", for logs.
  std::string to_string() const;

  bool operator==(const Status&) const = default;

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

const char* to_string(Status::Code code);

}  // namespace zkraft::consensus
