#!/usr/bin/python3
"""zkraft-ctl (issue 10) against a real 3-server ensemble: member list (text and --json: one
leader, two followers, lag figures), endpoint health (exit 0, then exit 1 with a member stopped),
leader transfer to a follower and leader yield, snapshot take and list, log, and member remove /
add through reconfig with super credentials. zkraft only.

    ZKRAFT_BIN=build/server/zkraft-server ZKRAFT_CTL=build/tools/ctl/zkraft-ctl \
        /usr/bin/python3 tests/integration/test_ctl.py
"""

import json
import logging
import os
import subprocess
import sys
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


if __name__ == "__main__":
    harness.run_suite()
