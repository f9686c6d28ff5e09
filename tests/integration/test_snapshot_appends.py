#!/usr/bin/python3
"""Incremental snapshots (zkraft.snapshotAppends, on by default): after the first snapshot
written whole, each snapshot is the changes since the last one appended to its file. A restart
after kill -9 restores the appended file to the same tree (data, every Stat field, child order),
appends go on after the restart, and a wiped follower is sent the appended file and ends with
the leader's tree.

zkraft only: ZooKeeper has no such snapshots (its own tests are in test_durability.py and
test_ensemble_faults.py).

    ZKRAFT_BIN=build/server/zkraft-server /usr/bin/python3 tests/integration/test_snapshot_appends.py
"""

import logging
import os
import re
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402
from faults_clients import WAIT, connect, on_each, stop  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)

APPENDED = "bytes of changes since index"


def log_of(server):
    with open(server.log_path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def whole_tree(client):
    """Every znode outside /zookeeper: its data, Stat and (for parents) child order."""
    out = {}
    stack = ["/"]
    while stack:
        path = stack.pop()
        data, st = client.get(path)
        kids = client.get_children(path)
        out[path] = (data, st.czxid, st.mzxid, st.pzxid, st.version, st.cversion, st.aversion,
                     st.ephemeralOwner, st.numChildren, tuple(kids))
        for k in kids:
            child = (path.rstrip("/") + "/" + k)
            if child != "/zookeeper":
                stack.append(child)
    return out


def churn(client, rounds, tag):
    """setData on a few hot znodes, with creates and deletes between them (so the deltas carry
    child links and unlinks, and the child order moves)."""
    futures = []
    for i in range(rounds):
        futures.append(client.set_async("/hot/k%d" % (i % 8), b"%s-%d" % (tag.encode(), i)))
        if i % 10 == 0:
            futures.append(client.create_async("/hot/c%s%d" % (tag, i), b"x" * (i % 50)))
        if i % 30 == 15:
            futures.append(client.delete_async("/hot/c%s%d" % (tag, i - 15)))
        if len(futures) >= 200:
            for f in futures:
                f.get(timeout=WAIT)
            futures = []
    for f in futures:
        f.get(timeout=WAIT)


def base_tree(client):
    client.create("/hot")
    for i in range(8):
        client.create("/hot/k%d" % i, b"start")
    client.create("/big")
    # 2,000 x 200 B: the churn's appends stay below half of the snapshot written whole.
    futures = [client.create_async("/big/n%04d" % i, b"v" * 200) for i in range(2000)]
    for f in futures:
        f.get(timeout=WAIT)


class SnapshotAppends(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only")

    def test_1_kill9_restart_restores_the_appended_snapshot(self):
        with harness.Server(name="appends", extra_cfg={"snapCount": 100}) as srv:
            c = connect(srv.hosts)
            try:
                base_tree(c)
                churn(c, 1500, "a")
                before = whole_tree(c)
            finally:
                stop(c)
            appended = log_of(srv).count(APPENDED)
            self.assertGreaterEqual(appended, 5, "snapshots appended before the kill: %d" % appended)
            srv.kill9()
            srv.start(timeout=60)
            c = connect(srv.hosts)
            try:
                self.assertEqual(whole_tree(c), before)
                churn(c, 800, "b")
                after = whole_tree(c)
            finally:
                stop(c)
            # The restored snapshot is the base of the next: the first after the restart appends.
            since_restart = log_of(srv).split("===== start")[-1]
            first = re.search(r"snapshot at index \d+: [^\n]*", since_restart)
            self.assertIsNotNone(first, "no snapshot after the restart")
            self.assertIn(APPENDED, first.group(0))
            srv.stop()
            srv.start(timeout=60)
            c = connect(srv.hosts)
            try:
                self.assertEqual(whole_tree(c), after)
            finally:
                stop(c)

    def test_2_a_wiped_follower_is_sent_the_appended_snapshot(self):
        ens = Ensemble(3, name="appends-ens-")
        for m in ens.members:
            m.extra_cfg["snapCount"] = 100
        with ens.start():
            victim = [m for m in ens.members if ens.mode(m) == "follower"][0]
            others = [m for m in ens.members if m is not victim]
            c = connect(",".join(m.hosts for m in others), timeout=20.0)
            try:
                base_tree(c)
                churn(c, 300, "a")
                victim.kill9()
                # Wiped but for myid: only a snapshot can bring it back.
                for name in os.listdir(victim.data_dir):
                    if name != "myid":
                        p = os.path.join(victim.data_dir, name)
                        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
                churn(c, 1500, "b")
            finally:
                stop(c)
            self.assertTrue(any(log_of(m).count(APPENDED) >= 5 for m in others),
                            "the members that stayed did not append snapshots")
            victim.start(timeout=60)
            trees = on_each(ens.members, whole_tree)
            self.assertEqual(len(trees), 3)
            names = sorted(trees)
            for name in names[1:]:
                self.assertEqual(trees[name], trees[names[0]], "%s and %s differ" % (name, names[0]))
            installed = re.findall(r"installed snapshot at index (\d+)", log_of(victim))
            self.assertTrue(installed, "the wiped follower caught up without a snapshot")
            # What it was sent was an appended file.
            appended_at = set()
            for m in others:
                appended_at.update(re.findall(r"snapshot at index (\d+): appended", log_of(m)))
            self.assertIn(installed[0], appended_at)


if __name__ == "__main__":
    harness.run_suite()
