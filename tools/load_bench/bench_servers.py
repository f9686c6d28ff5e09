"""Servers for the benchmarks: zkraft or Apache ZooKeeper 3.8 (Debian), standalone or a 3-server
ensemble on 127.0.0.1, ports picked by binding port 0, data under a work directory, fsync on in
both, each stopped by the PID that started it. Plus what is read from /proc (RSS, CPU seconds per
process and per thread) and the four-letter words.
"""

import os
import shutil
import signal
import socket
import subprocess
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


def rss_kib(pid, field="VmRSS"):
    """A memory figure of /proc/PID/status in KiB: VmRSS (resident now) or VmHWM (its peak)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
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

    def discard_data(self):
        """Removes the stopped server's data directory; its zoo.cfg and server.log stay."""
        self.stop()
        shutil.rmtree(self.data, ignore_errors=True)


def stop_all(servers, keep_data):
    """Stops each server and, unless keep_data, removes its data: one snapshot round of compare.py
    leaves ~1.2 GB (two ensembles of 1,000,000 znodes), and old runs filled this machine's disk."""
    for s in servers:
        s.stop()
        if not keep_data:
            s.discard_data()


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
