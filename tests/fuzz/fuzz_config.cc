// libFuzzer target over the configuration readers: our YAML, ZooKeeper's zoo.cfg, the -D words of
// SERVER_JVMFLAGS, a server.N spec, and JAAS login files. An operator's typo must give one error
// line, never a crash or a hang; whatever they accept must pass or fail validate_config cleanly.
//
// Input layout: byte 0 picks the mode; the rest is the text.
// Properties besides the sanitizers: a failed parse always says why (a non-empty error); a parsed
// JAAS file's sections and options are unique, as the parser promises.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "server/config.h"
#include "server/jaas_file.h"
#include "server/membership_text.h"
#include "server/raft_options.h"

namespace {

using namespace zkraft;

#define check(ok) check_at((ok), __LINE__)
void check_at(bool ok, int line) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_config: property at line %d does not hold\n", line);
    abort();
  }
}

void after_parse(bool ok, server::Config& cfg, const std::string& error) {
  check(ok || !error.empty());
  if (!ok) return;
  cfg.data_dir = "/nonexistent";  // validate wants one; nothing is read from it
  std::string verror;
  if (!server::validate_config(cfg, &verror)) {
    check(!verror.empty());
    return;
  }
  (void)server::raft_log_dir(cfg);
  (void)cfg.session_timeout_bounds();
  // A standalone server's Raft options read no files (peer TLS and SASL are ensemble-only).
  if (cfg.standalone()) (void)server::raft_options(cfg, &verror);
}

void jaas(std::string_view text) {
  std::string error;
  auto lookup = [](std::string_view name) -> std::optional<std::string> {
    if (name == "user.home") return std::string("/home/z");
    return std::nullopt;
  };
  auto file = server::parse_jaas_file(text, lookup, &error);
  check(file.has_value() || !error.empty());
  if (!file) return;
  std::set<std::string> names;
  for (const auto& section : file->sections) {
    check(names.insert(section.name).second);
    for (const auto& module : section.modules) {
      std::set<std::string> keys;
      for (const auto& [k, v] : module.options) check(keys.insert(k).second);
    }
    (void)server::jaas_digest_users(section);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  server::Config cfg;
  std::string error;
  switch (data[0] % 5) {
    case 0: after_parse(server::parse_yaml_config(text, cfg, &error), cfg, error); break;
    case 1: after_parse(server::parse_zoo_cfg(text, cfg, &error), cfg, error); break;
    case 2: {
      const std::string words(text);
      after_parse(server::apply_system_properties(server::jvm_flag_words(words.c_str(), nullptr),
                                                  cfg, &error),
                  cfg, error);
      break;
    }
    case 3: {
      server::PeerConfig peer;
      if (!server::parse_server_spec(text, peer, &error)) check(!error.empty());
      break;
    }
    case 4: jaas(text); break;
  }
  return 0;
}
