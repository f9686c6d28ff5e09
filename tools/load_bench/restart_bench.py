#!/usr/bin/env python3
"""Restart-to-serving benchmark (issue 8: "restart to serving 1,000,000 znodes: under 2 seconds").

Fills a standalone server once with --znodes sequential znodes of 100 B (zk_load create, as in
docs/benchmarks.md), then stops it with SIGTERM and restarts it --runs times, timing each restart
from process start until `srvr` answers with "Node count" (serving). Each phase is read from the
server log's timestamps (zkraft) so a slow restart says where its time went:

  open      process start -> "raft node N: recovered"     (LevelDB open, snapshot read and check)
  restore   -> "recovered: last zxid"                    (the state machine loads the snapshot)
  elect     -> "raft node N: leader is N"                (a sole voter campaigns at start and
                                                         leads from its first Ready)
  replay    -> "leader is now N"                         (the log after the snapshot re-applied: the
                                                         state thread sees the leader event only
                                                         after those applies)
  gate      -> "in contact with a quorum again: serving" (the serving gate opens, with the batch
                                                         that ends the replay, not before)
  answer    -> first `srvr` with "Node count"            (polled every 10 ms)

The data directory is kept under --work, so --reuse restarts a tree filled earlier (the on-disk
formats do not change between builds) and different builds can be compared on the same data.
--kind zookeeper restarts Apache ZooKeeper 3.8 instead (total only).

  restart_bench.py --zkraft build/server/zkraft-server --zk-load build/tools/load_bench/zk_load \
      --work /tmp/rb --runs 3 [--reuse]
"""
import argparse
import datetime
import os
import re
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_servers import Server, free_port, four_letter, loadavg  # noqa: E402

PHASES = [
    ("open", re.compile(r"raft node \d+: recovered")),
    ("restore", re.compile(r"recovered: last zxid")),
    ("elect", re.compile(r"raft node \d+: leader is [1-9]")),
    ("replay", re.compile(r"leader is now [1-9]")),
    ("gate", re.compile(r"in contact with a quorum again: serving")),
]
STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) ")


def node_count(port):
    for line in four_letter(port, "srvr", timeout=0.5).splitlines():
        if line.startswith("Node count:"):
            return int(line.split(":")[1])
    return None


def wait_node_count(port, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        n = node_count(port)
        if n is not None:
            return time.time(), n
        time.sleep(0.01)
    raise RuntimeError("server on port %d did not serve within %d s" % (port, timeout))


def phases_from_log(path, offset, started):
    """{phase: seconds since `started`} for the log lines written after byte `offset`."""
    with open(path, "rb") as f:
        f.seek(offset)
        text = f.read().decode(errors="replace")
    out = {}
    for line in text.splitlines():
        m = STAMP.match(line)
        if not m:
            continue
        t = datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()
        for name, pat in PHASES:
            if name not in out and pat.search(line):
                out[name] = t - started
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zkraft", default="build/server/zkraft-server")
    ap.add_argument("--zk-load", dest="zk_load", default="build/tools/load_bench/zk_load")
    ap.add_argument("--kind", default="zkraft", help="zkraft or zookeeper")
    ap.add_argument("--work", default="/tmp/restart_bench")
    ap.add_argument("--znodes", type=int, default=1000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reuse", action="store_true", help="restart the tree filled by an earlier run")
    ap.add_argument("--timeout", type=int, default=120)
    args = ap.parse_args()
    # Server() runs the binaries from its own directory: relative paths would not resolve there.
    args.zkraft, args.zk_load = os.path.abspath(args.zkraft), os.path.abspath(args.zk_load)
    args.baseline = args.zkraft
    args.work = os.path.abspath(args.work)
    name = "%s-%d" % (args.kind, args.znodes)
    marker = os.path.join(args.work, name, "filled")
    port = free_port()
    if args.reuse and os.path.exists(marker):
        # Server() wipes its directory: move the data aside, let it write a fresh zoo.cfg (with
        # this run's port), and put the data back.
        aside = os.path.join(args.work, name + ".data")
        os.rename(os.path.join(args.work, name, "data"), aside)
        s = Server(args.kind, args, args.work, name, port)
        os.rmdir(s.data)
        os.rename(aside, s.data)
        open(marker, "w").close()
    else:
        os.makedirs(args.work, exist_ok=True)
        s = Server(args.kind, args, args.work, name, port)
        s.start()
        wait_node_count(port, args.timeout)
        t0 = time.time()
        cmd = [args.zk_load, "--json", "-s", "127.0.0.1:%d" % port, "-o", "createseq", "-b", "100", "-n", "16",
               "-k", "16", "-w", "0", "-d", "600", "--max-ops", str(args.znodes), "--root", "/mem"]
        subprocess.run(cmd, check=True, capture_output=True, timeout=900)
        print("filled %d znodes in %.1f s (node count %s)" % (args.znodes, time.time() - t0, node_count(port)))
        s.stop()
        open(marker, "w").close()

    log = os.path.join(s.dir, "server.log")
    totals, rows = [], []
    for run in range(args.runs):
        offset = os.path.getsize(log) if os.path.exists(log) else 0
        la = loadavg()
        started = time.time()
        s.start()
        answered, n = wait_node_count(port, args.timeout)
        total = answered - started
        ph = phases_from_log(log, offset, started) if s.kind == "zkraft" else {}
        prev, parts = 0.0, []
        for name_, _ in PHASES:
            if name_ in ph:
                parts.append("%s %.3f" % (name_, ph[name_] - prev))
                prev = ph[name_]
        parts.append("answer %.3f" % (total - prev))
        print("run %d: total %.3f s  (%s)  %d znodes, load %s" % (run + 1, total, ", ".join(parts), n, la),
              flush=True)
        totals.append(total)
        rows.append(ph)
        s.proc.send_signal(signal.SIGTERM)
        s.proc.wait(60)
    print("restart to serving, %s, %d runs: median %.3f s, min %.3f, max %.3f" %
          (args.kind, len(totals), statistics.median(totals), min(totals), max(totals)))


if __name__ == "__main__":
    main()
