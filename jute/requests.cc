#include "jute/requests.h"

#include "jute/record_fields.h"

namespace zkraft::jute {

// Fields in wire order (jute/record_fields.h); every read is bounded by the Reader.
ZKRAFT_JUTE_RECORD(CreateRequest, v.path, v.data, v.acl, v.flags)
ZKRAFT_JUTE_RECORD(CreateTTLRequest, v.path, v.data, v.acl, v.flags, v.ttl)
ZKRAFT_JUTE_RECORD(DeleteRequest, v.path, v.version)
ZKRAFT_JUTE_RECORD(DeleteContainerRequest, v.path)
ZKRAFT_JUTE_RECORD(ExistsRequest, v.path, v.watch)
ZKRAFT_JUTE_RECORD(GetDataRequest, v.path, v.watch)
ZKRAFT_JUTE_RECORD(SetDataRequest, v.path, v.data, v.version)
ZKRAFT_JUTE_RECORD(GetACLRequest, v.path)
ZKRAFT_JUTE_RECORD(SetACLRequest, v.path, v.acl, v.version)
ZKRAFT_JUTE_RECORD(GetChildrenRequest, v.path, v.watch)
ZKRAFT_JUTE_RECORD(GetChildren2Request, v.path, v.watch)
ZKRAFT_JUTE_RECORD(SyncRequest, v.path)
ZKRAFT_JUTE_RECORD(CheckVersionRequest, v.path, v.version)
ZKRAFT_JUTE_RECORD(ReconfigRequest, v.joining_servers, v.leaving_servers, v.new_members,
                   v.cur_config_id)
ZKRAFT_JUTE_RECORD(CheckWatchesRequest, v.path, v.type)
ZKRAFT_JUTE_RECORD(RemoveWatchesRequest, v.path, v.type)
ZKRAFT_JUTE_RECORD(AddWatchRequest, v.path, v.mode)
ZKRAFT_JUTE_RECORD(AuthPacket, v.type, v.scheme, v.auth)
ZKRAFT_JUTE_RECORD(SetWatches, v.relative_zxid, v.data_watches, v.exist_watches, v.child_watches)
ZKRAFT_JUTE_RECORD(SetWatches2, v.relative_zxid, v.data_watches, v.exist_watches, v.child_watches,
                   v.persistent_watches, v.persistent_recursive_watches)
ZKRAFT_JUTE_RECORD(GetSASLRequest, v.token)
ZKRAFT_JUTE_RECORD(GetEphemeralsRequest, v.prefix_path)
ZKRAFT_JUTE_RECORD(GetAllChildrenNumberRequest, v.path)

void encode(Writer&, const EmptyRequest&) {}
bool decode(Reader& r, EmptyRequest&) { return r.ok(); }

}  // namespace zkraft::jute
