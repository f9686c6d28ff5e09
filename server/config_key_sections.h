#pragma once
// The sections of the configuration key table (config_keys.h), one per file: config_keys.cc
// assembles them into the one table that the parsers, --help and the conf/standalone.yaml check
// read. Internal to the config_keys*.cc files. Invariant: a key is in exactly one section (the
// table's uniqueness test checks the assembled table).

#include <span>

#include "server/config_keys.h"

namespace zkraft::server {

std::span<const ConfigKey> server_keys();      // config_keys_server.cc
std::span<const ConfigKey> operation_keys();   // config_keys_server.cc
std::span<const ConfigKey> sasl_keys();        // config_keys_sasl.cc
std::span<const ConfigKey> quorum_keys();      // config_keys_quorum.cc
std::span<const ConfigKey> client_tls_keys();  // config_keys_tls.cc
std::span<const ConfigKey> quorum_tls_keys();  // config_keys_tls.cc

}  // namespace zkraft::server
