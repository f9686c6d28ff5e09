// zkraft-ctl: an operator's command line for a zkraft ensemble, in the spirit of etcdctl. It talks
// to the members' client ports: four-letter words for what they report and do (srvr, lgif, csnp,
// rqld, ydld: they must be in 4lw.commands.whitelist), and a client session for reconfig.
//
//   zkraft-ctl --endpoints h1:2181,h2:2181,h3:2181 member list [--json]
//   zkraft-ctl ... endpoint health          exit 1 if any member is unreachable or not serving
//   zkraft-ctl ... leader transfer h2:2181  that member asks the leader for leadership (rqld)
//   zkraft-ctl ... leader yield             the leader hands leadership to another voter (ydld)
//   zkraft-ctl ... snapshot take [h:p]      the leader (or the member given) snapshots now (csnp)
//   zkraft-ctl ... snapshot list            each member's latest snapshot index (lgif)
//   zkraft-ctl ... log                      each member's log bounds (lgif)
//   zkraft-ctl ... member add 'server.4=h:2888:3888;2181' [--auth digest:super:pw]
//   zkraft-ctl ... member remove 4 [--auth ...]
//   zkraft-ctl ... slow-log [--follow]      the members' recent slow requests (the `slow` word),
//                                           oldest first; --follow polls and prints new ones
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>
#include <string>
#include <vector>

#include "jute/errors.h"
#include "tools/ctl/four_letter_client.h"
#include "tools/ctl/member_view.h"
#include "tools/ctl/slow_log.h"
#include "tools/load_bench/zk_connection.h"

