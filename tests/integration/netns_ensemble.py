"""Three zkraft servers, each in a network namespace the test creates (veth pairs on a bridge;
addresses NET.1-3 in the namespaces, the test's clients on the bridge's NET.254), and blackhole
routes to cut links between servers while clients still reach every server. Everything created is
removed at the end, and every server is stopped by PID.

A test case subclasses NetnsEnsemble and sets NET (a /24 of its own, in 10.0.0.0/8: the
namespaces have no default route) and, optionally, EXTRA_CFG (zoo.cfg lines). Needs root
(ip netns); skipped, and reported as skipped, where namespaces cannot be made.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import unittest

import harness

CLIENT_PORT, PEER_PORT, ELECTION_PORT = 2181, 2888, 3888
WAIT = 30.0


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


class NetnsEnsemble(unittest.TestCase):
    NET = None          # "10.203.0."
    EXTRA_CFG = ""      # more zoo.cfg lines for every server
    SERVERS = (1, 2, 3)
    runs = 0

    def ns(self, i):
        return "%s-%d" % (self.prefix, i)

    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only (the servers run inside namespaces)")
        # Names unique to this run and test (a namespace's devices go away lazily after `netns del`).
        NetnsEnsemble.runs += 1
        self.prefix = "z%s%d%s" % (self.NET.split(".")[1], os.getpid(), chr(ord("a") + NetnsEnsemble.runs % 26))
        self.bridge = self.prefix + "br"
        self.host_ip = self.NET + "254"
        self.made_ns, self.procs = [], {}
        self.tmp = tempfile.mkdtemp(prefix="zkit-netns-")
        try:
            sh("ip", "link", "add", self.bridge, "type", "bridge")
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            self.skipTest("cannot create network devices here: %s" % getattr(e, "stderr", e))
        self.addCleanup(self.teardown_net)
        sh("ip", "addr", "add", self.host_ip + "/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for i in self.SERVERS:
            sh("ip", "netns", "add", self.ns(i))
            self.made_ns.append(self.ns(i))
            host_end, ns_end = "%sh%d" % (self.prefix, i), "%sn%d" % (self.prefix, i)
            sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", ns_end)
            sh("ip", "link", "set", host_end, "master", self.bridge)
            sh("ip", "link", "set", host_end, "up")
            sh("ip", "link", "set", ns_end, "netns", self.ns(i))
            sh("ip", "-n", self.ns(i), "addr", "add", self.NET + "%d/24" % i, "dev", ns_end)
            sh("ip", "-n", self.ns(i), "link", "set", ns_end, "up")
            sh("ip", "-n", self.ns(i), "link", "set", "lo", "up")
        for i in self.SERVERS:
            self.start_server(i)

    def start_server(self, i):
        data = os.path.join(self.tmp, "d%d" % i)
        os.makedirs(data, exist_ok=True)
        with open(os.path.join(data, "myid"), "w") as f:
            f.write("%d\n" % i)
        cfg = os.path.join(self.tmp, "z%d.cfg" % i)
        with open(cfg, "w") as f:
            f.write("tickTime=500\ninitLimit=10\nsyncLimit=5\nminSessionTimeout=1000\n"
                    "maxSessionTimeout=60000\n4lw.commands.whitelist=*\n")
            f.write(self.EXTRA_CFG)
            f.write("dataDir=%s\nclientPort=%d\nclientPortAddress=%s%d\n" % (data, CLIENT_PORT, self.NET, i))
            for j in self.SERVERS:
                f.write("server.%d=%s%d:%d:%d;%s%d:%d\n" % (j, self.NET, j, PEER_PORT, ELECTION_PORT,
                                                          self.NET, j, CLIENT_PORT))
        log = open(os.path.join(self.tmp, "server%d.log" % i), "a")
        self.procs[i] = subprocess.Popen(["ip", "netns", "exec", self.ns(i), os.environ["ZKRAFT_BIN"],
                                          "--config", cfg], stdout=log, stderr=subprocess.STDOUT)

    def teardown_net(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait(10)
        for n in self.made_ns:
            sh("ip", "netns", "del", n, check=False)
        sh("ip", "link", "del", self.bridge, check=False)
        if self._outcome.success if hasattr(self, "_outcome") else True:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            for i in self.SERVERS:
                print(open(os.path.join(self.tmp, "server%d.log" % i)).read()[-3000:])

    def cut(self, a, b, down=True):
        verb = "add" if down else "del"
        sh("ip", "-n", self.ns(a), "route", verb, "blackhole", self.NET + "%d/32" % b, check=down)
        sh("ip", "-n", self.ns(b), "route", verb, "blackhole", self.NET + "%d/32" % a, check=down)

    def isolate(self, a, down=True):
        for b in self.SERVERS:
            if b != a:
                self.cut(a, b, down)

    def hosts(self, *ids):
        return ",".join("%s%d:%d" % (self.NET, i, CLIENT_PORT) for i in ids)

    def word(self, i, cmd):
        return harness.four_letter_word(self.NET + str(i), CLIENT_PORT, cmd, timeout=2.0)

    def mode(self, i):
        for line in self.word(i, "srvr").splitlines():
            if line.startswith("Mode: "):
                return line[6:].strip()
        return ""

    def wait_for_roles(self):
        self.assertTrue(harness.wait_until(lambda: sorted(self.mode(i) for i in self.SERVERS) ==
                                           ["follower"] * (len(self.SERVERS) - 1) + ["leader"], WAIT),
                        [self.mode(i) for i in self.SERVERS])

    def leader(self):
        return next(i for i in self.SERVERS if self.mode(i) == "leader")
