// tree_memory_bench: heap bytes per znode of zkraft::tree::ZnodeTree.
//
// Creates N znodes (default 1,000,000) with D bytes of data each (default 10) and short names,
// and reports the growth of what the tree holds, divided by N: glibc's in-use heap (mallinfo2
// uordblks + hblkhd) less the tree's BlockPool slabs, plus the pool's blocks in use
// (tree/block_pool.h). Two shapes: all nodes under one parent, and 1000 parents with N/1000
// children each; then the first again with the names a sequential create gives
// ("/mem/c-0000000042", 17 bytes: past std::string's 15 inline bytes).
// Built in CI, run by hand:
//   tree_memory_bench [N [D]]
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "server/forked_snapshot.h"
#include "tree/block_pool.h"
#include "tree/znode_tree.h"

namespace {

using zkraft::tree::TxnContext;
using zkraft::tree::WatchTrigger;
using zkraft::tree::ZnodeTree;

// Small blocks (uordblks) plus large mmap-ed ones (hblkhd), with the pool's slabs (taken from
// malloc) counted by the blocks in use in them: freed pool blocks of an earlier shape's tree are
// reused by the next one.
size_t heap_in_use() {
  struct mallinfo2 m = mallinfo2();
  auto pool = zkraft::tree::BlockPool::tree().stats();
  return m.uordblks + m.hblkhd - static_cast<size_t>(pool.slab_bytes) + static_cast<size_t>(pool.pooled_bytes);
}

void run(const char* label, long n, long parents, size_t data_bytes, const char* parent_fmt = "/b",
         const char* child_fmt = "/n%07ld") {
  const std::vector<zkraft::jute::ACL> open{{zkraft::jute::perms::kAll, {"world", "anyone"}}};
  const zkraft::jute::Buffer data{std::string(data_bytes, 'd'), false};
  std::vector<WatchTrigger> out;
  std::string created;
  int64_t zxid = 0;
  auto next = [&] {
    TxnContext c;
    c.zxid = ++zxid;
    c.time_ms = 1700000000000 + zxid;
    return c;
  };

  size_t before = heap_in_use();
  auto t0 = std::chrono::steady_clock::now();
  {
    ZnodeTree tree;
    long per_parent = n / parents;
    char name[64];
    for (long p = 0; p < parents; ++p) {
      std::snprintf(name, sizeof name, parents == 1 ? parent_fmt : "/b%ld", p);
      std::string parent = name;
      tree.create(next(), parent, data, open, 0, -1, created, nullptr, out);
      for (long i = 0; i < per_parent; ++i) {
        std::snprintf(name, sizeof name, child_fmt, i);
        tree.create(next(), parent + name, data, open, 0, -1, created, nullptr, out);
        out.clear();
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    size_t after = heap_in_use();
    double secs = std::chrono::duration<double>(t1 - t0).count();
    std::printf("%s: %zu znodes, %.1f bytes/znode (heap +%zu bytes), %.0f creates/s\n", label,
                tree.node_count() - 1, double(after - before) / double(tree.node_count() - 1),
                after - before, double(n + parents) / secs);

    // Snapshot costs at this size (the apply thread would pay them).
    auto s0 = std::chrono::steady_clock::now();
    zkraft::jute::Writer w;
    tree.serialize(w);
    auto s1 = std::chrono::steady_clock::now();
    ZnodeTree loaded;
    zkraft::jute::Reader r(w.bytes());
    bool ok = loaded.deserialize(r);
    auto s2 = std::chrono::steady_clock::now();
    uint64_t d1 = tree.digest();
    auto s3 = std::chrono::steady_clock::now();
    bool same = ok && loaded.digest() == d1;
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::printf("  snapshot %zu bytes: serialize %.0f ms, deserialize %.0f ms, digest %.0f ms, round trip %s\n",
                w.size(), ms(s0, s1), ms(s1, s2), ms(s2, s3), same ? "equal" : "DIFFERENT");
    // What the server's snapshot child does: 1 MiB pieces, each handed on (here: counted).
    size_t piece_total = 0;
    zkraft::jute::Writer pw;
    auto p0 = std::chrono::steady_clock::now();
    tree.serialize_in_pieces(pw, size_t{1} << 20, [&](std::string_view piece) {
      piece_total += piece.size();
      return true;
    });
    piece_total += pw.size();
    auto p1 = std::chrono::steady_clock::now();
    std::printf("  in 1 MiB pieces: %zu bytes in %.0f ms\n", piece_total, ms(p0, p1));
    // The live snapshot (no fork): the walk that fixes the order, then steps of 4096 records
    // on the thread that owns the tree, with no writes between them here.
    size_t live_total = 0;
    double longest_step = 0;
    zkraft::jute::Writer lw;
    auto l0 = std::chrono::steady_clock::now();
    zkraft::tree::LiveSnapshotCheck check = tree.begin_live_snapshot(lw);
    auto l1 = std::chrono::steady_clock::now();
    // Each piece then goes through the check, as the server's file thread does; timed apart.
    double records_ms = 0, check_ms = 0;
    bool parsed = true;
    for (bool done = false; !done;) {
      auto a = std::chrono::steady_clock::now();
      done = tree.continue_live_snapshot(lw, 4096);
      auto b = std::chrono::steady_clock::now();
      records_ms += ms(a, b);
      longest_step = std::max(longest_step, ms(a, b));
      if (lw.size() >= (size_t{1} << 20) || done) {
        live_total += lw.size();
        parsed = parsed && check.add(lw.bytes());
        lw.clear();
        check_ms += ms(b, std::chrono::steady_clock::now());
      }
    }
    std::printf("  live snapshot: %zu bytes%s; start %.1f ms, records %.0f ms, longest step of 4096 %.2f ms; "
                "check (file thread) %.0f ms, %s\n",
                live_total, live_total == piece_total ? "" : " (DIFFERENT SIZE)", ms(l0, l1), records_ms,
                longest_step, check_ms, parsed && check.holds_the_start() ? "holds" : "FAILED");

    // The server serialises in a forked child (server/forked_snapshot.h): the state thread
    // pauses only for fork(); the child's serialisation and the transfer run beside it.
    std::promise<size_t> got;
    std::string error;
    auto f0 = std::chrono::steady_clock::now();
    auto child = zkraft::server::ForkedSnapshot::start(
        [&] {
          zkraft::jute::Writer cw;
          tree.serialize(cw);
          return cw.take();
        },
        [&](std::optional<std::string> b) { got.set_value(b ? b->size() : 0); }, &error);
    auto f1 = std::chrono::steady_clock::now();
    size_t forked_bytes = child ? got.get_future().get() : 0;
    auto f2 = std::chrono::steady_clock::now();
    std::printf("  forked snapshot: state thread paused %.1f ms (fork), %zu bytes after %.0f ms%s\n",
                ms(f0, f1), forked_bytes, ms(f0, f2), child ? "" : (" FAILED: " + error).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  size_t data_bytes = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10;
  run("flat (1 parent)", n, 1, data_bytes);
  run("spread (1000 parents)", n, 1000, data_bytes);
  run("flat, sequential names", n, 1, data_bytes, "/mem", "/c-%010ld");
  return 0;
}
