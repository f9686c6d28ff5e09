#!/usr/bin/python3
"""zkraft-ctl (issue 10) against a real 3-server ensemble: member list (text and --json: one
leader, two followers, lag figures), endpoint health (exit 0, then exit 1 with a member stopped),
leader transfer to a follower and leader yield, snapshot take and list, log, and member remove /
add through reconfig with super credentials; and slow-log (text, --json, --follow, a member
whose whitelist refuses the `slow` word) against a server whose slow-request threshold is 1 ms.
zkraft only.

    ZKRAFT_BIN=build/server/zkraft-server ZKRAFT_CTL=build/tools/ctl/zkraft-ctl \
        /usr/bin/python3 tests/integration/test_ctl.py
"""

import json
import logging
import os
import queue
import re
import subprocess
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from ensemble import Ensemble  # noqa: E402
from test_reconfig import SUPER_DIGEST  # noqa: E402

from kazoo.client import KazooClient  # noqa: E402

logging.basicConfig(level=logging.CRITICAL)
WAIT = 30.0


def ctl_binary():
    b = os.environ.get("ZKRAFT_CTL")
    if b:
        return b
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(os.environ["ZKRAFT_BIN"]))),
                        "tools", "ctl", "zkraft-ctl")


class Ctl(unittest.TestCase):
    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only")
        self.ens = Ensemble(3, name="ctl")
        for m in self.ens.members:
            m.extra_cfg.update({"reconfigEnabled": "true",
                                "DigestAuthenticationProvider.superDigest": SUPER_DIGEST})
        self.ens.start()
        self.addCleanup(self.ens.close)
        self.assertTrue(harness.wait_until(lambda: self.ens.leader() is not None, WAIT))

    def ctl(self, *args, ok=True):
        r = subprocess.run([ctl_binary(), "--endpoints", self.ens.hosts] + list(args),
                           capture_output=True, text=True, timeout=60)
        if ok:
            self.assertEqual(r.returncode, 0, (args, r.stdout, r.stderr))
        return r

    def members(self):
        # Exit 1 while no endpoint leads (a transfer in progress): the JSON still lists them all.
        return json.loads(self.ctl("--json", "member", "list", ok=False).stdout)

    def test_member_list_health_leadership_snapshots_log_and_reconfig(self):
        c = KazooClient(hosts=self.ens.hosts, timeout=10.0)
        c.start(timeout=WAIT)
        for i in range(50):
            c.create("/n%d" % i, b"x")
        c.sync("/")
        ms = json.loads(self.ctl("--json", "member", "list").stdout)  # a leader: exit 0
        self.assertEqual(sorted(m["mode"] for m in ms), ["follower", "follower", "leader"])
        self.assertEqual(sum(m["leader"] for m in ms), 1)
        self.assertTrue(all(m["serving"] and "lag" in m and m["lag"] >= 0 for m in ms), ms)
        text = self.ctl("member", "list").stdout
        self.assertTrue(text.startswith("ENDPOINT"), text)
        self.assertEqual(len(text.splitlines()), 4, text)
        health = self.ctl("endpoint", "health").stdout
        self.assertEqual(health.count("is healthy"), 3, health)

        leader = next(m for m in ms if m["leader"])["endpoint"]
        follower = next(m for m in ms if not m["leader"])["endpoint"]
        self.ctl("leader", "transfer", follower)
        self.assertTrue(harness.wait_until(
            lambda: next((m["endpoint"] for m in self.members() if m["leader"]), None) == follower, WAIT))
        self.ctl("leader", "yield")
        self.assertTrue(harness.wait_until(
            lambda: next((m["endpoint"] for m in self.members() if m["leader"]), follower) != follower, WAIT))

        at = int(self.ctl("--json", "snapshot", "take").stdout and
                 json.loads(self.ctl("--json", "snapshot", "take").stdout)["answer"])
        self.assertGreater(at, 0)
        self.assertTrue(harness.wait_until(
            lambda: max(e["last_snapshot_idx"] or 0 for e in json.loads(self.ctl("--json", "snapshot", "list").stdout)) >= at,
            WAIT))
        log = json.loads(self.ctl("--json", "log").stdout)
        self.assertEqual(len(log), 3)
        self.assertTrue(all(e["log"]["last_log_idx"] >= 50 for e in log), log)

        # reconfig: remove server 3 (refused without credentials), then add it back
        refused = self.ctl("member", "remove", "3", ok=False)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("NOAUTH", refused.stderr)
        self.ctl("--auth", "digest:super:secret", "member", "remove", "3")
        third = self.ens.members[2]
        spec = "server.3=127.0.0.1:%s;127.0.0.1:%d" % (
            third.extra_cfg["server.3"].split(";")[0].split(":", 1)[1], third.port)
        self.assertTrue(harness.wait_until(lambda: "server.3" not in c.get("/zookeeper/config")[0].decode(), WAIT))
        self.ctl("--auth", "digest:super:secret", "member", "add", spec)
        self.assertTrue(harness.wait_until(lambda: "server.3" in c.get("/zookeeper/config")[0].decode(), WAIT))
        c.stop()
        c.close()

        # a stopped member makes health fail
        self.ens.members[0].stop()
        r = self.ctl("endpoint", "health", ok=False)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("unhealthy", r.stdout)
        print(text.rstrip())


