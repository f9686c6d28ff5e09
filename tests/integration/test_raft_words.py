#!/usr/bin/python3
"""zkraft's four-letter words for Raft operators (issue 10; ClickHouse Keeper's names) on a real
3-server ensemble: lgif shows the log's bounds on every server, csnp takes a snapshot (lgif's
last_snapshot_idx reaches the index csnp answered), rqld on a follower makes it the leader, ydld on
the leader hands leadership to another server, and the ensemble still takes writes after both.
zkraft only: ZooKeeper has no such words.

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_raft_words.py
"""

import logging
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
WAIT = 30.0
LGIF_KEYS = ["first_log_idx", "first_log_term", "last_log_idx", "last_log_term",
             "last_committed_log_idx", "leader_committed_log_idx", "target_committed_log_idx",
             "last_snapshot_idx"]


def lgif(member):
    lines = member.four_letter("lgif").splitlines()
    pairs = [line.split("\t") for line in lines]
    return [k for k, _ in pairs], {k: int(v) for k, v in pairs}


class RaftWords(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only")
        self.ens = Ensemble(3, name="raftwords")
        self.ens.start()
        self.addCleanup(self.ens.close)
        self.assertTrue(harness.wait_until(lambda: self.ens.leader() is not None, WAIT))

    def write(self, path):
        c = KazooClient(hosts=self.ens.hosts, timeout=10.0)
        c.start(timeout=WAIT)
        try:
            c.retry(c.create, path, b"v")
        finally:
            c.stop()
            c.close()

    def test_lgif_csnp_rqld_ydld(self):
        self.write("/before")
        for m in self.ens.members:
            keys, v = lgif(m)
            self.assertEqual(keys, LGIF_KEYS)
            self.assertLessEqual(v["first_log_idx"], v["last_log_idx"] + 1)
            self.assertGreaterEqual(v["last_log_term"], 1)
            self.assertLessEqual(v["last_committed_log_idx"], v["leader_committed_log_idx"])
            self.assertLessEqual(v["last_snapshot_idx"], v["last_committed_log_idx"])

        leader = self.ens.leader()
        at = int(leader.four_letter("csnp"))
        self.assertGreater(at, 0, lgif(leader))
        self.assertTrue(harness.wait_until(lambda: lgif(leader)[1]["last_snapshot_idx"] >= at, WAIT),
                        lgif(leader))

        follower = next(m for m in self.ens.members if m is not leader)
        self.assertEqual(follower.four_letter("rqld"), "Sent leadership request to leader.")
        self.assertTrue(harness.wait_until(lambda: self.ens.mode(follower) == "leader", WAIT),
                        "rqld did not make server %s the leader" % follower.myid)
        self.write("/after-rqld")

        self.assertEqual(follower.four_letter("ydld"), "Sent yield leadership request to leader.")
        self.assertTrue(harness.wait_until(
            lambda: self.ens.mode(follower) == "follower" and self.ens.leader() not in (None, follower),
            WAIT), "ydld did not hand leadership over")
        self.write("/after-ydld")
        print("csnp answered %d; rqld moved leadership to server %d; ydld moved it to server %d"
              % (at, follower.myid, self.ens.leader().myid))


if __name__ == "__main__":
    harness.run_suite()
