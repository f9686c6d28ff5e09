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
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from netns_ensemble import NetnsEnsemble, WAIT  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)


class Partition(NetnsEnsemble):
    NET = "10.203.0."

    def client(self, *ids, timeout=10.0):
        c = KazooClient(hosts=self.hosts(*ids), timeout=timeout)
        c.start(timeout=WAIT)
        return c

    def test_minority_cannot_commit_majority_can_and_heal_loses_nothing(self):
        self.wait_for_roles()
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
