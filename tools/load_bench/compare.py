#!/usr/bin/env python3
"""Side-by-side runs of zk_load against zkraft and Apache ZooKeeper on this machine.

  compare.py --zk-load BUILD/tools/load_bench/zk_load --zkraft BUILD/server/zkraft-server \
             --work DIR [--only standalone,ensemble,failover,memory] [--kinds zkraft,zookeeper]
             [--baseline OLD/zkraft-server] [--standalone-loads set:1x1,get:64x8,...]

A kind is zkraft, baseline (the --baseline binary: an older zkraft, to compare builds) or
zookeeper, optionally followed by @key=value zoo.cfg lines for that run, e.g.
--kinds zkraft@zkraft.networkThreads=1,zkraft@zkraft.networkThreads=2 (ZooKeeper ignores
zkraft.* keys). Each run also reports the servers' CPU time per operation (user + system, from
/proc, over warm-up and measurement, divided by ops/s times that span).

Every server listens on 127.0.0.1 on ports picked by binding port 0, keeps its data under DIR,
fsyncs (zkraft's default; ZooKeeper's forceSync default yes) and is stopped by the PID this script
started. Prints one line per run and appends every result as JSON to DIR/results.jsonl.
ZooKeeper runs with the heap zkServer.sh uses by default (-Xmx1000m) and the JVM's default GC.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

ZK_CLASSPATH = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"
ZK_HEAP = "-Xmx1000m"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def four_letter(port, word, timeout=1.0):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(word.encode())
            out = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                out += chunk
            return out.decode(errors="replace")
    except OSError:
        return ""


def mode(port):
    for line in four_letter(port, "srvr").splitlines():
        if line.startswith("Mode: "):
            return line[6:].strip()
    return ""


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def split_kind(kind):
    """'zkraft@a=b@c=d' -> ('zkraft', ['a=b', 'c=d'])"""
    parts = kind.split("@")
    return parts[0], parts[1:]


def cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def thread_cpu_seconds(pid):
    """{thread name: CPU seconds} of a process. zkraft names its threads zk-net-N, zk-raft and
    zk-storage; its state thread is the main thread ("main" here); unnamed helper threads (e.g.
    LevelDB's compaction) carry the program's name."""
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        if tid == str(pid):
            name = "main"  # zkraft: the state thread
        fields = stat.rsplit(")", 1)[1].split()
        out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return out


class Server:
    def __init__(self, kind, args, workdir, name, client_port, myid=None, extra=None):
        base, cfg_lines = split_kind(kind)
        zkraft_bin = args.baseline if base == "baseline" else args.zkraft
        self.kind = "zookeeper" if base == "zookeeper" else "zkraft"
        self.bin, self.port, self.myid = zkraft_bin, client_port, myid
        self.dir = os.path.join(workdir, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.data = os.path.join(self.dir, "data")
        os.makedirs(self.data)
        if myid is not None:
            with open(os.path.join(self.data, "myid"), "w") as f:
                f.write("%d\n" % myid)
        self.cfg = os.path.join(self.dir, "zoo.cfg")
        lines = ["tickTime=2000", "initLimit=10", "syncLimit=5", "dataDir=" + self.data,
                 "clientPort=%d" % client_port, "clientPortAddress=127.0.0.1", "maxClientCnxns=0",
                 "4lw.commands.whitelist=*", "admin.enableServer=false"] + list(extra or []) + cfg_lines
        with open(self.cfg, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = None

    def start(self):
        if self.kind == "zkraft":
            cmd = [self.bin, "--config", self.cfg]
        else:
            cmd = ["java", ZK_HEAP, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                   "-Dzookeeper.admin.enableServer=false", "-cp", ZK_CLASSPATH,
                   "org.apache.zookeeper.server.quorum.QuorumPeerMain" if self.myid is not None
                   else "org.apache.zookeeper.server.ZooKeeperServerMain", self.cfg]
        log = open(os.path.join(self.dir, "server.log"), "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     cwd=self.dir)
        log.close()
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        if self.running():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def stop(self):
        if self.running():
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill9()


def wait_serving(servers, need_leader, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        modes = [mode(s.port) if s.running() else "" for s in servers]
        if need_leader and "leader" in modes and all(m for s, m in zip(servers, modes) if s.running()):
            return True
        if not need_leader and modes[0] == "standalone":
            return True
        time.sleep(0.2)
    raise RuntimeError("servers did not come up: %s" % [s.dir for s in servers])


def standalone(kind, args, name):
    s = Server(kind, args, args.work, name, free_port()).start()
    wait_serving([s], need_leader=False)
    return [s]


def ensemble(kind, args, name, n=3):
    ports = [(free_port(), free_port(), free_port()) for _ in range(n)]
    lines = ["server.%d=127.0.0.1:%d:%d;127.0.0.1:%d" % (i + 1, p, e, c) for i, (c, p, e) in enumerate(ports)]
    members = [Server(kind, args, args.work, "%s-%d" % (name, i + 1), ports[i][0], myid=i + 1, extra=lines)
               for i in range(n)]
    for m in members:
        m.start()
    wait_serving(members, need_leader=True)
    return members


def hosts(servers):
    return ",".join("127.0.0.1:%d" % s.port for s in servers if s.running())


def zk_load(args, servers, extra, label, kind):
    cmd = [args.zk_load, "--json", "-s", hosts(servers)] + [str(x) for x in extra]
    la = loadavg()
    cpu_before = sum(cpu_seconds(s.proc.pid) for s in servers if s.running())
    threads_before = [thread_cpu_seconds(s.proc.pid) for s in servers if s.running()]
    t0 = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    elapsed = time.time() - t0
    cpu = sum(cpu_seconds(s.proc.pid) for s in servers if s.running()) - cpu_before
    threads_after = [thread_cpu_seconds(s.proc.pid) for s in servers if s.running()]
    if out.returncode != 0:
        raise RuntimeError("zk_load failed: %s\n%s" % (" ".join(cmd), out.stderr))
    r = json.loads(out.stdout)
    ops = r["ops_per_s"] * elapsed
    by_thread = {}
    for before, after in zip(threads_before, threads_after):
        for name, secs in after.items():
            group = "zk-net" if name.startswith("zk-net-") else name
            by_thread[group] = by_thread.get(group, 0.0) + secs - before.get(name, 0.0)
    r["thread_cpu_us_per_op"] = {n: round(v * 1e6 / ops, 2) for n, v in sorted(by_thread.items()) if ops and v > 0.05}
    r.update({"label": label, "kind": kind, "loadavg_before": la, "loadavg_after": loadavg(),
              "server_cpu_s": cpu, "server_cpu_us_per_op": cpu * 1e6 / ops if ops else None,
              "command": " ".join(cmd)})
    record(args, r)
    lat = r["latency_ms"]
    print("%-10s %-28s %9.0f ops/s  p50 %7.2f  p99 %7.2f  p999 %7.2f  max %7.2f ms  cpu/op %6.1f us  err %d  connfail %d  load %s"
          % (kind, label, r["ops_per_s"], lat["p50"], lat["p99"], lat["p999"], lat["max"],
             r["server_cpu_us_per_op"] or 0, r["error_replies"], r["connection_failures"], la), flush=True)
    if r["thread_cpu_us_per_op"] and not kind.startswith("zookeeper"):
        print("%-10s %-28s cpu us/op by thread: %s" % ("", "", "  ".join(
            "%s %.1f" % kv for kv in r["thread_cpu_us_per_op"].items())), flush=True)
    return r


def record(args, r):
    with open(os.path.join(args.work, "results.jsonl"), "a") as f:
        f.write(json.dumps(r) + "\n")


def run_standalone(args, kind):
    srv = standalone(kind, args, "standalone-" + kind)
    try:
        w, d = args.warmup, args.duration
        for load in args.standalone_loads.split(","):
            op, shape = load.split(":")
            n, k = shape.split("x")
            zk_load(args, srv, ["-o", op, "-b", 100, "-n", n, "-k", k, "-w", w, "-d", d],
                    "standalone %s %s" % (op, shape), kind)
    finally:
        for s in srv:
            s.stop()


def run_ensemble(args, kind):
    members = ensemble(kind, args, "ens-" + kind)
    try:
        w, d = args.warmup, args.duration
        for op in ("set", "create"):
            zk_load(args, members, ["-o", op, "-b", 100, "-n", 64, "-k", 1, "-w", w, "-d", d], "ensemble3 %s 64x1" % op, kind)
            zk_load(args, members, ["-o", op, "-b", 100, "-n", 64, "-k", 8, "-w", w, "-d", d], "ensemble3 %s 64x8" % op, kind)
    finally:
        for s in members:
            s.stop()


def run_failover(args, kind, runs=3):
    for run in range(1, runs + 1):
        members = ensemble(kind, args, "fo-%s-%d" % (kind, run))
        try:
            leader = next(m for m in members if mode(m.port) == "leader")
            cmd = [args.zk_load, "--json", "--failover", "-s", hosts(members), "-n", 8, "-k", 1, "-b", 100,
                   "-w", 0, "-d", args.failover_duration, "--io-timeout-ms", 2000,
                   "--timeline", os.path.join(args.work, "timeline-%s-%s-%d.txt" % (args.failover_signal, kind, run))]
            cmd = [str(x) for x in cmd]
            la = loadavg()
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(args.failover_kill_after)
            kill_us = int(time.time() * 1e6)
            if args.failover_signal == "STOP":
                leader.proc.send_signal(signal.SIGSTOP)  # frozen, sockets stay open: timeouts must notice
            else:
                leader.kill9()
            out, err = p.communicate(timeout=args.failover_duration + 120)
            r = json.loads(out)
            with open(os.path.join(args.work, "timeline-%s-%s-%d.txt" % (args.failover_signal, kind, run))) as f:
                times = [int(x) for x in f.read().split()]
            # The outage: the largest gap between successful writes that ends after the kill. (Writes
            # already committed may still be answered in the first moments after kill_us, which is
            # taken just before the signal is sent.)
            outage = max(((b - a, a, b) for a, b in zip(times, times[1:])
                          if b > kill_us and kill_us - 1e6 <= a <= kill_us + 2e5), default=(0, 0, 0))
            inside = outage[2] > 0
            r.update({"label": "failover SIG%s run %d" % (args.failover_signal, run), "kind": kind, "kill_unix_us": kill_us,
                      "outage_gap_ms": outage[0] / 1000.0, "outage_from_minus_kill_ms": (outage[1] - kill_us) / 1000.0,
                      "kill_to_first_write_ms": (outage[2] - kill_us) / 1000.0 if inside else None,
                      "new_leader": [m.myid for m in members if m.running() and mode(m.port) == "leader"],
                      "loadavg_before": la, "command": " ".join(cmd)})
            record(args, r)
            print("%-10s failover SIG%s run %d: kill->first write after the outage %s ms (outage gap %.1f ms, starts %.1f ms "
                  "after the kill stamp), largest gap of the run %.1f ms, writes %d, connfail %d, "
                  "killed server.%d, new leader %s, load %s"
                  % (kind, args.failover_signal, run, "%.1f" % r["kill_to_first_write_ms"] if inside else "n/a", r["outage_gap_ms"],
                     r["outage_from_minus_kill_ms"], r["largest_gap_ms"], r["successful_writes"],
                     r["connection_failures"], leader.myid,
                     r["new_leader"], la), flush=True)
        finally:
            for s in members:
                if args.failover_signal == "STOP":
                    s.kill9()  # a stopped process never handles SIGTERM
                s.stop()


def run_memory(args, kind, count=200000):
    srv = standalone(kind, args, "mem-" + kind)
    try:
        pid = srv[0].proc.pid
        before = rss_kib(pid)
        t0 = time.time()
        r = zk_load(args, srv, ["-o", "createseq", "-b", 100, "-n", 16, "-k", 16, "-w", 0, "-d", 600,
                                "--max-ops", count, "--root", "/mem"], "memory create %d" % count, kind)
        took = time.time() - t0
        time.sleep(2)
        after = rss_kib(pid)
        stat = four_letter(srv[0].port, "mntr")
        znodes = [l for l in stat.splitlines() if "znode_count" in l]
        heap = ""
        if kind == "zookeeper" and shutil.which("jcmd"):
            heap = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True).stdout
            print(heap.strip(), flush=True)
        rec = {"label": "memory", "kind": kind, "rss_before_kib": before, "rss_after_kib": after,
               "created_ok": r["ok"], "seconds": took, "mntr": znodes,
               "heap": ZK_HEAP if kind == "zookeeper" else None, "heap_info": heap}
        record(args, rec)
        print("%-10s memory: RSS %.1f MiB before, %.1f MiB after %d creates of 100 B (%.0f s) %s"
              % (kind, before / 1024, after / 1024, r["ok"], took, znodes), flush=True)
    finally:
        for s in srv:
            s.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zk-load", required=True)
    ap.add_argument("--zkraft", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="standalone,ensemble,failover,memory")
    ap.add_argument("--kinds", default="zkraft,zookeeper")
    ap.add_argument("--baseline", help="an older zkraft-server binary, run as kind 'baseline'")
    ap.add_argument("--standalone-loads", default="set:1x1,set:64x8,create:1x1,create:64x8,get:1x1,get:64x8",
                    help="op:SESSIONSxINFLIGHT runs of the standalone part")
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--duration", type=float, default=8)
    ap.add_argument("--failover-duration", type=float, default=15)
    ap.add_argument("--failover-kill-after", type=float, default=5)
    ap.add_argument("--failover-runs", type=int, default=3)
    ap.add_argument("--failover-signal", choices=["KILL", "STOP"], default="KILL",
                    help="KILL: kill -9 the leader; STOP: freeze it with SIGSTOP (no socket is closed)")
    args = ap.parse_args()
    # Servers run in their own directories: binaries by absolute path.
    args.zkraft = os.path.abspath(args.zkraft)
    args.zk_load = os.path.abspath(args.zk_load)
    if args.baseline:
        args.baseline = os.path.abspath(args.baseline)
    os.makedirs(args.work, exist_ok=True)
    print("loadavg at start: %s" % loadavg(), flush=True)
    for part in args.only.split(","):
        for kind in args.kinds.split(","):
            if part == "standalone":
                run_standalone(args, kind)
            elif part == "ensemble":
                run_ensemble(args, kind)
            elif part == "failover":
                run_failover(args, kind, args.failover_runs)
            elif part == "memory":
                run_memory(args, kind)
    print("loadavg at end: %s" % loadavg(), flush=True)


if __name__ == "__main__":
    sys.exit(main())
