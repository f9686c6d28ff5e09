#pragma once
// A JAAS login configuration file as Java's ConfigFile reads it, the file ZooKeeper is given with
// -Djava.security.auth.login.config=... for SASL (clients, the server, and quorum peers):
//
//     Server {
//         org.apache.zookeeper.server.auth.DigestLoginModule required
//         user_super="adminsecret"
//         user_bob="bobsecret";
//     };
//     QuorumLearner { org.apache.zookeeper.server.auth.DigestLoginModule required
//                     username="test" password="test"; };
//
// Grammar (Java's): sections `Name { Module Flag key=value ... ; ... };`, the flag one of required,
// requisite, sufficient, optional in any case; a value is a word or a "quoted string" with
// backslash escapes; comments are `#`, `//` and `/* */`. `${name}` in a value is expanded through
// the lookup the caller gives (ZooKeeper's system properties), `${/}` is "/". As in Java, a section
// name may appear only once. zkraft reads the options only: no login module is run, the class
// names are kept so callers can check which module a section names.
//
// Pure: no file access except load_jaas_file, no globals. Errors are one line naming the file
// position ("line 3: expected '{' after section name"), never an exception.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zkraft::server {

enum class JaasControlFlag { kRequired, kRequisite, kSufficient, kOptional };

struct JaasLoginModule {
  std::string class_name;
  JaasControlFlag flag = JaasControlFlag::kRequired;
  std::vector<std::pair<std::string, std::string>> options;  // in file order; keys unique

  // The value of an option, or nullopt.
  std::optional<std::string> option(std::string_view key) const;
};

struct JaasSection {
  std::string name;
  std::vector<JaasLoginModule> modules;
};

struct JaasFile {
  std::vector<JaasSection> sections;  // names unique

  const JaasSection* section(std::string_view name) const;
};

// Returns the value of a property for ${name}, or nullopt when it is not set (an error, as Java's
// PropertyExpander gives).
using JaasPropertyLookup = std::function<std::optional<std::string>(std::string_view)>;

std::optional<JaasFile> parse_jaas_file(std::string_view text, const JaasPropertyLookup& lookup,
                                        std::string* error);

// Reads and parses a file; errors start with the path ("/etc/jaas.conf: line 3: ...").
std::optional<JaasFile> load_jaas_file(const std::string& path, const JaasPropertyLookup& lookup,
                                       std::string* error);

// DigestLoginModule's users in a section: every option "user_NAME" gives NAME and its password,
// in file order. ZooKeeper's server side (SaslServerCallbackHandler) and quorum server read them so.
std::vector<std::pair<std::string, std::string>> jaas_digest_users(const JaasSection& section);

}  // namespace zkraft::server
