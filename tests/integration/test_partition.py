#!/usr/bin/python3
"""A real network partition: three zkraft servers, each in a network namespace this test creates
(veth pairs on a bridge; netns addresses 10.203.0.1-3, the test's clients on the bridge's .254). Blackhole
routes cut server 3 off from 1 and 2 while clients still reach every server. The majority side
keeps committing; the minority server cannot commit a write; after the partition heals, server 3
catches up and no acknowledged write is lost. Everything created is removed at the end.

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_partition.py

Needs root (ip netns); skipped, and reported as skipped, where namespaces cannot be made.
"""

import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

PREFIX = "zkp%d" % os.getpid()  # names unique to this run
BRIDGE = PREFIX + "br"
NET = "10.203.0."
HOST_IP = NET + "254"
CLIENT_PORT, PEER_PORT, ELECTION_PORT = 2181, 2888, 3888
WAIT = 30.0


def sh(*args, check=True):
    return subprocess.run(list(args), check=check, capture_output=True, text=True)


def ns(i):
    return "%s-%d" % (PREFIX, i)


class Partition(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only (the servers run inside namespaces)")
        self.made_ns, self.procs, self.tmp = [], {}, tempfile.mkdtemp(prefix="zkit-partition-")
        try:
            sh("ip", "link", "add", BRIDGE, "type", "bridge")
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            self.skipTest("cannot create network devices here: %s" % getattr(e, "stderr", e))
        self.addCleanup(self.teardown_net)
        sh("ip", "addr", "add", HOST_IP + "/24", "dev", BRIDGE)
        sh("ip", "link", "set", BRIDGE, "up")
        for i in (1, 2, 3):
            sh("ip", "netns", "add", ns(i))
            self.made_ns.append(ns(i))
            host_end, ns_end = "%sh%d" % (PREFIX, i), "%sn%d" % (PREFIX, i)
            sh("ip", "link", "add", host_end, "type", "veth", "peer", "name", ns_end)
            sh("ip", "link", "set", host_end, "master", BRIDGE)
            sh("ip", "link", "set", host_end, "up")
            sh("ip", "link", "set", ns_end, "netns", ns(i))
            sh("ip", "-n", ns(i), "addr", "add", NET + "%d/24" % i, "dev", ns_end)
            sh("ip", "-n", ns(i), "link", "set", ns_end, "up")
            sh("ip", "-n", ns(i), "link", "set", "lo", "up")
        for i in (1, 2, 3):
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
            f.write("dataDir=%s\nclientPort=%d\nclientPortAddress=%s%d\n" % (data, CLIENT_PORT, NET, i))
            for j in (1, 2, 3):
                f.write("server.%d=%s%d:%d:%d;%s%d:%d\n" % (j, NET, j, PEER_PORT, ELECTION_PORT, NET, j, CLIENT_PORT))
        log = open(os.path.join(self.tmp, "server%d.log" % i), "a")
        self.procs[i] = subprocess.Popen(["ip", "netns", "exec", ns(i), os.environ["ZKRAFT_BIN"],
                                          "--config", cfg], stdout=log, stderr=subprocess.STDOUT)

    def teardown_net(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait(10)
        for n in self.made_ns:
            sh("ip", "netns", "del", n, check=False)
        sh("ip", "link", "del", BRIDGE, check=False)
        if self._outcome.success if hasattr(self, "_outcome") else True:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            for i in (1, 2, 3):
                print(open(os.path.join(self.tmp, "server%d.log" % i)).read()[-3000:])

    def cut(self, a, b, down=True):
        verb = "add" if down else "del"
        sh("ip", "-n", ns(a), "route", verb, "blackhole", NET + "%d/32" % b, check=down)
        sh("ip", "-n", ns(b), "route", verb, "blackhole", NET + "%d/32" % a, check=down)

    def hosts(self, *ids):
        return ",".join("%s%d:%d" % (NET, i, CLIENT_PORT) for i in ids)

    def mode(self, i):
        answer = harness.four_letter_word(NET + str(i), CLIENT_PORT, "srvr", timeout=2.0)
        for line in answer.splitlines():
            if line.startswith("Mode: "):
                return line[6:].strip()
        return ""

    def client(self, *ids, timeout=10.0):
        c = KazooClient(hosts=self.hosts(*ids), timeout=timeout)
        c.start(timeout=WAIT)
        return c

    def test_minority_cannot_commit_majority_can_and_heal_loses_nothing(self):
        self.assertTrue(harness.wait_until(lambda: sorted(self.mode(i) for i in (1, 2, 3)) ==
                                           ["follower", "follower", "leader"], WAIT),
                        [self.mode(i) for i in (1, 2, 3)])
        c = self.client(1, 2, 3)
        c.create("/before", b"1")
        c.stop()
        c.close()
        # make server 3 the minority even if it leads now: the majority elects a new leader
        self.cut(3, 1)
        self.cut(3, 2)
        self.assertTrue(harness.wait_until(lambda: "leader" in (self.mode(1), self.mode(2)), WAIT),
                        "the majority side did not elect a leader")
        majority = self.client(1, 2)
        acked = []
        for n in range(50):
            majority.create("/majority-%02d" % n, b"m")
            acked.append("/majority-%02d" % n)
        # the minority server cannot commit: its write never succeeds
        minority_write_ok = False
        try:
            m = self.client(3, timeout=4.0)
            try:
                m.create_async("/minority", b"x").get(timeout=8)
                minority_write_ok = True
            except Exception:
                pass
            finally:
                m.stop()
                m.close()
        except Exception:
            pass  # refusing the session altogether is also right: it has no leader
        self.assertFalse(minority_write_ok, "a write on the minority side was acknowledged")
        self.assertIsNone(majority.exists("/minority"))
        # heal: server 3 rejoins, catches up, and everything acknowledged is everywhere
        self.cut(3, 1, down=False)
        self.cut(3, 2, down=False)
        self.assertTrue(harness.wait_until(lambda: self.mode(3) in ("follower", "leader"), WAIT),
                        "server 3 did not rejoin")
        majority.create("/after", b"2")
        majority.stop()
        majority.close()
        for i in (1, 2, 3):
            c = self.client(i)
            c.sync("/")
            children = set(c.get_children("/"))
            for path in ["/before", "/after"] + acked:
                self.assertIn(path[1:], children, "server %d misses %s" % (i, path))
            self.assertNotIn("minority", children)
            c.stop()
            c.close()


if __name__ == "__main__":
    harness.run_suite()
