// raft_bench: throughput of zkraft's replicated log.
//
//   raft_bench cluster  — 3 (or --nodes) separate processes on loopback TCP, each with its own
//                         LevelDB log and real fsync; the elected leader runs closed-loop proposers
//                         and reports entries/s committed (applied on the leader).
//   raft_bench storage  — the storage alone: GroupCommitLog appends with N submitter threads.
//   raft_bench node     — one cluster member (spawned by `cluster`; speaks a line protocol on
//                         stdin/stdout: prints "PORT <p>", reads "PEERS id=host:port,...", prints
//                         "RESULT {json}" if it led the run, exits on stdin EOF).

#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "bench_node.h"
#include "bench_storage.h"

namespace {

using zkraft::consensus::NodeId;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

int run_node(zkraft::tools::BenchNodeConfig cfg) {
  // stdout carries the line protocol; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("node"));
  spdlog::set_level(spdlog::level::warn);
  boost::asio::io_context io;
  zkraft::tools::BenchNode node(io, cfg, [](std::string line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  });
  std::string err;
  if (!node.open(&err)) {
    std::fprintf(stderr, "node %lu: %s\n", static_cast<unsigned long>(cfg.id), err.c_str());
    return 1;
  }
  std::printf("PORT %u\n", node.port());
  std::fflush(stdout);
  std::string line;
  if (!std::getline(std::cin, line) || line.rfind("PEERS ", 0) != 0) {
    std::fprintf(stderr, "node %lu: expected a PEERS line\n", static_cast<unsigned long>(cfg.id));
    return 1;
  }
  std::map<NodeId, std::pair<std::string, uint16_t>> peers;
  for (const std::string& p : split(line.substr(6), ',')) {
    auto eq = p.find('='), colon = p.rfind(':');
    peers[std::stoull(p.substr(0, eq))] = {p.substr(eq + 1, colon - eq - 1),
                                           static_cast<uint16_t>(std::stoi(p.substr(colon + 1)))};
  }
  node.start(peers);
  // stdin EOF (the orchestrator closed its end) ends the process.
  std::thread watcher([&] {
    std::string ignored;
    while (std::getline(std::cin, ignored)) {
    }
    boost::asio::post(io, [&] {
      node.stop();
      io.stop();
    });
  });
  io.run();
  watcher.join();
  return 0;
}

struct Child {
  pid_t pid = -1;
  int in_fd = -1;   // our write end of its stdin
  FILE* out = nullptr;  // its stdout
};

Child spawn(const std::vector<std::string>& args) {
  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    close(in_pipe[0]);
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(out_pipe[1]);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  fcntl(in_pipe[1], F_SETFD, FD_CLOEXEC);
  fcntl(out_pipe[0], F_SETFD, FD_CLOEXEC);
  return Child{pid, in_pipe[1], fdopen(out_pipe[0], "r")};
}

void reap(std::vector<Child>& children) {
  for (auto& c : children) {
    if (c.in_fd >= 0) close(c.in_fd);
    c.in_fd = -1;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (auto& c : children) {
    while (c.pid > 0) {
      int status = 0;
      pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid || r < 0) {
        c.pid = -1;
      } else if (std::chrono::steady_clock::now() > deadline) {
        kill(c.pid, SIGKILL);  // only the PIDs this process started
        waitpid(c.pid, &status, 0);
        c.pid = -1;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
    if (c.out) fclose(c.out);
    c.out = nullptr;
  }
}

// One cluster run: spawn nodes, wire them, wait for the leader's RESULT line.
std::string run_cluster_once(int nodes, const std::string& dir, size_t entry_size, int proposers,
                             double warmup, double duration, bool fsync, int tick_ms) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string voters;
  for (int i = 1; i <= nodes; ++i) voters += (i > 1 ? "," : "") + std::to_string(i);
  std::vector<Child> children;
  for (int i = 1; i <= nodes; ++i) {
    std::vector<std::string> args = {"raft_bench", "node", "--id", std::to_string(i), "--voters", voters,
                                     "--dir", dir + "/node" + std::to_string(i), "--entry-size",
                                     std::to_string(entry_size), "--proposers", std::to_string(proposers),
                                     "--warmup", std::to_string(warmup), "--duration", std::to_string(duration),
                                     "--tick-ms", std::to_string(tick_ms)};
    if (!fsync) args.push_back("--no-fsync");
    children.push_back(spawn(args));
  }
  std::string peers = "PEERS ";
  for (int i = 0; i < nodes; ++i) {
    char buf[256];
    if (!fgets(buf, sizeof buf, children[i].out) || std::strncmp(buf, "PORT ", 5) != 0) {
      reap(children);
      throw std::runtime_error("node " + std::to_string(i + 1) + " did not report its port");
    }
    peers += (i > 0 ? "," : "") + std::to_string(i + 1) + "=127.0.0.1:" + std::to_string(std::atoi(buf + 5));
  }
  peers += "\n";
  for (auto& c : children) {
    if (write(c.in_fd, peers.data(), peers.size()) != static_cast<ssize_t>(peers.size())) {
      reap(children);
      throw std::runtime_error("cannot write to a node");
    }
  }
  std::string result;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(warmup + duration + 60);
  while (result.empty() && std::chrono::steady_clock::now() < deadline) {
    std::vector<pollfd> fds;
    for (auto& c : children) fds.push_back(pollfd{fileno(c.out), POLLIN, 0});
    if (poll(fds.data(), fds.size(), 500) <= 0) continue;
    for (size_t i = 0; i < fds.size() && result.empty(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[8192];
      if (!fgets(buf, sizeof buf, children[i].out)) {
        reap(children);
        throw std::runtime_error("node " + std::to_string(i + 1) + " exited early");
      }
      if (std::strncmp(buf, "RESULT ", 7) == 0) {
        result = buf + 7;
        while (!result.empty() && result.back() == '\n') result.pop_back();
      }
    }
  }
  reap(children);
  if (result.empty()) throw std::runtime_error("no result before the deadline");
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"zkraft replicated log benchmark"};
  app.require_subcommand(1);

  zkraft::tools::BenchNodeConfig ncfg;
  std::string voters = "1,2,3";
  bool no_fsync = false;
  auto* node = app.add_subcommand("node", "one cluster member (used by `cluster`)");
  node->add_option("--id", ncfg.id)->required();
  node->add_option("--voters", voters);
  node->add_option("--dir", ncfg.dir)->required();
  node->add_option("--entry-size", ncfg.entry_size);
  node->add_option("--proposers", ncfg.proposers);
  node->add_option("--warmup", ncfg.warmup_seconds);
  node->add_option("--duration", ncfg.measure_seconds);
  node->add_option("--tick-ms", ncfg.tick_ms);
  node->add_flag("--no-fsync", no_fsync);

  std::string dir = "/var/tmp/zkraft-raft-bench";
  std::string sizes = "100,1024", conc = "1,256";
  double warmup = 1, duration = 5;
  int nodes = 3, tick_ms = 20;
  auto* cluster = app.add_subcommand("cluster", "multi-process cluster over loopback TCP");
  cluster->add_option("--dir", dir, "parent of the nodes' data dirs (wiped per run)");
  cluster->add_option("--entry-sizes", sizes);
  cluster->add_option("--proposers", conc);
  cluster->add_option("--warmup", warmup);
  cluster->add_option("--duration", duration);
  cluster->add_option("--nodes", nodes);
  cluster->add_option("--tick-ms", tick_ms);
  cluster->add_flag("--no-fsync", no_fsync);

  auto* storage = app.add_subcommand("storage", "GroupCommitLog alone");
  storage->add_option("--dir", dir, "scratch dir (wiped per run)");
  storage->add_option("--entry-sizes", sizes);
  storage->add_option("--submitters", conc);
  storage->add_option("--duration", duration);
  storage->add_flag("--no-fsync", no_fsync);
  size_t write_buffer_kb = 0;
  storage->add_option("--write-buffer-kb", write_buffer_kb, "LevelDB memtable size (0: the server's default)");

  CLI11_PARSE(app, argc, argv);

  if (*node) {
    for (const auto& v : split(voters, ',')) ncfg.voters.push_back(std::stoull(v));
    ncfg.fsync = !no_fsync;
    return run_node(ncfg);
  }
  spdlog::set_level(spdlog::level::warn);
  signal(SIGPIPE, SIG_IGN);
  int failures = 0;
  for (const auto& s : split(sizes, ',')) {
    for (const auto& c : split(conc, ',')) {
      try {
        std::string r;
        if (*cluster) {
          r = run_cluster_once(nodes, dir, std::stoul(s), std::stoi(c), warmup, duration, !no_fsync, tick_ms);
        } else {
          std::filesystem::remove_all(dir);
          r = zkraft::tools::run_storage_bench(
              {dir, std::stoul(s), std::stoi(c), duration, !no_fsync, write_buffer_kb * 1024});
        }
        std::printf("%s\n", r.c_str());
        std::fflush(stdout);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "run entry_size=%s concurrency=%s failed: %s\n", s.c_str(), c.c_str(), e.what());
        ++failures;
      }
    }
  }
  std::filesystem::remove_all(dir);
  return failures == 0 ? 0 : 1;
}