class SlowLog(unittest.TestCase):
    """zkraft-ctl slow-log against one server with zkraft.slowRequestThresholdMs=1: ~900 KB
    setData requests (copied, logged and fsynced: well over a millisecond) are in the log with
    their op, path and stages, as text and as JSON; --follow prints the new ones as they come."""

    def setUp(self):
        if harness.target_kind() != "zkraft":
            self.skipTest("zkraft only")
        self.srv = harness.Server(name="ctl-slow", extra_cfg={"zkraft.slowRequestThresholdMs": 1}).start()
        self.addCleanup(self.srv.close)
        self.client = KazooClient(hosts=self.srv.hosts, timeout=10.0)
        self.client.start(timeout=WAIT)
        self.addCleanup(self.client.close)
        self.addCleanup(self.client.stop)
        self.client.create("/big", b"")

    def ctl(self, *args, endpoints=None):
        return subprocess.run([ctl_binary(), "--endpoints", endpoints or self.srv.hosts] + list(args),
                              capture_output=True, text=True, timeout=60)

    def big_writes(self, n):
        for i in range(n):
            self.client.set("/big", bytes([65 + i % 26]) * 900_000)

    def test_slow_log_text_json_and_follow(self):
        self.big_writes(5)
        r = self.ctl("slow-log")
        self.assertEqual(r.returncode, 0, r.stderr)
        pattern = re.compile(r"^127\.0\.0\.1:%d \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z #\d+ slow request: "
                             r"session 0x[0-9a-f]+ xid \d+ setData /big took (\d+) ms: \d+ ms to the state "
                             r"thread, \d+ ms in consensus, \d+ ms waiting to be sent$" % self.srv.port)
        lines = [l for l in r.stdout.splitlines() if pattern.match(l)]
        self.assertGreaterEqual(len(lines), 1, r.stdout)

        j = json.loads(self.ctl("--json", "slow-log").stdout)
        sets = [e for e in j if e["op"] == "setData"]
        self.assertGreaterEqual(len(sets), 1, j)
        for e in sets:
            self.assertEqual(e["path"], "/big")
            self.assertEqual(e["endpoint"], self.srv.hosts)
            self.assertGreaterEqual(e["total_ms"], 1)
            self.assertEqual(sum(e["stages_ms"].values()), e["total_ms"], e)
        seqs = [e["seq"] for e in j]
        self.assertEqual(seqs, sorted(seqs))
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))))  # none missing

        follow = subprocess.Popen([ctl_binary(), "--endpoints", self.srv.hosts, "--json", "slow-log",
                                   "--follow", "--interval-ms", "100"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(follow.wait)
        self.addCleanup(follow.kill)
        seen = queue.Queue()
        threading.Thread(target=lambda: [seen.put(json.loads(l)) for l in follow.stdout], daemon=True).start()
        first = [seen.get(timeout=WAIT) for _ in seqs]  # what is there already, once
        self.assertEqual([e["seq"] for e in first], seqs)
        self.big_writes(3)
        newer = seen.get(timeout=WAIT)
        self.assertGreater(newer["seq"], max(seqs))
        self.assertIsNotNone(newer["op"])

    def test_a_member_that_refuses_the_word_fails_the_command(self):
        other = harness.Server(name="ctl-slow-wl", extra_cfg={"4lw.commands.whitelist": "srvr"}).start()
        self.addCleanup(other.close)
        r = self.ctl("slow-log", endpoints="%s,%s" % (self.srv.hosts, other.hosts))
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("slow is not executed because it is not in the whitelist", r.stderr)


if __name__ == "__main__":
    harness.run_suite()
