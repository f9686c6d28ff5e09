#include "jute/errors.h"

namespace zkraft::jute {

const char* error_name(int32_t code) {
  switch (code) {
    case err::kOk: return "OK";
    case err::kSystemError: return "SYSTEMERROR";
    case err::kRuntimeInconsistency: return "RUNTIMEINCONSISTENCY";
    case err::kDataInconsistency: return "DATAINCONSISTENCY";
    case err::kConnectionLoss: return "CONNECTIONLOSS";
    case err::kMarshallingError: return "MARSHALLINGERROR";
    case err::kUnimplemented: return "UNIMPLEMENTED";
    case err::kOperationTimeout: return "OPERATIONTIMEOUT";
    case err::kBadArguments: return "BADARGUMENTS";
    case err::kUnknownSession: return "UNKNOWNSESSION";
    case err::kNewConfigNoQuorum: return "NEWCONFIGNOQUORUM";
    case err::kReconfigInProgress: return "RECONFIGINPROGRESS";
    case err::kApiError: return "APIERROR";
    case err::kNoNode: return "NONODE";
    case err::kNoAuth: return "NOAUTH";
    case err::kBadVersion: return "BADVERSION";
    case err::kNoChildrenForEphemerals: return "NOCHILDRENFOREPHEMERALS";
    case err::kNodeExists: return "NODEEXISTS";
    case err::kNotEmpty: return "NOTEMPTY";
    case err::kSessionExpired: return "SESSIONEXPIRED";
    case err::kInvalidCallback: return "INVALIDCALLBACK";
    case err::kInvalidAcl: return "INVALIDACL";
    case err::kAuthFailed: return "AUTHFAILED";
    case err::kSessionMoved: return "SESSIONMOVED";
    case err::kNotReadOnly: return "NOTREADONLY";
    case err::kEphemeralOnLocalSession: return "EPHEMERALONLOCALSESSION";
    case err::kNoWatcher: return "NOWATCHER";
    case err::kRequestTimeout: return "REQUESTTIMEOUT";
    case err::kReconfigDisabled: return "RECONFIGDISABLED";
    case err::kSessionClosedRequireSaslAuth: return "SESSIONCLOSEDREQUIRESASLAUTH";
    case err::kQuotaExceeded: return "QUOTAEXCEEDED";
    case err::kThrottledOp: return "THROTTLEDOP";
    default: return "UNKNOWN";
  }
}

}  // namespace zkraft::jute