namespace {

using namespace zkraft::tools;

struct Options {
  std::string endpoints = "127.0.0.1:2181";
  bool json = false;
  int timeout_ms = 3000;
  std::string auth;  // scheme:credential
};

std::vector<HostPort> parse_endpoints(const std::string& list) {
  std::vector<HostPort> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) {
      size_t colon = item.rfind(':');
      HostPort hp;
      hp.host = colon == std::string::npos ? item : item.substr(0, colon);
      hp.port = static_cast<uint16_t>(colon == std::string::npos ? 2181 : std::stoi(item.substr(colon + 1)));
      out.push_back(hp);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

MemberView look_at(const HostPort& hp, const Options& o) {
  MemberView m;
  m.endpoint = hp.to_string();
  std::string err;
  auto srvr = ask_four_letter_word(hp, "srvr", o.timeout_ms, &err);
  if (!srvr) {
    m.error = err;
    return m;
  }
  m.reachable = true;
  parse_srvr(*srvr, m);
  if (auto lgif = ask_four_letter_word(hp, "lgif", o.timeout_ms, &err)) {
    if (auto log = parse_lgif(*lgif)) m.log = *log;
  }
  return m;
}

std::vector<MemberView> look_at_all(const Options& o) {
  std::vector<MemberView> out;
  for (const auto& hp : parse_endpoints(o.endpoints)) out.push_back(look_at(hp, o));
  return out;
}

// Sends `word` to `hp` and prints the answer; the answer must start with `ok_prefix`.
int word_command(const HostPort& hp, const std::string& word, const std::string& ok_prefix, const Options& o) {
  std::string err;
  auto answer = ask_four_letter_word(hp, word, o.timeout_ms, &err);
  if (!answer) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  if (o.json) {
    std::cout << nlohmann::json{{"endpoint", hp.to_string()}, {"command", word}, {"answer", *answer}}.dump()
              << "\n";
  } else {
    std::cout << hp.to_string() << ": " << *answer << (answer->ends_with("\n") ? "" : "\n");
  }
  return answer->rfind(ok_prefix, 0) == 0 ? 0 : 1;
}

int reconfig(const Options& o, const std::string& joining, const std::string& leaving) {
  auto eps = parse_endpoints(o.endpoints);
  for (const auto& hp : eps) {
    ZkConnection c;
    if (!c.open(hp, 10000, o.timeout_ms)) continue;
    if (!o.auth.empty()) {
      size_t colon = o.auth.find(':');
      if (colon == std::string::npos || !c.send_auth(o.auth.substr(0, colon), o.auth.substr(colon + 1))) {
        std::fprintf(stderr, "--auth wants scheme:credential\n");
        return 2;
      }
      zkraft::jute::ReplyHeader h;
      if (!c.read_reply(h) || h.err != 0) {
        std::fprintf(stderr, "%s: authentication failed\n", hp.to_string().c_str());
        return 1;
      }
    }
    zkraft::jute::ReplyHeader h;
    if (!c.send_reconfig(1, joining, leaving, "", -1) || !c.read_reply(h)) {
      std::fprintf(stderr, "%s: %s\n", hp.to_string().c_str(), c.error().c_str());
      continue;
    }
    c.close_session();
    if (h.err != 0) {
      std::fprintf(stderr, "reconfig refused: %s (%d)\n", zkraft::jute::error_name(h.err), h.err);
      return 1;
    }
    std::printf("reconfig committed at zxid 0x%llx\n", static_cast<unsigned long long>(h.zxid));
    return 0;
  }
  std::fprintf(stderr, "no endpoint took the reconfig\n");
  return 1;
}

// The slow-request log of every endpoint, oldest first; with `follow`, then every interval_ms
// what is new (by sequence number), until killed. Exit 1 if an endpoint could not be read.
int slow_log(const Options& o, bool follow, int interval_ms) {
  int status = 0;
  std::map<std::string, uint64_t> printed;  // endpoint -> the last seq printed
  for (bool first = true;; first = false) {
    std::vector<SlowRequest> fresh;
    for (const auto& hp : parse_endpoints(o.endpoints)) {
      const std::string ep = hp.to_string();
      std::string err;
      auto answer = ask_four_letter_word(hp, "slow", o.timeout_ms, &err);
      auto entries = answer ? parse_slow_requests(*answer, ep) : std::nullopt;
      if (!entries) {
        if (first) {
          std::fprintf(stderr, "%s: %s\n", ep.c_str(),
                       answer ? answer->substr(0, answer->find('\n')).c_str() : err.c_str());
          status = 1;
        }
        continue;
      }
      uint64_t& last = printed[ep];
      if (!entries->empty() && entries->back().seq < last) last = 0;  // it restarted
      std::vector<SlowRequest> news = newer_than(*entries, last);
      if (!news.empty() && last > 0 && news.front().seq > last + 1) {
        std::fprintf(stderr, "%s: %llu slow request(s) not shown (more than the server keeps)\n", ep.c_str(),
                     static_cast<unsigned long long>(news.front().seq - last - 1));
      }
      if (!news.empty()) last = news.back().seq;
      fresh.insert(fresh.end(), news.begin(), news.end());
    }
    std::stable_sort(fresh.begin(), fresh.end(),
                     [](const SlowRequest& a, const SlowRequest& b) { return a.wall_ms < b.wall_ms; });
    if (o.json && !follow) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& r : fresh) arr.push_back(slow_request_json(r));
      std::cout << arr.dump(2) << "\n";
    } else {
      // --follow --json: one object per line, as it comes.
      for (const auto& r : fresh) std::cout << (o.json ? slow_request_json(r).dump() : slow_request_text(r)) << "\n";
    }
    std::cout.flush();
    if (!follow) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"zkraft-ctl: look at and steer a zkraft ensemble through its client ports"};
  app.add_option("--endpoints", o.endpoints, "host:port,... of the members' client ports")->capture_default_str();
  app.add_flag("--json", o.json, "print JSON instead of text");
  app.add_option("--timeout-ms", o.timeout_ms, "per request")->capture_default_str();
  app.add_option("--auth", o.auth, "scheme:credential for reconfig (e.g. digest:super:secret)");
  app.require_subcommand(1);
  int status = 0;

  auto* member = app.add_subcommand("member", "the ensemble's members");
  member->require_subcommand(1);
  member->add_subcommand("list", "every member's mode, log figures and lag")->callback([&] {
    auto ms = look_at_all(o);
    if (o.json) {
      std::cout << members_json(ms).dump(2) << "\n";
    } else {
      std::cout << members_table(ms);
    }
    status = find_leader(ms) ? 0 : 1;
  });
  std::string server_line, remove_id;
  member->add_subcommand("add", "add a server (ZooKeeper's reconfig -add)")
      ->callback([&] { status = reconfig(o, server_line, ""); })
      ->add_option("server", server_line, "server.N=host:peer:election[:role];[client_address:]client_port")
      ->required();
  member->add_subcommand("remove", "remove a server by id (reconfig -remove)")
      ->callback([&] { status = reconfig(o, "", remove_id); })
      ->add_option("id", remove_id, "server id")
      ->required();

