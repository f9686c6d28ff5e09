#!/usr/bin/env python3
"""Catch-up benchmark (issue 8: "the snapshot bytes are never held in memory whole").

Starts a 3-server zkraft ensemble, stops one follower, fills the other two with --znodes
sequential znodes of 100 B (zk_load createseq, as restart_bench.py; the leader snapshots every
snapCount entries and compacts its log behind them), wipes the stopped follower's data directory
and starts it again: with nothing on disk and the leader's log compacted, only the leader's
snapshot can bring it back. Every 20 ms it reads /proc/PID/status of the returning follower and of
the leader until the follower's `srvr` counts as many nodes as the leader's, and prints for each
the peak of RssAnon (the heap and other private memory: where a snapshot held whole would show)
and of RssFile (file pages mapped: a mapped snapshot file, which the kernel may drop at any
time), from the follower's start until 2 s after it caught up, and the catch-up time.

  catchup_bench.py --zkraft build/server/zkraft-server --zk-load build/tools/load_bench/zk_load \
      --work /tmp/cb [--znodes 1000000]
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_servers import ensemble, four_letter, hosts, loadavg, mode  # noqa: E402


def status_kib(pid):
    """{field: kB} of /proc/PID/status for the memory fields, {} if the process is gone."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                name, _, value = line.partition(":")
                if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    out[name] = int(value.split()[0])
    except OSError:
        pass
    return out


def node_count(port):
    for line in four_letter(port, "srvr", timeout=0.5).splitlines():
        if line.startswith("Node count:"):
            return int(line.split(":")[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zkraft", default="build/server/zkraft-server")
    ap.add_argument("--zk-load", dest="zk_load", default="build/tools/load_bench/zk_load")
    ap.add_argument("--work", default="/tmp/catchup_bench")
    ap.add_argument("--znodes", type=int, default=1000000)
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    # Server() runs the binaries from its own directory: relative paths would not resolve there.
    args.zkraft, args.zk_load = os.path.abspath(args.zkraft), os.path.abspath(args.zk_load)
    args.baseline = args.zkraft
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    members = ensemble("zkraft", args, "catchup")
    try:
        leader = next(m for m in members if mode(m.port) == "leader")
        back = next(m for m in members if m is not leader)
        back.stop()
        t0 = time.time()
        cmd = [args.zk_load, "--json", "-s", hosts(members), "-o", "createseq", "-b", "100", "-n", "16",
               "-k", "16", "-w", "0", "-d", "900", "--max-ops", str(args.znodes), "--root", "/mem"]
        subprocess.run(cmd, check=True, capture_output=True, timeout=1200)
        want = node_count(leader.port)
        print("filled %d znodes in %.1f s (leader's node count %s)" % (args.znodes, time.time() - t0, want),
              flush=True)
        time.sleep(5)  # the last snapshot stored, its log compacted
        myid = open(os.path.join(back.data, "myid")).read()
        shutil.rmtree(back.data)
        os.makedirs(back.data)
        with open(os.path.join(back.data, "myid"), "w") as f:
            f.write(myid)
        la = loadavg()
        peaks = {"back": {}, "leader": {}}
        started = time.time()
        back.start()
        first = {"back": {}, "leader": status_kib(leader.proc.pid)}
        caught_up, end = None, started + args.timeout
        while time.time() < end:
            for name, m in (("back", back), ("leader", leader)):
                for k, v in status_kib(m.proc.pid).items():
                    peaks[name][k] = max(peaks[name].get(k, 0), v)
            if caught_up is None and node_count(back.port) == want:
                caught_up = time.time() - started
                end = time.time() + 2  # and the log after the snapshot replayed
            time.sleep(0.02)
        if caught_up is None:
            raise RuntimeError("the wiped follower did not catch up within %d s" % args.timeout)
        after = {"back": status_kib(back.proc.pid), "leader": status_kib(leader.proc.pid)}
        print("caught up in %.2f s (load %s)" % (caught_up, la))
        for name in ("back", "leader"):
            p, a = peaks[name], after[name]
            print("%-6s RssAnon before %7.1f MiB, peak %7.1f MiB, 2 s after %7.1f MiB; RssFile peak %7.1f MiB, "
                  "after %7.1f MiB" % (name, first[name].get("RssAnon", 0) / 1024, p["RssAnon"] / 1024,
                                       a.get("RssAnon", 0) / 1024, p["RssFile"] / 1024,
                                       a.get("RssFile", 0) / 1024))
        with open(os.path.join(back.dir, "server.log"), errors="replace") as f:
            for line in f:
                if "installed snapshot" in line or "read the snapshot" in line:
                    print("  back:  " + line.rstrip())
        with open(os.path.join(leader.dir, "server.log"), errors="replace") as f:
            for line in f:
                if "back to send it" in line:
                    print("  leader: " + line.rstrip())
    finally:
        for m in members:
            m.stop()


if __name__ == "__main__":
    main()
