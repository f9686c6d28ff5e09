"""A 3- or 5-server zkraft ensemble for the chaos driver, each server in a network namespace of
its own, and the faults that can be done to it.

Network: a hub namespace holds a bridge (NET.254/24) and the host ends of one veth pair per
server; server i's end sits in its own namespace with NET.i/24. NET is a /24 in 127.0.0.0/8
chosen from the driver's PID, so concurrent runs do not meet; route_localnet lets loopback-range
addresses travel over veth. No namespace has a default route. The driver enters the hub
namespace (setns on its own thread: every socket it opens, and every worker it starts, is there);
the host's own network is never touched. Partitions are blackhole routes between server
addresses inside the server namespaces (tests/integration/netns_ensemble.py does the same), so
clients still reach every server.

Disk: each server's dataDir is a small tmpfs of its own (DISK_MB), so "disk full" is a filler
file and nothing outside is at risk.

Invariants: every process started here is recorded and stopped by PID in close(); close()
unmounts every tmpfs and deletes every namespace it made (deleting the hub deletes the bridge
and the veths); close() is safe to call twice and after a partial setup.
"""

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import harness  # noqa: E402
from netns_ensemble import CLIENT_PORT, ELECTION_PORT, PEER_PORT, sh  # noqa: E402

CLONE_NEWNET = 0x40000000
DISK_MB = 48


