// The server's command line: --config FILE plus one override flag per key whose table entry
// names a flag (config_keys.cc). --help ends with the table's key list.

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <map>

#include "server/config.h"
#include "server/config_keys.h"
#include "server/config_values.h"

namespace zkraft::server {

using namespace config_values;

bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error,
                        std::string* output, const std::vector<std::string>& jvm_words) {
  if (error != nullptr) error->clear();
  CLI::App app{"zkraft-server: a ZooKeeper-compatible coordination server replicated with Raft"};
  std::string config_file;
  bool show_version = false;
  app.add_option("-c,--config", config_file, "config file: YAML (.yaml/.yml) or ZooKeeper zoo.cfg")
      ->type_name("FILE");
  // One flag per key that has one; the value is parsed with the key's own bounds after the file.
  std::map<const ConfigKey*, std::string> flag_values;
  for (const ConfigKey& k : config_keys()) {
    if (k.flag.empty()) continue;
    const std::string help = std::string(k.doc) + " [key " + std::string(k.name()) +
                             (k.zoo.empty() || k.yaml.empty() ? "" : " / " + std::string(k.zoo)) +
                             "]";
    app.add_option(std::string(k.flag), flag_values[&k], help)->type_name(std::string(k.flag_arg));
  }
  app.add_flag("--version", show_version, "print the version and exit");
  app.footer("\n" + config_keys_help());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (output != nullptr) *output = app.help();
    return false;
  } catch (const CLI::CallForAllHelp&) {
    if (output != nullptr) *output = app.help("", CLI::AppFormatMode::All);
    return false;
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    if (size_t nl = what.find('\n'); nl != std::string::npos) what.resize(nl);
    return fail(error, "command line: " + what);
  }
  if (show_version) {
    if (output != nullptr) {
      *output = std::string("zkraft ") + ZKRAFT_VERSION + " (ZooKeeper " + ZKRAFT_ZK_COMPAT_VERSION +
                " compatible)\n";
    }
    return false;
  }
  // The file first, remembering what it set, then the -D words for everything else: the file
  // wins over a system property, as in ZooKeeper (config.h), whatever order they are read in.
  std::set<const ConfigKey*> file_keys;
  if (!config_file.empty() && !load_config_file(config_file, cfg, error, &file_keys)) return false;
  if (!apply_system_properties(jvm_words, cfg, error, file_keys)) return false;
  // An empty flag value counts as not given, as before the table.
  auto given = [&](std::string_view flag) {
    for (const auto& [k, v] : flag_values) {
      if (k->flag == flag) return !v.empty();
    }
    return false;
  };
  std::vector<std::pair<const ConfigKey*, std::string>> set_by_flags;
  for (const ConfigKey& k : config_keys()) {
    auto it = flag_values.find(&k);
    if (it == flag_values.end() || it->second.empty()) continue;
    if (!set_key(k, std::string(k.flag), it->second, cfg, error)) return false;
    set_by_flags.emplace_back(&k, std::string(k.flag));
  }
  warn_ignored_keys(set_by_flags, Config{}, cfg);
  if (!given("--server-id") && cfg.data_dir.find("{id}") == std::string::npos &&
      !read_myid(cfg, error)) {
    return false;
  }
  apply_server_identity(cfg, given("--client-port"), given("--client-address"));
  return validate_config(cfg, error);
}

bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error,
                        std::string* output) {
  return parse_command_line(argc, argv, cfg, error, output, {});
}

bool parse_command_line(int argc, char** argv, Config& cfg, std::string* error) {
  std::string output;
  if (parse_command_line(argc, argv, cfg, error, &output)) return true;
  if (error != nullptr && !error->empty()) return false;
  std::cout << output << std::flush;
  std::exit(0);
}

}  // namespace zkraft::server
