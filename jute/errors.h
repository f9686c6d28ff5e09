#pragma once
// ZooKeeper error codes (KeeperException.Code) as they travel in ReplyHeader.err and in multi
// results. Only the integer goes on the wire; clients build the message text themselves.

#include <cstdint>

namespace zkraft::jute {

namespace err {
inline constexpr int32_t kOk = 0;
inline constexpr int32_t kSystemError = -1;
inline constexpr int32_t kRuntimeInconsistency = -2;  // multi ops after the failing one
inline constexpr int32_t kDataInconsistency = -3;
inline constexpr int32_t kConnectionLoss = -4;
inline constexpr int32_t kMarshallingError = -5;  // malformed request, or read/write mixed in multi
inline constexpr int32_t kUnimplemented = -6;     // unknown op (server then closes)
inline constexpr int32_t kOperationTimeout = -7;
inline constexpr int32_t kBadArguments = -8;
inline constexpr int32_t kUnknownSession = -12;
inline constexpr int32_t kNewConfigNoQuorum = -13;
inline constexpr int32_t kReconfigInProgress = -14;
inline constexpr int32_t kApiError = -100;
inline constexpr int32_t kNoNode = -101;
inline constexpr int32_t kNoAuth = -102;
inline constexpr int32_t kBadVersion = -103;
inline constexpr int32_t kNoChildrenForEphemerals = -108;
inline constexpr int32_t kNodeExists = -110;
inline constexpr int32_t kNotEmpty = -111;
inline constexpr int32_t kSessionExpired = -112;
inline constexpr int32_t kInvalidCallback = -113;
inline constexpr int32_t kInvalidAcl = -114;
inline constexpr int32_t kAuthFailed = -115;
inline constexpr int32_t kSessionMoved = -118;
inline constexpr int32_t kNotReadOnly = -119;
inline constexpr int32_t kEphemeralOnLocalSession = -120;
inline constexpr int32_t kNoWatcher = -121;
inline constexpr int32_t kRequestTimeout = -122;
inline constexpr int32_t kReconfigDisabled = -123;
inline constexpr int32_t kSessionClosedRequireSaslAuth = -124;
inline constexpr int32_t kQuotaExceeded = -125;
inline constexpr int32_t kThrottledOp = -127;
}  // namespace err

// The Java enum name of an error code ("NONODE", "BADVERSION", ...), or "UNKNOWN".
const char* error_name(int32_t code);

}  // namespace zkraft::jute
