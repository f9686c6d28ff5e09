#!/usr/bin/python3
"""Read-only mode (issue 11), run against zkraft and against Apache ZooKeeper 3.8 started by the
test, with the same steps and checks. A 3-server ensemble with read-only mode on
(zkraft: readonlymode.enabled in zoo.cfg; ZooKeeper: -Dreadonlymode.enabled=true, plus
localSessionsEnabled=true, without which ZooKeeper's read-only server can create no session:
ZooKeeper's own ReadOnlyModeTest turns it on). Two servers are stopped; on the one left:
  - Kazoo with read_only=True connects as CONNECTED_RO, reads what was written before, and gets
    NotReadOnlyCallError for create, set and delete;
  - the C client with ZOO_READONLY reaches ZOO_READONLY_STATE, reads, and gets ZNOTREADONLY;
  - a read/write client is refused; `isro` answers "ro" and srvr's Mode is read-only.
Then the two servers return: `isro` answers "rw" and the read-only Kazoo client ends up connected
read/write and can write. (3.8 and 3.9 have the same read-only server.)

    ZKRAFT_BIN=build/server/zkraft-server C_CLIENT_BIN=build/tests/integration/c_client_test \
        /usr/bin/python3 tests/integration/test_read_only.py
"""

import logging
import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402
from kazoo.exceptions import NotReadOnlyCallError  # noqa: E402
from kazoo.protocol.states import KeeperState  # noqa: E402
from kazoo.handlers.threading import KazooTimeoutError  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
HERE = os.path.dirname(os.path.abspath(__file__))
WAIT = 40.0


def c_client_binary(tmp):
    binary = os.environ.get("C_CLIENT_BIN")
    if binary:
        return binary
    binary = os.path.join(tmp, "c_client_test")
    subprocess.run(["gcc", "-DTHREADED", "-O1", "-o", binary, os.path.join(HERE, "c_client_test.c"),
                    "-lzookeeper_mt", "-lpthread"], check=True, timeout=120)
    return binary


class ReadOnlyMode(unittest.TestCase):
    def scenario(self, kind):
        extra = {"readonlymode.enabled": "true"} if kind == "zkraft" else {"localSessionsEnabled": "true"}
        jvm = ["-Dreadonlymode.enabled=true"] if kind == "zookeeper" else []
        ens = Ensemble(3, kind=kind, name="ro-" + kind, jvm_flags=jvm)
        for m in ens.members:
            m.extra_cfg.update(extra)
        ens.start()
        self.addCleanup(ens.close)
        rw = KazooClient(hosts=ens.hosts, timeout=10.0)
        rw.start(timeout=WAIT)
        rw.create("/ro-data", b"x")
        rw.sync("/")
        rw.stop()
        rw.close()
        survivor, stopped = ens.members[0], ens.members[1:]
        for m in stopped:
            m.stop()

        self.assertTrue(harness.wait_until(lambda: survivor.four_letter("isro") == "ro", WAIT),
                        "isro: %r" % survivor.four_letter("isro"))
        srvr = survivor.four_letter("srvr")
        self.assertIn("Mode: read-only", srvr)

        ro = KazooClient(hosts=ens.hosts, timeout=6.0, read_only=True)
        ro.start(timeout=WAIT)
        self.addCleanup(ro.close)
        self.addCleanup(ro.stop)
        self.assertEqual(ro.client_state, KeeperState.CONNECTED_RO)
        self.assertEqual(ro.get("/ro-data")[0], b"x")
        with self.assertRaises(NotReadOnlyCallError):
            ro.create("/ro-write", b"y")
        with self.assertRaises(NotReadOnlyCallError):
            ro.set("/ro-data", b"z")
        with self.assertRaises(NotReadOnlyCallError):
            ro.delete("/ro-data")
        self.assertIsNone(ro.exists("/ro-write"))

        tmp = harness.make_temp_dir("zkit-ro-c-")
        r = subprocess.run([c_client_binary(tmp), survivor.hosts, "--read-only", "/ro-data"],
                           capture_output=True, text=True, timeout=90)
        print(r.stdout.rstrip())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr[-2000:])
        self.assertRegex(r.stdout, r"\d+ passed, 0 failed")

        refused = KazooClient(hosts=survivor.hosts, timeout=4.0)
        with self.assertRaises(KazooTimeoutError):
            refused.start(timeout=4.0)
        refused.stop()
        refused.close()

        for m in stopped:
            m.launch()
        for m in stopped:
            self.assertTrue(m.wait_serving(WAIT), m.log_tail(20))
        self.assertTrue(harness.wait_until(lambda: survivor.four_letter("isro") == "rw", WAIT),
                        "isro: %r" % survivor.four_letter("isro"))

        def can_write():
            if ro.client_state != KeeperState.CONNECTED:
                return False
            try:
                ro.create("/after-ro", b"w")
                return True
            except Exception:
                return False
        self.assertTrue(harness.wait_until(can_write, WAIT, interval=0.2),
                        "read-only client did not become read/write: %s" % ro.client_state)
        print("%s: read-only client served, refused writes, and became read/write" % kind)

    def test_zkraft(self):
        if not os.environ.get("ZKRAFT_BIN"):
            self.skipTest("no ZKRAFT_BIN")
        self.scenario("zkraft")

    def test_zookeeper(self):
        if not os.path.exists(harness.ZK_CLASSPATH.split(":")[0]):
            self.skipTest("no Apache ZooKeeper here")
        self.scenario("zookeeper")


if __name__ == "__main__":
    harness.run_suite()
