#!/usr/bin/python3
"""A server cut off from its quorum must not keep its clients believing they are connected
(issue 11). Three zkraft servers in network namespaces (netns_ensemble.py); a Kazoo client and a
ZooKeeper Java client, each with a 6 s session and an ephemeral node, connect to one server only;
the test then cuts that server off from the other two (a follower in one case, the leader in the
other) while the clients still reach it. It checks, on CLOCK_MONOTONIC (Python's time.monotonic,
Java's System.nanoTime):
  - both clients see Disconnected within their read timeout (2/3 of the session timeout);
  - the majority expires both sessions (the ephemerals vanish) only after that;
  - no read that the cut-off server answered completed after the majority's expiry.
zkraft only: ZooKeeper 3.8 gives no such bound (a follower closes its clients when it stops
hearing its leader, after syncLimit x tickTime, which may exceed a client's read timeout), so the
test encodes zkraft's promise, not a ZooKeeper behaviour to compare against.

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_quorum_contact.py
"""

import logging
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from netns_ensemble import NetnsEnsemble, WAIT  # noqa: E402
from test_java import COMPILE_CP, RUN_CP_EXTRA, compile_java_mains  # noqa: E402

from kazoo.client import KazooClient, KazooState  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

SESSION_S = 6.0
READ_TIMEOUT_S = SESSION_S * 2 / 3


class JavaClient:
    """CutOffClient.java in a JVM; its lines parsed as they come."""

    def __init__(self, classes_dir, hosts, path):
        cp = ":".join([classes_dir, COMPILE_CP, RUN_CP_EXTRA])
        self.proc = subprocess.Popen(["java", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                      "-cp", cp, "CutOffClient", hosts, path, str(int(SESSION_S * 1000))],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.lines, self.reads, self.states = [], [], []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "READY":
                self.ready.set()
            elif parts[0] == "READ_OK":
                self.reads.append(int(parts[1]) / 1000.0)
            elif parts[0] == "STATE" and len(parts) == 3:
                self.states.append((parts[1], int(parts[2]) / 1000.0))

    def first(self, state, after):
        return next((t for s, t in list(self.states) if s == state and t >= after), None)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class KazooReader:
    """A Kazoo client that reads its ephemeral every 100 ms and notes when reads succeed."""

    def __init__(self, hosts, path):
        self.client = KazooClient(hosts=hosts, timeout=SESSION_S)
        self.states, self.reads = [], []
        self.client.add_listener(lambda s: self.states.append((s, time.monotonic())))
        self.client.start(timeout=WAIT)
        self.client.create(path, b"", ephemeral=True)
        self.path = path
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stopping.is_set():
            try:
                if self.client.exists_async(self.path).get(timeout=1.0) is not None:
                    self.reads.append(time.monotonic())
            except Exception:
                pass  # ConnectionLoss and friends while cut off
            self.stopping.wait(0.1)

    def first(self, state, after):
        return next((t for s, t in list(self.states) if s == state and t >= after), None)

    def stop(self):
        self.stopping.set()
        self.thread.join(5)
        self.client.stop()
        self.client.close()


class QuorumContact(NetnsEnsemble):
    NET = "10.204.0."
    classes_dir = None

    @classmethod
    def setUpClass(cls):
        if harness.target_kind() == "zkraft":
            cls.classes_dir = compile_java_mains()

    def cut_off_and_check(self, target):
        others = [i for i in self.SERVERS if i != target]
        java = JavaClient(self.classes_dir, self.hosts(target), "/java-lock")
        self.addCleanup(java.stop)
        self.assertTrue(java.ready.wait(WAIT), "".join(java.lines))
        kazoo = KazooReader(self.hosts(target), "/kazoo-lock")
        self.addCleanup(kazoo.stop)
        time.sleep(1.0)  # both reading
        self.assertTrue(kazoo.reads and java.reads, "no reads before the cut")

        t_cut = time.monotonic()
        self.isolate(target)
        self.addCleanup(self.isolate, target, False)
        self.assertTrue(harness.wait_until(
            lambda: kazoo.first(KazooState.SUSPENDED, t_cut) and java.first("Disconnected", t_cut), WAIT),
            "clients still connected: kazoo %s, java %s" % (kazoo.states, java.states))
        kazoo_gone = kazoo.first(KazooState.SUSPENDED, t_cut) - t_cut
        java_gone = java.first("Disconnected", t_cut) - t_cut

        # The majority side: both sessions expire there, and their ephemerals go.
        watcher = KazooClient(hosts=self.hosts(*others), timeout=10.0)
        watcher.start(timeout=WAIT)
        self.addCleanup(watcher.close)
        self.addCleanup(watcher.stop)
        self.assertTrue(harness.wait_until(
            lambda: watcher.exists("/java-lock") is None and watcher.exists("/kazoo-lock") is None,
            WAIT, interval=0.05), "the majority did not expire the sessions")
        t_expired = time.monotonic()
        time.sleep(1.0)  # any read still answered by the cut-off server would show up now
        print("server %d cut off: kazoo disconnected after %.2f s, java after %.2f s, majority "
              "expired the sessions after %.2f s; last reads %.2f s (kazoo) and %.2f s (java) "
              "after the cut" % (target, kazoo_gone, java_gone, t_expired - t_cut,
                                 max(kazoo.reads) - t_cut, max(java.reads) - t_cut))
        self.assertLess(kazoo_gone, READ_TIMEOUT_S)
        self.assertLess(java_gone, READ_TIMEOUT_S)
        self.assertGreater(t_expired - t_cut, max(kazoo_gone, java_gone))
        self.assertEqual([t - t_cut for t in kazoo.reads if t >= t_expired], [])
        self.assertEqual([t - t_cut for t in java.reads if t >= t_expired], [])
        # The cut-off server refuses sessions and says it is not serving.
        self.assertIn("not currently serving", self.word(target, "srvr"))

    def test_isolated_follower_disconnects_its_clients_before_the_majority_expires_them(self):
        self.wait_for_roles()
        follower = next(i for i in self.SERVERS if self.mode(i) == "follower")
        self.cut_off_and_check(follower)

    def test_isolated_leader_disconnects_its_clients_before_the_majority_expires_them(self):
        self.wait_for_roles()
        self.cut_off_and_check(self.leader())


if __name__ == "__main__":
    harness.run_suite()
