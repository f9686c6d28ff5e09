// libFuzzer target over the decoders that read bytes from the log, the disk or a peer, and over
// the state machine that applies what they decode: decode_peer_message, decode_txn and apply,
// ZkStateMachine::restore (a snapshot), consensus' decode_message, and the storage codec. A
// leader proposes client record bytes undecoded, so every replica's apply meets them raw: it must
// answer MarshallingError, never crash or break an invariant (ZKRAFT_INVARIANT aborts).
//
// Input layout: byte 0 picks the mode; the rest is the bytes. Mode 5 splits the rest on 0xff 0x00
// into several Txns applied in order to one state machine, so sequences reach deeper states.
// Properties besides the sanitizers: what decodes re-encodes to bytes that decode the same way,
// and a restored snapshot serialises back to a state that restores again to the same bytes.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "consensus/messages.h"
#include "consensus/storage_codec.h"
#include "server/peer_message.h"
#include "server/txn.h"
#include "server/zk_state_machine.h"

namespace {

using namespace zkraft;

#define check(ok) check_at((ok), __LINE__)
void check_at(bool ok, int line) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_state: property at line %d does not hold\n", line);
    abort();
  }
}

server::ZkStateMachine fresh_state() {
  server::StateMachineOptions o;
  o.extended_types_enabled = true;
  o.reconfig_enabled = true;
  o.enforce_quota = true;
  server::ZkStateMachine sm(o);
  server::Txn s;
  s.kind = server::TxnKind::kCreateSession;
  s.session_id = 0x100000000000001;
  s.timeout_ms = 30000;
  s.password = std::string(16, 'p');
  sm.apply(1, s);
  return sm;
}

void apply_bytes(server::ZkStateMachine& sm, int64_t& zxid, std::string_view bytes) {
  auto txn = server::decode_txn(bytes);
  if (!txn) return;
  // What decodes must encode to something that decodes to the same encoding.
  const std::string again = server::encode_txn(*txn);
  auto txn2 = server::decode_txn(again);
  check(txn2.has_value() && server::encode_txn(*txn2) == again);
  if (txn->kind == server::TxnKind::kRequest && txn->session_id == 0) txn->session_id = 0x100000000000001;
  sm.apply(++zxid, *txn);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0: {
      auto m = server::decode_peer_message(in, 1 << 16);
      if (m) {
        auto m2 = server::decode_peer_message(server::encode_peer_message(*m), 1 << 16);
        check(m2.has_value() && *m2 == *m);
      }
      break;
    }
    case 1: {
      auto sm = fresh_state();
      int64_t zxid = 1;
      apply_bytes(sm, zxid, in);
      break;
    }
    case 2: {
      server::ZkStateMachine sm;
      if (sm.restore(7, in)) {
        const std::string bytes = sm.serialize();
        server::ZkStateMachine again;
        check(again.restore(7, bytes));
        check(again.serialize() == bytes);
      }
      break;
    }
    case 3: {
      consensus::Message m;
      if (consensus::decode_message(in, m)) {
        const std::string bytes = consensus::encode_message(m);
        consensus::Message m2;
        check(consensus::decode_message(bytes, m2));
        check(consensus::encode_message(m2) == bytes);
      }
      break;
    }
    case 4: {
      consensus::Entry e;
      (void)consensus::storage::decode_entry_value(1, in, &e);
      consensus::HardState hs;
      (void)consensus::storage::decode_hard_state(in, &hs);
      consensus::storage::SnapshotRecord rec;
      (void)consensus::storage::decode_snapshot_record(in, &rec);
      // Keys as recovery reads them: a hard-state key parses back to the index it was made from.
      if (auto at = consensus::storage::parse_hard_state_key(in)) {
        check(consensus::storage::hard_state_key(*at) == in);
      }
      break;
    }
    case 5: {
      auto sm = fresh_state();
      int64_t zxid = 1;
      size_t start = 0;
      while (start <= in.size()) {
        size_t cut = in.find(std::string_view("\xff\x00", 2), start);
        apply_bytes(sm, zxid, in.substr(start, cut == std::string_view::npos ? std::string_view::npos : cut - start));
        if (cut == std::string_view::npos) break;
        start = cut + 2;
      }
      // The state the sequence built survives a snapshot round trip.
      const std::string bytes = sm.serialize();
      server::ZkStateMachine again;
      check(again.restore(zxid, bytes));
      check(again.serialize() == bytes);
      break;
    }
  }
  return 0;
}