  auto* endpoint = app.add_subcommand("endpoint", "the endpoints themselves");
  endpoint->require_subcommand(1);
  endpoint->add_subcommand("health", "reachable and serving, per member")->callback([&] {
    auto ms = look_at_all(o);
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& m : ms) {
      const bool healthy = m.reachable && m.serving;
      const std::string why = !m.reachable ? m.error : !m.serving ? "not serving (no quorum)" : "serving as " + m.mode;
      if (o.json) {
        arr.push_back({{"endpoint", m.endpoint}, {"healthy", healthy}, {"reason", why}});
      } else {
        std::cout << m.endpoint << " is " << (healthy ? "healthy" : "unhealthy") << ": " << why << "\n";
      }
      if (!healthy) status = 1;
    }
    if (o.json) std::cout << arr.dump(2) << "\n";
  });

  auto* leader = app.add_subcommand("leader", "leadership");
  leader->require_subcommand(1);
  std::string to;
  leader->add_subcommand("transfer", "make this member the leader (rqld)")
      ->callback([&] {
        auto eps = parse_endpoints(to);
        status = eps.size() == 1 ? word_command(eps[0], "rqld", "Sent", o) : 2;
      })
      ->add_option("endpoint", to, "host:port of the member to lead")
      ->required();
  leader->add_subcommand("yield", "the leader hands leadership to another voter (ydld)")->callback([&] {
    auto ms = look_at_all(o);
    const MemberView* l = find_leader(ms);
    if (!l) {
      std::fprintf(stderr, "no leader among the endpoints\n");
      status = 1;
      return;
    }
    status = word_command(parse_endpoints(l->endpoint)[0], "ydld", "Sent", o);
  });

  auto* snapshot = app.add_subcommand("snapshot", "snapshots");
  snapshot->require_subcommand(1);
  std::string at;
  snapshot->add_subcommand("take", "snapshot now (csnp): the leader, or the member given")
      ->callback([&] {
        std::string target = at;
        if (target.empty()) {
          auto ms = look_at_all(o);
          if (const MemberView* l = find_leader(ms)) target = l->endpoint;
        }
        if (target.empty()) {
          std::fprintf(stderr, "no leader among the endpoints\n");
          status = 1;
          return;
        }
        status = word_command(parse_endpoints(target)[0], "csnp", "", o);
      })
      ->add_option("endpoint", at, "host:port");
  snapshot->add_subcommand("list", "each member's latest snapshot index")->callback([&] {
    auto ms = look_at_all(o);
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& m : ms) {
      auto it = m.log.find("last_snapshot_idx");
      if (o.json) {
        arr.push_back({{"endpoint", m.endpoint},
                       {"last_snapshot_idx", it == m.log.end() ? nlohmann::json() : nlohmann::json(it->second)}});
      } else {
        std::cout << m.endpoint << "\t" << (it == m.log.end() ? std::string("-") : std::to_string(it->second)) << "\n";
      }
    }
    if (o.json) std::cout << arr.dump(2) << "\n";
  });

  app.add_subcommand("log", "each member's log bounds (lgif)")->callback([&] {
    auto ms = look_at_all(o);
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& m : ms) {
      if (o.json) {
        arr.push_back({{"endpoint", m.endpoint}, {"log", m.log}});
        continue;
      }
      std::cout << m.endpoint << (m.log.empty() ? "\t-" : "") << "\n";
      for (const auto& [k, v] : m.log) std::cout << "  " << k << "\t" << v << "\n";
    }
    if (o.json) std::cout << arr.dump(2) << "\n";
  });

  bool follow = false;
  int interval_ms = 1000;
  auto* slow = app.add_subcommand("slow-log", "the members' recent slow requests (zkraft.slowRequestThresholdMs)");
  slow->add_flag("-f,--follow", follow, "keep polling and print new ones as they come (until killed)");
  slow->add_option("--interval-ms", interval_ms, "how often --follow polls")->capture_default_str();
  slow->callback([&] { status = slow_log(o, follow, std::max(50, interval_ms)); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return status;
}