def enter_netns(name):
    """Move the calling thread (and the threads and children it starts later) into a namespace."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    fd = os.open("/run/netns/%s" % name, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns %s" % name)
    finally:
        os.close(fd)


class Cluster:
    """The servers, their namespaces and the fault primitives (no schedule: nemesis.py)."""

    def __init__(self, n, workdir, binary, split_brain=False):
        assert n in (3, 5)
        self.n, self.workdir, self.binary = n, workdir, binary
        # split_brain: n standalone servers that know nothing of each other, offered to the
        # clients as one ensemble: a deliberately broken "ensemble" the checkers must object to.
        self.split_brain = split_brain
        self.ids = list(range(1, n + 1))
        pid = os.getpid()
        self.net = "127.%d.%d." % (64 + (pid >> 8) % 128, pid % 256)
        self.prefix = "zc%d" % pid
        self.hub = self.prefix + "hub"
        self.made_ns, self.mounts, self.procs = [], [], {}
        self.real_pid = {}       # server id -> the server's own PID (differs under unshare)
        self.time_offset = {}    # server id -> CLOCK_MONOTONIC offset of its time namespace
        self.cuts = set()
        self.fillers = {}
        self.home_fd = os.open("/proc/self/ns/net", os.O_RDONLY)

    # -- set-up and tear-down ---------------------------------------------------------------

    def ns(self, i):
        return "%s-%d" % (self.prefix, i)

    def data_dir(self, i):
        return os.path.join(self.workdir, "d%d" % i)

    def setup(self):
        sh("ip", "netns", "add", self.hub)
        self.made_ns.append(self.hub)
        enter_netns(self.hub)
        sh("ip", "link", "set", "lo", "up")
        br = self.prefix + "br"
        sh("ip", "link", "add", br, "type", "bridge")
        for key in ("all", "default", br):
            sh("sysctl", "-qw", "net.ipv4.conf.%s.route_localnet=1" % key)
        sh("ip", "addr", "add", self.net + "254/24", "dev", br)
        sh("ip", "link", "set", br, "up")
        for i in self.ids:
            ns = self.ns(i)
            sh("ip", "netns", "add", ns)
            self.made_ns.append(ns)
            host_end, ns_end = "%sh%d" % (self.prefix, i), "%sn%d" % (self.prefix, i)
            sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", ns_end)
            sh("ip", "link", "set", host_end, "master", br)
            sh("ip", "link", "set", host_end, "up")
            sh("ip", "link", "set", ns_end, "netns", ns)
            for key in ("all", "default", ns_end):
                sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.%s.route_localnet=1" % key)
            sh("ip", "-n", ns, "addr", "add", self.net + "%d/24" % i, "dev", ns_end)
            sh("ip", "-n", ns, "link", "set", ns_end, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            d = self.data_dir(i)
            os.makedirs(d, exist_ok=True)
            sh("mount", "-t", "tmpfs", "-o", "size=%dm" % DISK_MB, "zkchaos", d)
            self.mounts.append(d)
            self.write_myid(i)
        for i in self.ids:
            self.start(i)

    def write_myid(self, i):
        with open(os.path.join(self.data_dir(i), "myid"), "w") as f:
            f.write("%d\n" % i)

    def close(self):
        for i in list(self.procs):
            self._reap(i)
        for d in self.mounts:
            sh("umount", "-l", d, check=False)
        self.mounts = []
        # back to where we started, so `ip netns del` of the hub is not done from inside it
        ctypes.CDLL("libc.so.6", use_errno=True).setns(self.home_fd, CLONE_NEWNET)
        for ns in reversed(self.made_ns):
            sh("ip", "netns", "del", ns, check=False)
        self.made_ns = []

    # -- servers ------------------------------------------------------------------------------

    def cfg(self, i):
        path = os.path.join(self.workdir, "z%d.cfg" % i)
        with open(path, "w") as f:
            f.write("tickTime=500\ninitLimit=10\nsyncLimit=5\nminSessionTimeout=1000\n"
                    "maxSessionTimeout=60000\n4lw.commands.whitelist=*\nadmin.enableServer=false\n")
            f.write("dataDir=%s\nclientPort=%d\nclientPortAddress=%s%d\n"
                    % (self.data_dir(i), CLIENT_PORT, self.net, i))
            for j in ([] if self.split_brain else self.ids):
                f.write("server.%d=%s%d:%d:%d;%s%d:%d\n" % (j, self.net, j, PEER_PORT, ELECTION_PORT,
                                                          self.net, j, CLIENT_PORT))
        return path

    def start(self, i, clock_offset=None):
        assert i not in self.procs or self.procs[i].poll() is not None
        cmd = ["ip", "netns", "exec", self.ns(i)]
        if clock_offset:
            # A time namespace: this server's CLOCK_MONOTONIC and CLOCK_BOOTTIME run ahead of
            # everyone else's by clock_offset seconds (the realtime clock cannot be namespaced).
            cmd += ["unshare", "--time", "--fork", "--kill-child",
                    "--monotonic", str(clock_offset), "--boottime", str(clock_offset)]
        cmd += [self.binary, "--config", self.cfg(i)]
        out = open(os.path.join(self.workdir, "server%d.log" % i), "ab")
        out.write(("\n===== start at %.3f%s =====\n" % (time.monotonic(), " clock +%ss" % clock_offset
                                                        if clock_offset else "")).encode())
        out.flush()
        # killed by the kernel if the driver dies without its cleanup (harness._die_with_parent)
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                             preexec_fn=harness._die_with_parent)
        out.close()
        self.procs[i] = p
        self.real_pid[i] = p.pid
        self.time_offset[i] = clock_offset or 0
        if clock_offset:
            self.real_pid[i] = self._child_of(p.pid) or p.pid

    @staticmethod
    def _child_of(pid, timeout=3.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                    kids = f.read().split()
                if kids:
                    return int(kids[0])
            except OSError:
                return None
            time.sleep(0.02)
        return None

    def running(self, i):
        return i in self.procs and self.procs[i].poll() is None

    def signal(self, i, sig):
        if self.running(i):
            try:
                os.kill(self.real_pid[i], sig)
            except ProcessLookupError:
                pass

    def _reap(self, i):
        p = self.procs.get(i)
        if p is None:
            return
        if p.poll() is None:
            for pid in {self.real_pid[i], p.pid}:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def kill9(self, i):
        self._reap(i)

    def wipe(self, i):
        """Remove everything in the dataDir but myid (the server must be down)."""
        d = self.data_dir(i)
        for name in os.listdir(d):
            if name == "myid":
                continue
            p = os.path.join(d, name)
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)

    def fill_disk(self, i):
        path = os.path.join(self.data_dir(i), "filler")
        self.fillers[i] = path
        with open(path, "wb") as f:
            chunk = b"\0" * (1 << 20)
            try:
                while True:
                    f.write(chunk)
                    f.flush()
            except OSError:
                pass

    def free_disk(self, i):
        path = self.fillers.pop(i, None)
        if path and os.path.exists(path):
            os.remove(path)

    # -- network ------------------------------------------------------------------------------

    def _route(self, a, b, verb):
        sh("ip", "-n", self.ns(a), "route", verb, "blackhole", self.net + "%d/32" % b, check=False)

    def cut(self, pairs):
        for a, b in pairs:
            key = (min(a, b), max(a, b))
            if key in self.cuts:
                continue
            self.cuts.add(key)
            self._route(a, b, "add")
            self._route(b, a, "add")

    def heal_network(self):
        for a, b in sorted(self.cuts):
            self._route(a, b, "del")
            self._route(b, a, "del")
        self.cuts = set()

    # -- observation ---------------------------------------------------------------------------

    def hosts(self, ids=None):
        return ",".join("%s%d:%d" % (self.net, i, CLIENT_PORT) for i in (ids or self.ids))

    def mode(self, i, timeout=1.0):
        for line in harness.four_letter_word(self.net + str(i), CLIENT_PORT, "srvr", timeout).splitlines():
            if line.startswith("Mode: "):
                return line[6:].strip()
        return ""

    def leader(self):
        for i in self.ids:
            if self.running(i) and self.mode(i) == "leader":
                return i
        return None

    def healthy(self):
        modes = sorted(self.mode(i) for i in self.ids)
        if self.split_brain:
            return modes == ["standalone"] * self.n
        return modes == ["follower"] * (self.n - 1) + ["leader"]

    def wait_healthy(self, timeout):
        return harness.wait_until(self.healthy, timeout, interval=0.2)
